"""What a releaser's name says it releases, and which function releases a call's result.

Part of reading header facts (:mod:`fuzzkit.header_releasers`). ``gen_map_close(gen *g)`` ends a
map inside the generator, not the generator; ``doc_free_saved_parts(doc *d)`` frees the parts a
document holds, not the document, when ``doc_close(doc *d)`` is the one that does. The graph's
leak repairs (:mod:`agents.improvement_blocks`) ask :func:`result_releaser`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from fuzzkit.api import FunctionDecl
from fuzzkit.api_twins import canonical_type
from fuzzkit.header_facts import HeaderFacts, Releaser, _base, _words
from fuzzkit.vocabulary import ordered


def common_words(names: list[str]) -> set[str]:
    """Words in more than half of the API's names: the library's prefix, not a type's name."""
    counts: dict[str, int] = {}
    for name in names:
        for w in set(_words(name)):
            counts[w] = counts.get(w, 0) + 1
    return {w for w, n in counts.items() if n > max(1, len(names) // 2)}


def _nouns(words: list[str]) -> list[str]:
    """A single letter is no noun (``DFooCloseFile``: D for the decoding side of the API)."""
    return [w for w in words if len(w) > 1]


def closes_a_part(ws: list[str], base: str, common: set[str]) -> bool:
    """``gen_map_close(gen *g)``: "close" after a noun its type lacks ends a part, not the object."""
    if "close" not in ws:
        return False
    before = _nouns(ws[: ws.index("close")])
    return bool(set(before) - set(_words(base)) - common)


def _frees_a_part(function: str, base: str, verbs: Sequence[str], common: set[str]) -> bool:
    """A release verb followed by a plural the type's name lacks (``free_saved_images(file *)``).

    The things an object holds; ``node_free_list(node *)`` frees nodes from this one on, no part.
    """
    ws = _words(function)
    at = next((i for i, w in enumerate(ws) if w in verbs), None)
    if at is None:
        return False
    extra = set(_nouns(ws[at + 1:])) - set(_words(base)) - common - set(verbs)
    return any(w.endswith("s") and not w.endswith("ss") for w in extra)


def whole_first(found: list[Releaser], common: set[str], verbs: Sequence[str]) -> list[Releaser]:
    """Of the releasers of one type by parameter type, drop those that free a part of it.

    Only when another releaser of that type frees the whole (its name has no noun the type
    lacks): ``file_free_saved_images(file *)`` goes when ``file_close(file *, int *err)`` is
    there; alone, it stays the type's releaser. ``common``: the API's prefix words (:func:`common_words`).
    """

    def part(r: Releaser) -> bool:
        return r.evidence.startswith("parameter type") and _frees_a_part(
            r.function, _base(r.releases), verbs, common)

    whole = {_base(r.releases) for r in found if r.evidence.startswith("parameter type") and not part(r)}
    return [r for r in found if not (part(r) and _base(r.releases) in whole)]


_ALLOC_VERBS = ordered("make")
_FREE_VERBS = ordered("release")


def paired_releaser(allocators: Sequence[str], api: Sequence[FunctionDecl]) -> str | None:
    """The API's one-pointer release function named as an allocator of the stack, verb swapped.

    A library's reply records may come from an internal ``lib_malloc_data`` that hides a header
    before the record, so only ``lib_free_data(void *)`` releases them (``free`` is a bad-free);
    the header ties the releaser to no type, but the leak's allocation stack names its allocator.
    The innermost allocator with such a partner wins.
    """
    releases = {f.name: f for f in api if len(f.params) == 1 and "*" in f.params[0].type}
    for frame in allocators:
        for verb in _ALLOC_VERBS:
            # `lib_malloc_data` or `libMallocData`: the verb as a whole word of the name.
            spots = [*re.finditer(rf"(?<![A-Za-z]){verb}(?![a-z])", frame),
                     *re.finditer(rf"(?<![A-Z]){verb.capitalize()}(?![a-z])", frame)]
            for match in spots:
                for free in _FREE_VERBS:
                    spelled = free.capitalize() if frame[match.start()].isupper() else free
                    name = frame[:match.start()] + spelled + frame[match.end():]
                    if name in releases:
                        return name
    return None


_CHAR = re.compile(r"^(?:const\s+)?(?:unsigned\s+|signed\s+)?(?:char|u?int8_t|void)\s*\*$")


def documented_releaser(releasers: Iterable[tuple[str, str]], producer: str) -> str | None:
    """The function documented as releasing what ``producer`` allocates (``releasers``: function, what)."""
    wanted = f"what {producer} allocates"
    return next((fn for fn, what in releasers if what == wanted), None)


def result_releaser(fn: FunctionDecl, facts: HeaderFacts, api: list[dict[str, Any]]) -> str | None:
    """What releases ``fn``'s result (None: nothing the header says, and no text or bytes).

    The releaser documented for it or for its type, then for text or bytes the library's own
    ``<prefix>_free(void *)``, else ``free``. From the header facts alone, whatever the model (the
    graph's repairs ask it, once LeakSanitizer has shown the result leaks). The offline engine's
    ``agents.offline.type_releasers.type_releaser`` decides another thing, what releases a value
    of a type, when it drafts: it shares the first rule (:func:`documented_releaser`) and reads
    its type table for the rest; it takes a documented ``char *`` releaser for a string and falls
    back to nothing, where this falls back to the library's own free or ``free``, so the two stay two.
    """
    canonical = {t.name: t.canonical for t in facts.typedefs}
    ret = fn.return_type.strip()
    base = re.sub(r"\bconst\b", "", ret).replace("*", "").strip()
    spelled = {ret, f"{canonical.get(base, base)} {'*' * ret.count('*')}".strip()}
    if documented := documented_releaser([(r.function, r.releases) for r in facts.releasers], fn.name):
        return documented
    made = canonical_type(ret, canonical)
    for r in facts.releasers:  # (a `void *` releaser by parameter type frees anything it is given)
        # A name the library gives a plain C type (`typedef const char *db_path`) releases only
        # what is made as that type, not every `char *` of the API.
        plain_name = _CHAR.match(canonical.get(r.releases.strip(), "")) and r.releases.strip() != base
        if canonical_type(r.releases, canonical) == made and not _CHAR.match(r.releases) and not plain_name:
            return r.function
    if not any(_CHAR.match(s) for s in spelled):
        return None
    prefix = re.match(r"[a-z]+[0-9]*_?", fn.name)
    own = {f"{prefix.group(0)}free", f"{prefix.group(0)}_free"} if prefix else set()
    single = [d for d in api if len(d.get("params") or []) == 1
              and re.sub(r"\bconst\b|\s", "", d["params"][0]["type"]) == "void*"]
    return next((d["name"] for d in single if d["name"] in own), "free")
