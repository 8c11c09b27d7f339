"""State to the repairs of an improvement's blocks (:mod:`agents.improvement_blocks`) and back.

The memory manager asks these after an improvement crashed: a leak in one of its blocks is
released there, any other crash in a block drops that block (and its twins' blocks), and each
answer is the next harness version as a partial state update. The enhancer asks them to put the
run's releases into a new improvement. The C editing and what releases what live in the
package; here the state is read (the crash, the harness, the best version, the header facts,
the lessons shown) and the update written.
"""

from __future__ import annotations

from typing import Any

from agent_graph.memory.code_memory_c import called_names
from agent_graph.state import FuzzState, counter
from agents import improvement_blocks as blocks
from fuzzkit.api import FunctionDecl
from fuzzkit.api_twins import kept_family
from fuzzkit.header_facts import HeaderFacts
from long_term_memory.experience import InjectItem
from long_term_memory.experience.lessons import parse_action


def crashed_mark(state: FuzzState) -> tuple[str, int]:
    """The direction of the block the crash of this version happened in, and its mark's line index.

    The harness's own frame gives the line (:func:`agents.improvement_blocks.block_at` names the
    block). ``("", -1)`` when the crash is elsewhere, or of another version.
    """
    crash = state.get("crash") or {}
    if not (state.get("run") or {}).get("crashed") or crash.get("version") != state.get("harness_version"):
        return "", -1
    line = next((f.get("line") for f in crash.get("frames") or []
                 if f.get("function") == blocks.HARNESS_ENTRY), None)
    return blocks.block_at(state.get("harness_code") or "", int(line or 0))


def _crashed(state: FuzzState) -> blocks.CrashedBlock | None:
    """The block this version crashed in, as the repairs read it (None when the crash is elsewhere)."""
    direction, index = crashed_mark(state)
    if not direction:
        return None
    crash = state.get("crash") or {}
    return blocks.CrashedBlock(
        code=state.get("harness_code") or "", index=index, direction=direction,
        best_code=(state.get("best") or {}).get("code") or "",
        released=tuple((state.get("last_change") or {}).get("released") or []),
        frames=tuple(f.get("function") or "" for f in crash.get("frames") or []))


def block_calls(state: FuzzState, crashed: blocks.CrashedBlock) -> list[str]:
    """The library calls the crashed block added: the one its mark names first, then the others.

    Read from the block's C code (its ``LF improve`` mark and its calls): the calls the
    improvement said it added when it said so, else the API's functions, else every call, in
    the order the code makes them; the call the block is for (:func:`agents.improvement_blocks.
    called`) goes first, before the makers of its arguments.
    """
    lines = crashed.code.splitlines()
    end = blocks.block_end(lines, crashed.index)
    called = called_names("\n".join(lines[crashed.index + 1:(end or crashed.index) + 1]))
    added = set((state.get("last_change") or {}).get("added_calls") or [])
    api = {str(d.get("name")) for d in state.get("api") or []}
    known = added & set(called) or api & set(called)
    found = [name for name in called if not known or name in known]
    own = blocks.called(crashed.direction)
    return sorted(found, key=lambda name: name != own)


def _leak(state: FuzzState) -> blocks.CrashedBlock | None:
    """The crashed block when the crash is a leak (None otherwise)."""
    return _crashed(state) if (state.get("crash") or {}).get("kind") == "leak" else None


def drop_crashed_block(state: FuzzState) -> tuple[dict[str, Any], str, list[str]] | None:
    """The next version without the crashed block (and its twins'), the block's direction and calls.

    None when the crash is outside the change's blocks, or nothing of the change would be left.
    The calls are those the block added (:func:`block_calls`).
    """
    crashed = _crashed(state)
    if crashed is None:
        return None
    api = [FunctionDecl.from_dict(d) for d in state.get("api") or []]
    dropped = blocks.drop_crashed_block(crashed, api, HeaderFacts.from_dict(state.get("header_facts")))
    if dropped is None:
        return None
    smaller, directions = dropped
    gone = set(directions)
    version = counter(state, "harness_versions") + 1
    change = dict(state.get("last_change") or {})
    change.update(version=version, from_version=state.get("harness_version"),
                  directions=[d for d in change.get("directions") or [] if d.split(" (")[0] not in gone])
    return ({"harness_code": smaller, "harness_version": version, "last_change": change, "fix_rounds": 0,
             "counters": {"harness_versions": 1, "dropped_blocks": len(directions)}}, crashed.direction,
            block_calls(state, crashed))


