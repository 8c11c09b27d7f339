"""What a library's headers say about the types its API uses, read with libclang.

A prototype alone does not say that ``lib_u8`` is ``unsigned char``, that ``struct hdr`` has
the fields ``width`` and ``height``, that ``LIB_OK`` is the success status or that
``lib_free_reply(void *)`` releases what ``lib_parse_reply`` returns. :func:`collect_facts`
reads that from the headers at prepare time, for the types reachable from the API, so that every
agent (the offline model and a real LLM alike) gets it in its prompt as a ``## Types`` section
(:meth:`HeaderFacts.render`); :mod:`fuzzkit.header_facts_collect` reads the headers. Nothing
here knows any particular library.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from fuzzkit.facts_block import render_facts
from fuzzkit.header_wrappers import Wrapper
from fuzzkit.vocabulary import c_words

_FUNCTION_TYPE = re.compile(r"^([^()]*?)\s*\(([^()]*)\)$")


@dataclass(frozen=True)
class Typedef:
    """``typedef <underlying> <name>``, with the canonical type behind the whole chain."""

    name: str
    underlying: str
    canonical: str


@dataclass(frozen=True)
class Record:
    """A struct or union: its tag, typedef names and fields (none when opaque)."""

    kind: str
    tag: str
    names: tuple[str, ...]
    fields: tuple[tuple[str, str], ...]
    opaque: bool
    # (field, lo, hi): the values the field's comment documents (fuzzkit.field_ranges)
    ranges: tuple[tuple[str, int, int], ...] = ()


@dataclass(frozen=True)
class Enum:
    """An enum: its tag or typedef name and its constants with values."""

    name: str
    constants: tuple[tuple[str, int], ...]
    typedef: bool = False  # no tag: `typedef enum { ... } name;` (`enum name` does not compile)


@dataclass(frozen=True)
class Macro:
    """An integer ``#define``; macros defined on adjacent lines share a ``group``."""

    name: str
    value: int
    group: int
    scope: tuple[str, ...] = ()  # the functions the comment above its group names (fuzzkit.header_macros)
    only: tuple[str, ...] = ()  # its own comment: "f() only"
    not_for: tuple[str, ...] = ()  # its own comment: "not for f()"


