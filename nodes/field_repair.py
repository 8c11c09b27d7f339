"""A block's call that leaves what it made in a field of an object it was given: released there.

``int dp_parse_all(dp_parser *p)`` builds a document and leaves it in ``p->doc``; releasing the
parser does not release the document (the library leaves that to the caller). LeakSanitizer's
allocation stack names the maker (``malloc <- dp_new_doc <- ... <- dp_parse_all <-
LLVMFuzzerTestOneInput``), and the header says the parser's record has a field of the maker's
type. Before the block is dropped (:mod:`nodes.block_drop`), the next version releases that field
right after the call, with the releaser the header names for the type, and clears it; the change's
other new blocks that call the function or one of its twins (``dp_parse_entity(dp_parser_ptr)``:
:mod:`fuzzkit.api_twins`) on such an object get the same release. A block repaired once that
crashes again is dropped as before.
"""

from __future__ import annotations

from typing import Any

from agent_graph.state import FuzzState
from fuzzkit.api import FunctionDecl
from fuzzkit.api_twins import canonical_type, twins
from fuzzkit.field_release import held_argument, release_line
from fuzzkit.header_facts import HeaderFacts
from fuzzkit.release_names import result_releaser
from nodes.block_drop import MARK, block_end, crashed_mark
from nodes.block_repair import HARNESS_ENTRY, repaired_version, sibling_blocks


def release_left_in_field(state: FuzzState) -> tuple[dict[str, Any], str, dict[str, str]] | None:
    """The next version with the leaked field released after the block's call, the direction, and what.

    What is ``{function, field, maker, releaser}``. None unless the crash is a leak made by an API
    function returning a pointer, under a call of the crashed block that takes a record with a
    field of that type, and the header names a releaser for it.
    """
    crash = state.get("crash") or {}
    direction, index = crashed_mark(state)
    change = dict(state.get("last_change") or {})
    frames = [f.get("function") or "" for f in crash.get("frames") or []]
    if (crash.get("kind") != "leak" or not direction or direction in (change.get("released") or [])
            or HARNESS_ENTRY not in frames[1:]):
        return None
    below = frames[: frames.index(HARNESS_ENTRY)]
    api = state.get("api") or []
    decls = {d.name: d for d in map(FunctionDecl.from_dict, api)}
    callee = decls.get(below[-1])
    facts = HeaderFacts.from_dict(state.get("header_facts"))
    canonical = {t.name: t.canonical for t in facts.typedefs}
    maker = next((decls[f] for f in below[:-1]
                  if f in decls and canonical_type(decls[f].return_type, canonical).endswith("*")), None)
    holder = _holder(callee, maker, facts, canonical) if callee is not None and maker is not None else None
    releaser = result_releaser(maker, facts, api) if maker is not None else None
    if holder is None or releaser is None or releaser == "free" or callee is None or maker is None:
        return None
    lines = (state.get("harness_code") or "").splitlines(keepends=True)
    names = [callee.name, *twins(callee.name, list(decls.values()), canonical)]
    repaired = []
    for mark in sorted([index, *sibling_blocks(state, lines, index)], reverse=True):  # bottom up
        calls = [callee.name] if mark == index else names
        if _release_field(lines, mark, calls, holder, releaser, maker.name):
            repaired.append(MARK.search(lines[mark]).group(1))  # type: ignore[union-attr]
    if direction not in repaired:
        return None
    return (repaired_version(state, lines, repaired), direction,
            {"function": callee.name, "field": holder[1], "maker": maker.name, "releaser": releaser,
             "holder": callee.params[holder[0]].type})


def remembered_fields(state: FuzzState, released: dict[str, str]) -> dict[str, Any]:
    """The ``extras`` update that keeps this field repair (``{function: {field, maker, releaser}}``)."""
    known = dict((state.get("extras") or {}).get("released_fields") or {})
    kept = {k: released[k] for k in ("field", "maker", "releaser")}  # (the holder is re-derived)
    return {"released_fields": {**known, released["function"]: kept}}


def reapply_field_releases(code: str, state: FuzzState) -> tuple[str, list[str]]:
    """``code`` with this run's field releases in the blocks that call those functions or their twins.

    A repaired block that measured as noise goes back to the best version with the rest of its
    improvement; the next improvement may add the call again, or a twin of it (another parse of
    the same context), and leak the same way. Returns the code and the functions given a release.
    """
    known = (state.get("extras") or {}).get("released_fields") or {}
    if not known:
        return code, []
    decls = {d.name: d for d in map(FunctionDecl.from_dict, state.get("api") or [])}
    facts = HeaderFacts.from_dict(state.get("header_facts"))
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
