"""An improvement block whose call's result leaks keeps the block and releases the result.

A block that calls ``char *lib_build_uri(const char *, const char *)`` and never releases what it
returns leaks on every input: the header says nothing of who owns the string (the documentation
is in the source), but LeakSanitizer's allocation stack, ``malloc <- ... <- lib_build_uri <-
LLVMFuzzerTestOneInput``, does. Before such a block is dropped (:mod:`nodes.block_drop`), the next
version releases that result inside the block: with the releaser the header ties to the function
or its type, else the library's own ``<prefix>_free(void *)``, else ``free``
(:func:`fuzzkit.release_names.result_releaser`). A block repaired once
that crashes again is dropped as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from agent_graph.state import FuzzState, counter
from fuzzkit.api import FunctionDecl
from fuzzkit.api_twins import slot_twins
from fuzzkit.header_facts import HeaderFacts
from fuzzkit.release_names import paired_releaser, result_releaser
from long_term_memory.experience import InjectItem
from long_term_memory.experience.lessons import RELEASE_NAME, parse_action
from nodes.block_drop import MARK, block_end, crashed_mark

HARNESS_ENTRY = "LLVMFuzzerTestOneInput"
_RELEASE = re.compile(rf"\b{RELEASE_NAME}\s*\(", re.I)


def release_leaked_result(state: FuzzState) -> tuple[dict[str, Any], str, dict[str, str]] | None:
    """The next version with the crashed block's leaking result released, the block's direction, and what.

    The change's other new blocks that keep a result of the same type from another of the
    library's functions release it too (an improvement that added four string builders leaks
    four times, one run each, otherwise). What was released is ``{function, type, releaser}``
    (the leaking call, its return type, the releaser used): the run's events keep it, and the
    experience extractor turns it into a lesson that releases such results up front in the next
    harness. None unless the crash is a leak allocated under a call the block assigns to a
    variable it never releases, or the block was repaired this way before.
    """
    crash = state.get("crash") or {}
    if crash.get("kind") != "leak":
        return None
    direction, index = crashed_mark(state)
    change = dict(state.get("last_change") or {})
    if not direction or direction in (change.get("released") or []):
        return None
    frames = [f.get("function") or "" for f in crash.get("frames") or []]
    # The frame under the harness's: the library function the block called.
    called = frames[frames.index(HARNESS_ENTRY) - 1] if HARNESS_ENTRY in frames[1:] else ""
    api = state.get("api") or []
    decls = {d.name: d for d in map(FunctionDecl.from_dict, api)}
    callee, facts = decls.get(called), HeaderFacts.from_dict(state.get("header_facts"))
    releaser = result_releaser(callee, facts, api) if callee is not None else None
    lines = (state.get("harness_code") or "").splitlines(keepends=True)
    if callee is not None and releaser is None:  # a record handed back through `T **`
        paired = paired_releaser(frames[:frames.index(called)], list(decls.values()))
        if paired and _release_out_in_block(lines, index, callee, paired):
            return (repaired_version(state, lines, [direction]), direction,
                    {"function": callee.name, "type": callee.return_type.strip(), "releaser": paired})
    kept = kept_results(state)
    if callee is None or releaser is None or callee.name in kept:
        return None  # a lesson saw a release of what it returns crash: the object owns it
    siblings = sibling_blocks(state, lines, index)
    alike = [d for d in decls.values()
             if _spelled(d.return_type) == _spelled(callee.return_type) and d.name not in kept]
    def release_of(fn: FunctionDecl) -> str | None:
        return releaser if fn is callee else result_releaser(fn, facts, api)

    repaired: list[str] = []
    for mark in sorted([index, *siblings], reverse=True):  # bottom up: an insertion moves what is below
        if _release_in_block(lines, mark, [callee] if mark == index else alike, release_of):
            repaired.append(MARK.search(lines[mark]).group(1))  # type: ignore[union-attr]
    if direction not in repaired:
        return None
    return (repaired_version(state, lines, repaired), direction,
            {"function": callee.name, "type": callee.return_type.strip(), "releaser": releaser})


def kept_results(state: FuzzState) -> set[str]:
    """The functions whose results a shown ``keep_result`` lesson says stay their object's.

    The lesson's function and its slot twins (:func:`fuzzkit.api_twins.slot_twins`), when the
    library has it: a block that keeps such a result never releases it.
    """
    exp = (state.get("extras") or {}).get("experience") or {}
    api = [FunctionDecl.from_dict(d) for d in state.get("api") or []]
    canonical = {t.name: t.canonical for t in HeaderFacts.from_dict(state.get("header_facts")).typedefs}
    out: set[str] = set()
    for item in (InjectItem.from_dict(i) for i in exp.get("shown", [])):
        action = parse_action(item.lesson.get("action"))
        name = action.args["function"] if action is not None and action.verb == "keep_result" else ""
        if name and any(f.name == name for f in api):
            out.update([name, *slot_twins(name, api, canonical)])
    return out


def repaired_version(state: FuzzState, lines: list[str], repaired: list[str]) -> dict[str, Any]:
    """The update to the next version ``lines``, with the ``repaired`` blocks' directions noted.

    A block noted as released that crashes again is dropped (``repaired`` is bottom-up).
    """
    change = dict(state.get("last_change") or {})
    version = counter(state, "harness_versions") + 1
    change.update(version=version, from_version=state.get("harness_version"),
                  released=[*(change.get("released") or []), *reversed(repaired)])
    counters = {"harness_versions": 1, "repaired_blocks": len(repaired)}
    return {"harness_code": "".join(lines), "harness_version": version, "last_change": change,
            "fix_rounds": 0, "counters": counters}


def sibling_blocks(state: FuzzState, lines: list[str], index: int) -> list[int]:
    """The mark lines of the change's other new blocks (not in the best version, not repaired yet)."""
    old = set(MARK.findall((state.get("best") or {}).get("code") or ""))
    released = (state.get("last_change") or {}).get("released") or []
    return [i for i, line in enumerate(lines) if i != index and (m := MARK.search(line))
            and m.group(1) not in old and m.group(1) not in released]


