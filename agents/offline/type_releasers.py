"""Which function releases a value of a type, from the prompt's ``## Types`` section.

By the documentation first (``releases what P allocates``), then by type at the same pointer
depth; reads the table :func:`agents.offline.type_table.using` made active for this reply.
"""

from __future__ import annotations

import re

from agents.offline.type_table import TypeTable, active
from fuzzkit.api_twins import SCALARS
from fuzzkit.release_names import documented_releaser


def type_releaser(type_name: str, producer: str = "") -> str | None:
    """The releaser of a value of ``type_name`` (or of what ``producer`` allocates), by canonical spelling.

    What the prompt's ``## Types`` section says, and nothing else: None when it names no releaser
    (the drafting decides what to do then). The graph's leak repairs ask
    :func:`fuzzkit.release_names.result_releaser` instead, which decides what releases one
    function's result from the header facts and falls back to the library's own free or ``free``
    for text, since LeakSanitizer has already shown that the result leaks.
    """
    if producer and (documented := producer_releaser(producer)):
        return documented  # what the documentation says beats a releaser of the same type
    return next((fn for fn in releasers_of(type_name) if not producer or releases_from(fn, producer)), None)


def releases_from(releaser: str, producer: str) -> bool:
    """Whether a type's ``releaser`` takes ``producer``'s result (an object's always does).

    A named string type's releaser that the documentation ties to its producers (``db_free_path``
    to ``db_make_path``) takes no other's (``db_path_of(db)`` hands back the library's own copy).
    """
    table = active()
    said = [what for fn, what in table.releasers if fn == releaser]
    tied = {w.removeprefix("what ").removesuffix(" allocates") for w in said if w.startswith("what ")}
    kinds = {_bare(_canonical(table, w)) for w in said if not w.startswith("what ")}
    return not tied or producer in tied or not kinds <= SCALARS - {"void"}  # `void *` frees anything


def releasers_of(type_name: str) -> list[str]:
    """Every function the Types section lists as releasing ``type_name``, its own spelling first."""
    table = active()
    wanted = {_bare(type_name), _bare(_canonical(table, type_name))}
    depth = _canonical(table, type_name).count("*")
    found = []
    # A releaser of the very spelling first (`region_t *` before the `struct re *` behind it).
    for fn, what in sorted(table.releasers, key=lambda r: _bare(r[1]) != _bare(type_name)):
        # The same pointer depth: a `char **` table's releaser is not a `char *` string's. A
        # by-value record (depth 0) is released through its address.
        same_depth = _canonical(table, what).count("*") in ((depth,) if depth else (0, 1))
        # A name the library gives a plain C type (`typedef const char *db_path`) releases only
        # what is made as that type, not every `char *` of the API.
        canon = _bare(_canonical(table, what))
        names = {_bare(what)} if canon in SCALARS else {_bare(what), canon}
        if not what.startswith("what ") and same_depth and names & wanted - {""}:
            found.append(fn)
    return found


def producer_releaser(producer: str) -> str | None:
    """The function the header documents as releasing what ``producer`` allocates."""
    return documented_releaser(active().releasers, producer)


def _bare(spelling: str) -> str:
    """The type's name alone; ``""`` for a record with no name of its own (``struct {...}``).

    Two typedefs of anonymous records are two types, though both are spelled ``struct {...}``
    canonically: that spelling names neither.
    """
    if re.search(r"\{|\(anonymous|\(unnamed", spelling):
        return ""
    return re.sub(r"\b(const|struct|union)\b|\*|\s+", "", spelling)


def _canonical(table: TypeTable, spelling: str) -> str:
    """The spelling with its base typedef replaced by the canonical type (pointers kept)."""
    base = re.sub(r"\b(const|struct|union)\b|\*", " ", spelling).split()
    if not base:
        return spelling
    canon = table.canonical.get(base[-1])
    if canon is None:
        return spelling
    return canon + " *" * spelling.count("*")