class Releaser(BaseModel):
    """A function that releases objects of ``releases``, and how that was worked out.

    ``heap``: an API function makes such objects (``T *t_new(void)``), so the releaser frees the
    struct itself and must never be given one on the caller's stack.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    function: str
    releases: str
    evidence: str
    heap: bool = False


class ReleaserFacts(BaseModel):
    """The release functions as they travel in the prompt (:data:`RELEASERS_KIND` facts block)."""

    model_config = ConfigDict(extra="forbid")

    releasers: list[Releaser] = Field(default_factory=list)


RELEASERS_KIND = "releasers"  # the kind of the ``## Types`` section's facts block


@dataclass
class HeaderFacts:
    """Everything :func:`collect_facts` found; plain data (it travels in the graph state)."""

    typedefs: list[Typedef] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)
    enums: list[Enum] = field(default_factory=list)
    macros: list[Macro] = field(default_factory=list)
    releasers: list[Releaser] = field(default_factory=list)
    returns: dict[str, str] = field(default_factory=dict)
    retains: list[str] = field(default_factory=list)
    consumes: list[str] = field(default_factory=list)
    adopts: list[str] = field(default_factory=list)  # take over a malloc'd buffer argument on success
    inside_only: list[str] = field(default_factory=list)  # valid only inside a library callback
    internal: list[str] = field(default_factory=list)  # documented as the library's own (Doxygen `internal`)
    borrows: list[str] = field(default_factory=list)  # what it hands back stays the library's
    wrappers: list[Wrapper] = field(default_factory=list)
    # (name, type) of variables the library defines whose type the API takes a pointer to
    # (a built-in encoding table, a default configuration): the only way to get a valid one.
    instances: list[tuple[str, str]] = field(default_factory=list)
    # function -> its pointer parameters the documentation lets be NULL (fuzzkit.param_docs)
    optional: dict[str, list[str]] = field(default_factory=dict)
    # function -> its input text parameters documented as UTF-8 (fuzzkit.param_docs)
    utf8: dict[str, list[str]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        data = asdict(self)
        data["releasers"] = [r.model_dump() for r in self.releasers]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> HeaderFacts:
        """Inverse of :meth:`to_dict` (``None`` or ``{}`` gives empty facts)."""
        data = data or {}
        return cls(
            typedefs=[Typedef(**t) for t in data.get("typedefs", [])],
            records=[Record(r["kind"], r["tag"], tuple(r["names"]),
                            tuple((f[0], f[1]) for f in r["fields"]), r["opaque"],
                            tuple((g[0], int(g[1]), int(g[2])) for g in r.get("ranges", ())))
                     for r in data.get("records", [])],
            enums=[Enum(e["name"], tuple((c[0], c[1]) for c in e["constants"]), bool(e.get("typedef")))
                   for e in data.get("enums", [])],
            macros=[Macro(m["name"], m["value"], m["group"], tuple(m.get("scope", ())),
                          tuple(m.get("only", ())), tuple(m.get("not_for", ())))
                    for m in data.get("macros", [])],
            releasers=[Releaser.model_validate(r) for r in data.get("releasers", [])],
            returns=dict(data.get("returns", {})),
            retains=list(data.get("retains", [])),
            consumes=list(data.get("consumes", [])),
            adopts=list(data.get("adopts", [])),
            inside_only=list(data.get("inside_only", [])),
            internal=list(data.get("internal", [])),
            borrows=list(data.get("borrows", [])),
            wrappers=[Wrapper(w["function"], tuple(w["args"]), w["caller"], tuple(w["params"]))
                      for w in data.get("wrappers", [])],
            instances=[(i[0], i[1]) for i in data.get("instances", [])],
            optional={k: list(v) for k, v in data.get("optional", {}).items()},
            utf8={k: list(v) for k, v in data.get("utf8", {}).items()},
        )

    def render(self) -> str:
        """The ``## Types`` section body: C declarations in a fence, releasers as data, then notes."""
        lines: list[str] = []
        for t in self.typedefs:
            fn_type = _FUNCTION_TYPE.match(t.underlying) or _FUNCTION_TYPE.match(t.canonical)
            if "(*)" in t.underlying:
                lines.append(f"typedef {t.underlying.replace('(*)', f'(*{t.name})', 1)};")
            elif "(*)" in t.canonical:
                lines.append(f"typedef {t.canonical.replace('(*)', f'(*{t.name})', 1)};")
            elif fn_type:
                lines.append(f"typedef {fn_type.group(1)} {t.name}({fn_type.group(2)});")
            else:
                extra = f"  /* {t.canonical} */" if t.canonical != t.underlying else ""
                sep = "" if t.underlying.endswith("*") else " "
                lines.append(f"typedef {t.underlying}{sep}{t.name};{extra}")
        for r in self.records:
            head = f"{r.kind} {r.tag}".strip()
            if r.opaque:
                lines.append(f"{head};  /* opaque: only pointers, made by the API */")
            else:
                span = {name: f" /* {lo}..{hi} */" for name, lo, hi in r.ranges}
                body = " ".join(f"{_field_decl(n, t)};{span.get(n, '')}" for n, t in r.fields[:MAX_FIELDS])
                if len(r.fields) > MAX_FIELDS:
                    body += f" /* {len(r.fields) - MAX_FIELDS} more fields */"
                if r.tag or not r.names:
                    lines.append(f"{head} {{ {body} }};")
                else:  # an anonymous record, named by its typedef only
                    lines.append(f"typedef {head} {{ {body} }} {r.names[0]};")
        for e in self.enums:
            body = ", ".join(f"{n} = {v}" for n, v in e.constants)
            enum = f"typedef enum {{ {body} }} {e.name};" if e.typedef else f"enum {e.name} {{ {body} }};"
            lines.append(enum)
        last_group = None
        for m in self.macros:
            if last_group is not None and m.group != last_group:
                lines.append("")
            if m.scope and m.group != last_group:
                lines.append(f"/* flags of {', '.join(f + '()' for f in m.scope)} */")
            note = (f"  /* only {', '.join(f + '()' for f in m.only)} */" if m.only else
                    f"  /* not for {', '.join(f + '()' for f in m.not_for)} */" if m.not_for else "")
            lines.append(f"#define {m.name} {m.value}{note}")
            last_group = m.group
        out = ["```c", *lines, "```"] if lines else []
        return "\n".join(out + self._notes())

    def _notes(self) -> list[str]:
        """The notes after the declarations: objects, releasers, documented behaviour, wrappers."""
        out: list[str] = []
        if self.instances:
            out.append("Objects the library defines (pass one's address where the API takes a pointer "
                       "to its type):")
            out += [f"- extern {_field_decl(name, ctype)};" for name, ctype in self.instances]
        if self.releasers:
            names = ", ".join(dict.fromkeys(r.function for r in self.releasers))
            out.append(f"Release functions: {names} (what each releases and why, as data):")
            out.append(render_facts(RELEASERS_KIND, ReleaserFacts(releasers=self.releasers)))
        if self.retains:
            out.append("Arguments kept by reference (they must outlive the object):")
            out += [f"- {fn} keeps its pointer arguments (documentation)" for fn in self.retains]
        if self.consumes or self.adopts:
            out.append("Ownership (documentation):")
            out += [f"- {fn} takes ownership of its object argument, even when it fails"
                    for fn in self.consumes]
            out += [f"- {fn} takes over its allocated buffer argument when it succeeds (not freed again)"
                    for fn in self.adopts]
        if self.inside_only:
            out.append("Valid only inside a callback or method the library calls (documentation):")
            out += [f"- {fn} is called by no harness: only from within the library's callback"
                    for fn in self.inside_only]
        if self.internal:
            out.append("Internal to the library (documentation):")
            out += [f"- {fn} is called by no harness: the library's own helper" for fn in self.internal]
        if self.borrows:
            out.append("Results the library keeps (documentation):")
            out += [f"- {fn} hands back memory the library owns: never free it" for fn in self.borrows]
        if self.optional:
            out.append("Arguments the documentation lets be NULL (leaving one out is a case of its own):")
            out += [f"- {fn} accepts NULL for {', '.join(names)}" for fn, names in self.optional.items()]
        if self.utf8:
            out.append("Text documented as UTF-8 (other bytes there break the contract, not the library):")
            out += [f"- {fn} takes UTF-8 in {', '.join(names)}" for fn, names in self.utf8.items()]
        if self.wrappers:
            out.append("Calls in the header's own wrappers (pass the same fixed arguments):")
            out += [f"- {w.function}({', '.join(w.args)}) in {w.caller}({', '.join(w.params)})"
                    for w in self.wrappers]
        if self.returns:
            out.append("Documented return values:")
            out += [f"- {fn}: {text}" for fn, text in self.returns.items()]
        return out