def remembered_releases(state: FuzzState, released: dict[str, str]) -> dict[str, Any]:
    """The ``extras`` update that keeps ``{function: releaser}`` of this repair for the run."""
    known = dict((state.get("extras") or {}).get("released_results") or {})
    return {"released_results": {**known, released["function"]: released["releaser"]}}


def reapply_releases(code: str, state: FuzzState) -> tuple[str, list[str]]:
    """``code`` with the releases this run's repairs found, in the blocks that call those functions again.

    An improvement whose repaired block measured as noise goes back to the best version, and the
    next one may add the same call, or another returning the same type: without the release the
    repair found, it leaks again. The run remembers ``{function: releaser}``
    (``extras["released_results"]``, see :func:`remembered_releases`); each block that keeps the
    result of such a function, or of one returning the same type, unreleased gets it (that
    function's own releaser from the header when it has one). Returns the code and the functions
    whose results were released.
    """
    known = (state.get("extras") or {}).get("released_results") or {}
    if not known:
        return code, []
    api = state.get("api") or []
    decls = list(map(FunctionDecl.from_dict, api))
    types = {_spelled(d.return_type) for d in decls if d.name in known}
    alike = [d for d in decls if d.name in known or _spelled(d.return_type) in types]
    if not alike:
        return code, []
    facts = HeaderFacts.from_dict(state.get("header_facts"))

    def release_of(fn: FunctionDecl) -> str | None:
        return known.get(fn.name) or result_releaser(fn, facts, api)

    lines = code.splitlines(keepends=True)
    done: list[str] = []
    marks = [i for i, line in enumerate(lines) if MARK.search(line)]
    for mark in reversed(marks):  # bottom up: an insertion moves what is below
        for fn in alike:
            if _release_in_block(lines, mark, [fn], release_of):
                done.append(fn.name)
    return "".join(lines), sorted(set(done))


def _spelled(ctype: str) -> str:
    return re.sub(r"\s+", "", ctype)


def _release_in_block(lines: list[str], mark: int, fns: list[FunctionDecl],
                      releaser_of: Callable[[FunctionDecl], str | None]) -> bool:
    """Whether a release was added to the block marked on line ``mark``.

    The first result of one of ``fns`` the block keeps and never releases is released at its end,
    with what ``releaser_of`` gives for that function.
    """
    end = block_end(lines, mark)
    if end is None:
        return False
    block = "".join(lines[mark:end])
    for fn in fns:
        assigned = re.search(rf"\b([A-Za-z_]\w*)\s*=\s*(?:\([^()]*\)\s*)?{re.escape(fn.name)}\s*\(", block)
        if assigned is None or _released(block, assigned.group(1)):
            continue
        releaser = releaser_of(fn)
        if releaser is None:
            continue
        var = assigned.group(1)
        indent = re.match(r"[ \t]*", lines[end]).group(0) + "  "  # type: ignore[union-attr]
        lines.insert(end, f"{indent}if ({var} != NULL) {releaser}((void *){var});"
                          f" /* LeakSanitizer: {fn.name}'s result is the caller's */\n")
        return True
    return False


def _release_out_in_block(lines: list[str], mark: int, fn: FunctionDecl, releaser: str) -> bool:
    """Whether the block marked on ``mark`` now releases what its call of ``fn`` wrote through ``&var``.

    The record a ``T **`` parameter hands back is released at the block's end with ``releaser``
    (the function the leak's allocation stack pairs with its allocator), unless the block does.
    """
    end = block_end(lines, mark)
    call = re.search(rf"\b{re.escape(fn.name)}\s*\(([^;]*)\)\s*;", "".join(lines[mark:end or mark]))
    if end is None or call is None:
        return False
    outs = {i for i, p in enumerate(fn.params) if p.type.count("*") == 2 and "const" not in p.type}
    args = [a.strip() for a in call.group(1).split(",")]
    var = next((m.group(1) for i, a in enumerate(args) if i in outs
                and (m := re.fullmatch(r"(?:\([^()]*\)\s*)?&\s*([A-Za-z_]\w*)", a))), None)
    if var is None or _released("".join(lines[mark:end]), var):
        return False
    indent = re.match(r"[ \t]*", lines[end]).group(0) + "  "  # type: ignore[union-attr]
    lines.insert(end, f"{indent}if ({var} != NULL) {releaser}((void *){var});"
                      f" /* LeakSanitizer: what {fn.name} hands back is the caller's */\n")
    return True


def _released(block: str, var: str) -> bool:
    """Whether ``block`` already hands ``var`` to a release-like call."""
    return any(re.match(rf"\s*(?:\([^()]*\)\s*)?{re.escape(var)}\s*\)", block[m.end():])
               for m in _RELEASE.finditer(block))