def release_leaked_result(state: FuzzState) -> tuple[dict[str, Any], str, dict[str, str]] | None:
    """The next version with the crashed block's leaking result released, the block's direction, and what.

    What was released (``{function, type, releaser}``) goes to the run's events, and the
    experience extractor turns it into a lesson that releases such results up front in the next
    harness. See :func:`agents.improvement_blocks.release_leaked_result`.
    """
    crashed = _leak(state)
    if crashed is None:
        return None
    facts = HeaderFacts.from_dict(state.get("header_facts"))
    repair = blocks.release_leaked_result(crashed, state.get("api") or [], facts, kept_results(state))
    return None if repair is None else (repaired_version(state, repair), crashed.direction, repair.released)


def release_left_in_field(state: FuzzState) -> tuple[dict[str, Any], str, dict[str, str]] | None:
    """The next version with the leaked field released after the block's call, the direction, and what.

    What is ``{function, field, maker, releaser, holder}``; see
    :func:`agents.improvement_blocks.release_left_in_field`.
    """
    crashed = _leak(state)
    if crashed is None:
        return None
    repair = blocks.release_left_in_field(crashed, state.get("api") or [],
                                          HeaderFacts.from_dict(state.get("header_facts")))
    return None if repair is None else (repaired_version(state, repair), crashed.direction, repair.released)


def kept_results(state: FuzzState) -> set[str]:
    """The functions whose results a shown ``keep_result`` lesson says stay their object's.

    The lesson's function and its slot twins (:func:`fuzzkit.api_twins.kept_family`), when the
    library has it and calls it on an object: a block that keeps such a result never releases it.
    """
    exp = (state.get("extras") or {}).get("experience") or {}
    api = [FunctionDecl.from_dict(d) for d in state.get("api") or []]
    canonical = {t.name: t.canonical for t in HeaderFacts.from_dict(state.get("header_facts")).typedefs}
    out: set[str] = set()
    for item in (InjectItem.from_dict(i) for i in exp.get("shown", [])):
        action = parse_action(item.lesson.get("action"))
        name = action.args["function"] if action is not None and action.verb == "keep_result" else ""
        if name:
            out.update(kept_family(name, api, canonical))
    return out


def repaired_version(state: FuzzState, repair: blocks.Repair) -> dict[str, Any]:
    """The update to the repaired harness as the next version, with the repaired blocks' directions noted.

    A block noted as released that crashes again is dropped (``repair.repaired`` is bottom-up).
    """
    change = dict(state.get("last_change") or {})
    version = counter(state, "harness_versions") + 1
    change.update(version=version, from_version=state.get("harness_version"),
                  released=[*(change.get("released") or []), *reversed(repair.repaired)])
    counters = {"harness_versions": 1, "repaired_blocks": len(repair.repaired)}
    return {"harness_code": repair.code, "harness_version": version, "last_change": change,
            "fix_rounds": 0, "counters": counters}


def remembered_releases(state: FuzzState, released: dict[str, str]) -> dict[str, Any]:
    """The ``extras`` update that keeps ``{function: releaser}`` of this repair for the run."""
    known = dict((state.get("extras") or {}).get("released_results") or {})
    return {"released_results": {**known, released["function"]: released["releaser"]}}


def remembered_fields(state: FuzzState, released: dict[str, str]) -> dict[str, Any]:
    """The ``extras`` update that keeps this field repair (``{function: {field, maker, releaser}}``)."""
    known = dict((state.get("extras") or {}).get("released_fields") or {})
    kept = {k: released[k] for k in ("field", "maker", "releaser")}  # (the holder is re-derived)
    return {"released_fields": {**known, released["function"]: kept}}


def reapply_releases(code: str, state: FuzzState) -> tuple[str, list[str]]:
    """``code`` with the run's result releases (``extras["released_results"]``) where its blocks need them.

    See :func:`agents.improvement_blocks.reapply_releases`.
    """
    known = (state.get("extras") or {}).get("released_results") or {}
    if not known:
        return code, []
    return blocks.reapply_releases(code, known, state.get("api") or [],
                                   HeaderFacts.from_dict(state.get("header_facts")))


def reapply_field_releases(code: str, state: FuzzState) -> tuple[str, list[str]]:
    """``code`` with the run's field releases (``extras["released_fields"]``) where its blocks need them.

    See :func:`agents.improvement_blocks.reapply_field_releases`.
    """
    known = (state.get("extras") or {}).get("released_fields") or {}
    if not known:
        return code, []
    return blocks.reapply_field_releases(code, known, state.get("api") or [],
                                         HeaderFacts.from_dict(state.get("header_facts")))