def _field_decl(name: str, ctype: str) -> str:
    if "(*)" in ctype:
        return ctype.replace("(*)", f"(*{name})", 1)
    if ctype.endswith("]") and "[" in ctype:
        base, _, dims = ctype.partition("[")
        return f"{base.rstrip()} {name}[{dims}"
    return f"{ctype}{name}" if ctype.endswith("*") else f"{ctype} {name}"


MAX_FIELDS = 20
# A parameter taking option values: a group of constants named after its function holds them.
OPTION_PARAM = re.compile(r"(flags?|options?|opts|mode)$", re.I)


def _words(name: str) -> list[str]:
    # An acronym run ends before a capitalised word: `QXFree` is `qx`, `free`.
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name))
    return [w.lower() for w in re.split(r"[_\W]+", spaced) if w]


def _base(spelling: str) -> str:
    words = [w for w in spelling.replace("*", " ").split() if w not in c_words("qualifier", "tag")]
    return " ".join(words)


def stream_types(facts: HeaderFacts) -> set[str]:
    """Names (tags and typedefs) of structs the caller drives as a stream.

    Recognised by their fields, never by name: a byte pointer and an available-count field
    for input (``next_in``/``avail_in``-style: words ``in`` plus ``avail``/``left``/``len``/
    ``size``), so passing such a struct is passing data.
    """
    names: set[str] = set()
    canonical = {t.name: t.canonical for t in facts.typedefs}
    byteish = re.compile(r"\b(char|uint8_t|int8_t|void)\b")

    def is_bytes(ctype: str) -> bool:
        base = _base(ctype)
        return bool(byteish.search(base) or byteish.search(canonical.get(base, "")))

    for record in facts.records:
        words = [(_words(n), t) for n, t in record.fields]
        data = any("in" in w and "*" in t and is_bytes(t) for w, t in words)
        count = any("in" in w and set(w) & {"avail", "left", "len", "size", "remaining"}
                    and "*" not in t for w, t in words)
        if data and count:
            names |= {n for n in (record.tag, *record.names) if n}
    return names


def blob_types(facts: HeaderFacts) -> set[str]:
    """Names of structs that are just a byte buffer and its length (``{ const u8 *bytes; size_t size; }``).

    Passing one (by const pointer) is passing data, like a stream struct.
    """
    canonical = {t.name: t.canonical for t in facts.typedefs}
    byteish = re.compile(r"\b(char|uint8_t|int8_t|void)\b")
    integer = re.compile(r"\b(size_t|int|long|short|unsigned|u?int\d+_t)\b")
    names: set[str] = set()
    for record in facts.records:
        if record.opaque or len(record.fields) != 2:
            continue
        kinds = set()
        for _name, ctype in record.fields:
            base = _base(ctype)
            resolved = f"{base} {canonical.get(base, '')}"
            if "*" in ctype and byteish.search(resolved):
                kinds.add("data")
            elif "*" not in ctype and integer.search(resolved):
                kinds.add("length")
        if kinds == {"data", "length"}:
            names |= {n for n in (record.tag, *record.names) if n}
    return names
