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
from fuzzkit.header_facts import RELEASERS_KIND, HeaderFacts, Releaser, ReleaserFacts
from fuzzkit.header_wrappers import Wrapper, call_arguments

_HEADINGS = ("Release functions:", "Arguments kept by reference", "Ownership (documentation):",
             "Valid only inside a callback", "Internal to the library", "Results the library keeps",
             "Arguments the documentation lets be NULL", "Text documented as UTF-8",
             "Calls in the header's own wrappers", "Documented return values:", "Objects the library defines")
_BULLET = re.compile(r"^- (?P<fn>\w+) releases (?P<what>.+?) \((?P<why>[^)]*)\)$")
HEAP = "; the library allocates it"
_RELEASERS_BLOCK = re.compile(r"\n?```yaml\n# facts: releasers v1\n.*?^```$\n?", re.M | re.S)


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


def render_types(text: str) -> str:
    """``text`` with its release and note headings and bullets replaced by their rendering.

    The rendering goes where the first of them was; a text without any is returned unchanged.
    Bullets inside a fenced block are left alone.
    """
    rendered = read_facts(text, RELEASERS_KIND, ReleaserFacts)  # a block already rendered moves along
    facts = HeaderFacts(releasers=(rendered.releasers if rendered else []) + releasers(text))
    if rendered:
        text = _RELEASERS_BLOCK.sub("\n", text, count=1)
    kept: list[str] = []
    at: int | None = None
    fenced = False
    for line in text.split("\n"):
        plain = line.strip()
        fenced = fenced != plain.startswith("```")
        if not fenced and not plain.startswith("```") and (
                plain.startswith(_HEADINGS) or _BULLET.match(plain) or _note(facts, plain)):
            at = len(kept) if at is None else at
            continue
        kept.append(line)
    if at is None:
        return text
    kept[at:at] = facts.render().split("\n")
    return "\n".join(kept)


def released(text: str) -> set[tuple[str, str]]:
    """``(function, what it releases)`` of the releasers' facts block of a rendered ``## Types`` text."""
    facts = read_facts(text, RELEASERS_KIND, ReleaserFacts) or ReleaserFacts()
    return {(r.function, r.releases) for r in facts.releasers}
