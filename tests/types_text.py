"""Hand-written ``## Types`` sections whose facts are rendered as prepare renders them.

A test writes a library's releasers and documented behaviour as a person reads them, one
bullet each (``- f releases T * (parameter type)``; ``; the library allocates it`` at the end
of the parentheses marks a releaser of what the library allocates, ``heap``; ``- f keeps its
pointer arguments``, ``- f accepts NULL for a, b``, ``- f: returns 0 on success`` under
``Documented return values:`` ...). :func:`render_types` puts in their place what
:meth:`fuzzkit.header_facts.HeaderFacts.render` writes (short lines and the facts blocks), so
the engine reads them the one way it reads a prompt.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from fuzzkit.facts_block import read_facts
from fuzzkit.header_facts import (
    CONSTANTS_KIND,
    CONSTANTS_LEGEND,
    DECLARATIONS_KIND,
    DECLARATIONS_LEGEND,
    NOTES_KIND,
    NOTES_LEGEND,
    RELEASERS_KIND,
    ConstantFacts,
    DeclarationFacts,
    Enum,
    FunctionNotes,
    HeaderFacts,
    Macro,
    Record,
    Releaser,
    ReleaserFacts,
    Typedef,
)
from fuzzkit.header_wrappers import Wrapper, call_arguments

_HEADINGS = ("Release functions:", "Arguments kept by reference", "Ownership (documentation):",
             "Valid only inside a callback", "Internal to the library", "Results the library keeps",
             "Arguments the documentation lets be NULL", "Text documented as UTF-8",
             "Calls in the header's own wrappers", "Documented return values:", "Objects the library defines",
             "Documented behaviour of functions, as data:", CONSTANTS_LEGEND, DECLARATIONS_LEGEND,
             *(f"- {key}: {legend}" for key, legend in NOTES_LEGEND.items()))
_BULLET = re.compile(r"^- (?P<fn>\w+) releases (?P<what>.+?) \((?P<why>[^)]*)\)$")
HEAP = "; the library allocates it"
# Hand-written constants inside a C fence: enums, integer macros, the comment naming a group's functions.
_ENUM = re.compile(r"^(?:enum (?P<name>\w+) \{(?P<body>.*)\};"
                   r"|typedef enum \{(?P<tbody>.*)\} (?P<tname>\w+);)$")
_DEFINE = re.compile(r"^#define (?P<name>\w+) (?P<value>-?\d+)"
                     r"(?:  /\* (?P<note>only|not for) (?P<fns>.*) \*/)?$")
_SCOPE = re.compile(r"^/\* flags of (?P<fns>.*) \*/$")
# Hand-written declarations: typedefs (of function pointers, of function types, of records and
# plain ones with their canonical type in a comment), records with their fields and documented ranges.
_FNPTR = re.compile(r"^typedef (?P<ret>.+?)\(\*\s*(?P<name>\w+)\)\s*\((?P<args>.*)\);$")
_FNTYPE = re.compile(r"^typedef (?P<ret>[^(){}]+?)\s+(?P<name>\w+)\((?P<args>.*)\);$")
_ANON = re.compile(r"^typedef (?P<kind>struct|union) \{(?P<body>.*)\} (?P<name>[A-Za-z_]\w*);$")
_TYPEDEF = re.compile(r"^typedef (?P<under>.+?)\s*\b(?P<name>[A-Za-z_]\w*);(?:\s*/\* (?P<canon>.*) \*/)?$")
_RECORD = re.compile(r"^(?P<kind>struct|union) (?P<tag>\w*)\s*(?:\{(?P<body>.*)\})?;")
_FN_FIELD = re.compile(r"\(\*\s*(\w+)\)")
_FIELD = re.compile(r"(?P<type>.*?[\s*])(?P<name>\w+)(?:\[[^\]]*\])?$")
_RANGE = re.compile(r"(\w+)(?:\[[^\]]*\])?;\s*/\* (-?\d+)\.\.(-?\d+) \*/")
_BLOCK = r"\n?```yaml\n# facts: {} v1\n.*?^```$\n?"


def _wrapper(m: re.Match[str]) -> Wrapper:
    params = tuple(p.strip() for p in m["params"].split(",") if p.strip())
    return Wrapper(m["fn"], call_arguments(m["args"]) or (), m["caller"], params)


# The hand-written note bullets, in the order they are tried, each with where it goes.
_NOTES: tuple[tuple[re.Pattern[str], Callable[[HeaderFacts, re.Match[str]], None]], ...] = (
    (re.compile(r"^- (?P<fn>\w+) keeps its pointer arguments"), lambda f, m: f.retains.append(m["fn"])),
    (re.compile(r"^- (?P<fn>\w+) takes ownership of its object argument"),
     lambda f, m: f.consumes.append(m["fn"])),
    (re.compile(r"^- (?P<fn>\w+) takes over its allocated buffer argument"),
     lambda f, m: f.adopts.append(m["fn"])),
    (re.compile(r"^- (?P<fn>\w+) accepts NULL for (?P<names>\w+(?:, \w+)*)$"),
     lambda f, m: f.optional.__setitem__(m["fn"], m["names"].split(", "))),
    (re.compile(r"^- (?P<fn>\w+) is called by no harness"), lambda f, m: f.inside_only.append(m["fn"])),
    (re.compile(r"^- (?P<fn>\w+) hands back memory the library owns"),
     lambda f, m: f.borrows.append(m["fn"])),
    (re.compile(r"^- (?P<fn>\w+) takes UTF-8 in (?P<names>\w+(?:, \w+)*)$"),
     lambda f, m: f.utf8.__setitem__(m["fn"], m["names"].split(", "))),
    (re.compile(r"^- extern (?P<type>[^()]*?[\s*])(?P<name>\w+);$"),
     lambda f, m: f.instances.append((m["name"], re.sub(r"\s+", " ", m["type"]).strip()))),
    (re.compile(r"^- (?P<fn>\w+)\((?P<args>.*)\) in (?P<caller>\w+)\((?P<params>[^()]*)\)$"),
     lambda f, m: f.wrappers.append(_wrapper(m))),
    (re.compile(r"^- (?P<fn>\w+): (?P<text>.+)$"), lambda f, m: f.returns.__setitem__(m["fn"], m["text"])),
)


def releasers(text: str) -> list[Releaser]:
    """The releasers the bullets of ``text`` describe, in their order."""
    found = (_BULLET.match(line.strip()) for line in text.splitlines())
    return [Releaser(function=m["fn"], releases=m["what"].strip(), evidence=m["why"].removesuffix(HEAP),
                     heap=m["why"].endswith(HEAP)) for m in found if m]


def _note(facts: HeaderFacts, line: str) -> bool:
    """Whether ``line`` is a hand-written note bullet (then added to ``facts``)."""
    for pattern, add in _NOTES:
        if (found := pattern.match(line)) is not None:
            add(facts, found)
            return True
    return False


def _names(text: str) -> tuple[str, ...]:
    return tuple(n.strip().removesuffix("()") for n in text.split(",") if n.strip())


def _body(body: str) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, int, int], ...]]:
    """The ``(name, type)`` fields of a hand-written record body (``(*)`` for a function pointer's name)
    and its ``(field, lo, hi)`` documented ranges."""
    fields = []
    for part in (p.strip() for p in re.sub(r"/\*.*?\*/", "", body).split(";")):
        fn = _FN_FIELD.search(part) if "(*" in part else None
        one = None if "(*" in part else _FIELD.match(part)
        if fn is not None:
            fields.append((fn[1], re.sub(r"\s+", " ", part[:fn.start()] + "(*)" + part[fn.end():]).strip()))
        elif one is not None:
            fields.append((one["name"], re.sub(r"\s+", " ", one["type"]).strip()))
    return tuple(fields), tuple((m[1], int(m[2]), int(m[3])) for m in _RANGE.finditer(body))


def _declaration(facts: HeaderFacts, line: str) -> bool:
    """Whether ``line`` is a hand-written typedef or record (then added to ``facts``)."""
    if (m := _FNPTR.match(line)) is not None:
        facts.typedefs.append(Typedef(m["name"], f"{m['ret'].strip()} (*)({m['args']})",
                                      f"{m['ret'].strip()} (*)({m['args']})"))
    elif (m := _FNTYPE.match(line)) is not None:
        facts.typedefs.append(Typedef(m["name"], f"{m['ret'].strip()} ({m['args']})",
                                      f"{m['ret'].strip()} ({m['args']})"))
    elif (m := _ANON.match(line)) is not None:
        fields, ranges = _body(m["body"])
        facts.records.append(Record(m["kind"], "", (m["name"],), fields, False, ranges))
    elif not line.startswith("typedef enum {") and (m := _TYPEDEF.match(line)) is not None:
        facts.typedefs.append(Typedef(m["name"], m["under"].strip(), (m["canon"] or m["under"]).strip()))
    elif (m := _RECORD.match(line)) is not None and m["tag"]:
        fields, ranges = _body(m["body"] or "")
        facts.records.append(Record(m["kind"], m["tag"], (), fields, m["body"] is None, ranges))
    else:
        return False
    return True


class _Constants:
    """Enums, ``#define`` groups and declarations read from hand-written C lines (in a header's groups)."""

    def __init__(self, facts: HeaderFacts) -> None:
        self.facts, self.group, self.scope, self.open = facts, 0, (), False

    def end_group(self) -> None:
        self.group, self.scope, self.open = self.group + self.open, (), False

    def take(self, line: str) -> bool:
        """Whether ``line`` is a declaration, a constant or a group's comment, then added to the facts."""
        if not line.startswith(("enum ", "typedef enum {")) and _declaration(self.facts, line):
            return True
        if (scope := _SCOPE.match(line)) is not None:
            self.scope = _names(scope["fns"])
            return True
        if (define := _DEFINE.match(line)) is not None:
            fns = _names(define["fns"] or "")
            self.facts.macros.append(Macro(define["name"], int(define["value"]), self.group, self.scope,
                                           fns if define["note"] == "only" else (),
                                           fns if define["note"] == "not for" else ()))
            self.open = True
            return True
        if (enum := _ENUM.match(line)) is not None:
            parts = [p.partition("=") for p in (enum["body"] or enum["tbody"]).split(",")]
            values = tuple((n.strip(), int(v)) for n, _, v in parts if v.strip().lstrip("-").isdigit())
            self.facts.enums.append(Enum(enum["name"] or enum["tname"], values, bool(enum["tname"])))
            return True
        return False


def _rendered(text: str) -> tuple[HeaderFacts, str]:
    """The facts of the blocks ``text`` already holds (they move along, merged), and ``text`` without them."""
    facts = HeaderFacts()
    while (gone := read_facts(text, RELEASERS_KIND, ReleaserFacts)) is not None:
        facts.releasers += gone.releasers
        text = re.sub(_BLOCK.format(RELEASERS_KIND), "\n", text, count=1, flags=re.M | re.S)
    while (notes := read_facts(text, NOTES_KIND, FunctionNotes)) is not None:
        for key in ("retains", "consumes", "adopts", "inside_only", "internal", "borrows"):
            getattr(facts, key).extend(getattr(notes, key))
        facts.optional.update(notes.optional)
        facts.utf8.update(notes.utf8)
        facts.instances += [(i.name, i.type) for i in notes.instances]
        facts.wrappers += [Wrapper(w.function, tuple(w.args), w.caller, tuple(w.params))
                           for w in notes.wrappers]
        facts.returns.update({r.function: r.text for r in notes.returns})
        text = re.sub(_BLOCK.format(NOTES_KIND), "\n", text, count=1, flags=re.M | re.S)
    while (decls := read_facts(text, DECLARATIONS_KIND, DeclarationFacts)) is not None:
        facts.typedefs += [Typedef(name, under, chain[0] if chain else under)
                           for name, under, *chain in decls.typedefs]
        facts.records += [Record(r.kind, r.tag, tuple(r.names), tuple(r.fields.items()), r.opaque,
                                 tuple((n, lo, hi) for n, (lo, hi) in r.ranges.items()))
                          for r in decls.records]
        text = re.sub(_BLOCK.format(DECLARATIONS_KIND), "\n", text, count=1, flags=re.M | re.S)
    while (constants := read_facts(text, CONSTANTS_KIND, ConstantFacts)) is not None:
        facts.enums += [Enum(e.name, tuple(e.constants.items()), e.typedef) for e in constants.enums]
        first = len({m.group for m in facts.macros})
        facts.macros += [Macro(name, value, first + i, tuple(g.scope), tuple(g.only.get(name, ())),
                               tuple(g.not_for.get(name, ())))
                         for i, g in enumerate(constants.macros) for name, value in g.constants.items()]
        text = re.sub(_BLOCK.format(CONSTANTS_KIND), "\n", text, count=1, flags=re.M | re.S)
    return facts, text


def render_types(text: str) -> str:
    """``text`` with its constants, release and note lines replaced by their rendering.

    The rendering goes where the first of them was (after the C fence that held a constant);
    a text without any is returned unchanged. Bullets inside a fenced block are left alone.
    """
    facts, text = _rendered(text)
    facts.releasers += releasers(text)
    kept: list[str] = []
    at: int | None = None
    fenced = in_yaml = after_fence = False
    constants = _Constants(facts)
    for line in text.split("\n"):
        plain = line.strip()
        fence = plain.startswith("```")
        fenced = fenced != fence
        in_yaml = fenced and (in_yaml or plain.startswith("```yaml"))
        if fence or not plain:
            constants.end_group()
        if not in_yaml and not fence and constants.take(plain):
            if at is None and not after_fence and not fenced:
                at = len(kept)
            after_fence = after_fence or (at is None and fenced)
            continue
        if not fenced and not fence and (
                plain.startswith(_HEADINGS) or _BULLET.match(plain) or _note(facts, plain)):
            at = len(kept) if at is None else at
            continue
        kept.append(line)
        if fence and not fenced and after_fence:
            at, after_fence = len(kept), False
    if at is None and facts == HeaderFacts():
        return text
    at = len(kept) if at is None else at
    kept[at:at] = facts.render().split("\n")
    text = re.sub(r"\n\n+```$", "\n```", "\n".join(kept), flags=re.M)
    return re.sub(r"^```c?\n```$\n?", "", text, flags=re.M)  # a fence left empty


def released(text: str) -> set[tuple[str, str]]:
    """``(function, what it releases)`` of the releasers' facts block of a rendered ``## Types`` text."""
    facts = read_facts(text, RELEASERS_KIND, ReleaserFacts) or ReleaserFacts()
    return {(r.function, r.releases) for r in facts.releasers}
