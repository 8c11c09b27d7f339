"""A block's call that leaves what it made in a field of an object it was given: released there.

``int dp_parse_all(dp_parser *p)`` builds a document and leaves it in ``p->doc``; releasing the
parser does not release the document (the library leaves that to the caller). LeakSanitizer's
allocation stack names the maker (``malloc <- dp_new_doc <- ... <- dp_parse_all <-
LLVMFuzzerTestOneInput``), and the header says the parser's record has a field of the maker's
type. Before the block is dropped (:mod:`.drop`), the next version releases that field right
after the call, with the releaser the header names for the type, and clears it; the change's
other new blocks that call the function or one of its twins (``dp_parse_entity(dp_parser_ptr)``:
:mod:`fuzzkit.api_twins`) on such an object get the same release. A block repaired once that
crashes again is dropped as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.improvement_blocks.marks import (
    HARNESS_ENTRY,
    MARK,
    CrashedBlock,
    block_end,
    direction_of,
    sibling_blocks,
)
from agents.improvement_blocks.results import Repair
from fuzzkit.api import FunctionDecl
from fuzzkit.api_twins import canonical_type, twins
from fuzzkit.field_release import held_argument, release_line
from fuzzkit.header_facts import HeaderFacts
from fuzzkit.release_names import result_releaser


def release_left_in_field(crashed: CrashedBlock, api: list[dict[str, Any]],
                          facts: HeaderFacts) -> Repair | None:
    """The harness with the leaked field released after the crashed block's call, or None.

    What was released is ``{function, field, maker, releaser, holder}``. None unless the crash is
    a leak made by an API function returning a pointer, under a call of the crashed block that
    takes a record with a field of that type, the header names a releaser for it, and the block
    was not repaired before.
    """
    frames, index = list(crashed.frames), crashed.index
    if crashed.direction in crashed.released or HARNESS_ENTRY not in frames[1:]:
        return None
    below = frames[: frames.index(HARNESS_ENTRY)]
    decls = {d.name: d for d in map(FunctionDecl.from_dict, api)}
    callee = decls.get(below[-1])
    canonical = {t.name: t.canonical for t in facts.typedefs}
    maker = next((decls[f] for f in below[:-1]
                  if f in decls and canonical_type(decls[f].return_type, canonical).endswith("*")), None)
    holder = _holder(callee, maker, facts, canonical) if callee is not None and maker is not None else None
    releaser = result_releaser(maker, facts, api) if maker is not None else None
    if holder is None or releaser is None or releaser == "free" or callee is None or maker is None:
        return None
    lines = crashed.code.splitlines(keepends=True)
    names = [callee.name, *twins(callee.name, list(decls.values()), canonical)]
    repaired = []
    for mark in sorted([index, *sibling_blocks(crashed, lines)], reverse=True):  # bottom up
        calls = [callee.name] if mark == index else names
        if _release_field(lines, mark, calls, holder, releaser, maker.name):
            repaired.append(direction_of(lines[mark]))
    if crashed.direction not in repaired:
        return None
    return Repair("".join(lines), repaired,
                  {"function": callee.name, "field": holder[1], "maker": maker.name, "releaser": releaser,
                   "holder": callee.params[holder[0]].type})


def reapply_field_releases(code: str, known: Mapping[str, Mapping[str, str]], api: list[dict[str, Any]],
                           facts: HeaderFacts) -> tuple[str, list[str]]:
    """``code`` with this run's field releases in the blocks that call those functions or their twins.

    A repaired block that measured as noise goes back to the best version with the rest of its
    improvement; the next improvement may add the call again, or a twin of it (another parse of
    the same context), and leak the same way. ``known``: ``{function: {field, maker, releaser}}``
    of the run's field repairs. Returns the code and the functions given a release.
    """
    if not known:
        return code, []
    decls = {d.name: d for d in map(FunctionDecl.from_dict, api)}
    canonical = {t.name: t.canonical for t in facts.typedefs}
    lines = code.splitlines(keepends=True)
    marks = [i for i, line in enumerate(lines) if MARK.search(line)]
    done: list[str] = []
    for function, what in known.items():
        callee, maker = decls.get(function), decls.get(what.get("maker", ""))
        holder = _holder(callee, maker, facts, canonical) if callee and maker else None
        if callee is None or maker is None or holder is None:
            continue
        names = [callee.name, *twins(callee.name, list(decls.values()), canonical)]
        for mark in reversed(marks):  # bottom up: an insertion moves what is below
            name = _release_field(lines, mark, names, holder, what["releaser"], maker.name)
            if name:
                done.append(name)
        marks = [i for i, line in enumerate(lines) if MARK.search(line)]
    return "".join(lines), sorted(set(done))


def _release_field(lines: list[str], mark: int, names: list[str], holder: tuple[int, str], releaser: str,
                   maker: str) -> str:
    """Release ``holder``'s field after the first call of one of ``names`` in the block at ``mark``.

    Returns the function whose call got the release ('' when the block has none, or releases it).
    """
    end = block_end(lines, mark)
    if end is None:
        return ""
    position, field = holder
    for name in names:
        at, arg = _call_line(lines[mark:end], name, position)
        if at < 0 or f"{arg}->{field}" in "".join(lines[mark:end]):
            continue
        why = f"/* LeakSanitizer: {name} leaves what {maker} made in {field} */"
        lines.insert(mark + at + 1, release_line(lines[mark + at], arg, field, releaser, why))
        return name
    return ""


def _holder(callee: FunctionDecl, maker: FunctionDecl, facts: HeaderFacts,
            canonical: dict[str, str]) -> tuple[int, str] | None:
    """``(parameter index, field)``: the record ``callee`` takes whose field has ``maker``'s type."""
    made = canonical_type(maker.return_type, canonical)
    for i, param in enumerate(callee.params):
        taken = canonical_type(param.type, canonical)
        if taken.count("*") != 1:
            continue
        for record in facts.records:
            spellings = {f"{record.tag}*",
                         *(canonical_type(f"{n} *", canonical) for n in record.names)}
            if taken not in spellings:
                continue
            field = next((name for name, ftype in record.fields
                          if canonical_type(ftype, canonical) == made), None)
            if field is not None:
                return i, field
    return None


def _call_line(block: list[str], callee: str, position: int) -> tuple[int, str]:
    """The index of the block's line that calls ``callee``, and its argument at ``position`` (-1, '')."""
    for i, line in enumerate(block):
        arg = held_argument(line, [callee], position)
        if arg:
            return i, arg
    return -1, ""
