"""Hand-written ``## Types`` sections whose release functions are rendered as prepare renders them.

A test writes a library's releasers as a person reads them, one bullet each
(``- f releases T * (parameter type)``; ``; the library allocates it`` at the end of the
parentheses marks a releaser of what the library allocates, ``heap``). :func:`render_types`
puts in their place what :meth:`fuzzkit.header_facts.HeaderFacts.render` writes (a short
line and the releasers' facts block), so the engine reads them the one way it reads a prompt.
"""

from __future__ import annotations

import re

from fuzzkit.facts_block import read_facts
from fuzzkit.header_facts import RELEASERS_KIND, HeaderFacts, Releaser, ReleaserFacts

_HEADING = "Release functions:"
_BULLET = re.compile(r"^- (?P<fn>\w+) releases (?P<what>.+?) \((?P<why>[^)]*)\)$")
HEAP = "; the library allocates it"


def releasers(text: str) -> list[Releaser]:
    """The releasers the bullets of ``text`` describe, in their order."""
    found = (_BULLET.match(line.strip()) for line in text.splitlines())
    return [Releaser(function=m["fn"], releases=m["what"].strip(), evidence=m["why"].removesuffix(HEAP),
                     heap=m["why"].endswith(HEAP)) for m in found if m]


def render_types(text: str) -> str:
    """``text`` with its ``Release functions`` heading and bullets replaced by their rendering.

    The rendering goes where the first of them was; a text without any is returned unchanged.
    """
    kept: list[str] = []
    at: int | None = None
    for line in text.split("\n"):
        if line.strip() == _HEADING or _BULLET.match(line.strip()):
            at = len(kept) if at is None else at
            continue
        kept.append(line)
    if at is None:
        return text
    kept[at:at] = HeaderFacts(releasers=releasers(text)).render().split("\n")
    return "\n".join(kept)


def released(text: str) -> set[tuple[str, str]]:
    """``(function, what it releases)`` of the releasers' facts block of a rendered ``## Types`` text."""
    facts = read_facts(text, RELEASERS_KIND, ReleaserFacts) or ReleaserFacts()
    return {(r.function, r.releases) for r in facts.releasers}
