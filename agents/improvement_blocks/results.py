"""An improvement block whose call's result leaks keeps the block and releases the result.

A block that calls ``char *lib_build_uri(const char *, const char *)`` and never releases what it
returns leaks on every input: the header says nothing of who owns the string (the documentation
is in the source), but LeakSanitizer's allocation stack, ``malloc <- ... <- lib_build_uri <-
LLVMFuzzerTestOneInput``, does. Before such a block is dropped (:mod:`.drop`), the next version
releases that result inside the block: with the releaser the header ties to the function or its
type, else the library's own ``<prefix>_free(void *)``, else ``free``
(:func:`fuzzkit.release_names.result_releaser`). A record handed back through a ``T **``
parameter is released with the function the allocation stack pairs with its allocator
(:func:`fuzzkit.release_names.paired_releaser`). A block repaired once that crashes again is
dropped as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from agents.improvement_blocks.marks import (
    HARNESS_ENTRY,
    MARK,
    CrashedBlock,
    block_end,
    direction_of,
    sibling_blocks,
)
from fuzzkit.api import FunctionDecl
from fuzzkit.header_facts import HeaderFacts
from fuzzkit.release_names import paired_releaser, result_releaser
from long_term_memory.experience.lessons import RELEASE_NAME

_RELEASE = re.compile(rf"\b{RELEASE_NAME}\s*\(", re.I)


class Repair(NamedTuple):
    """A repaired harness: its code, the repaired blocks' directions (bottom up), and what was released."""

    code: str
    repaired: list[str]
    released: dict[str, str]


def release_leaked_result(crashed: CrashedBlock, api: list[dict[str, Any]], facts: HeaderFacts,
                          kept: set[str]) -> Repair | None:
    """The harness with the crashed block's leaking result released, or None.

    The change's other new blocks that keep a result of the same type from another of the
    library's functions release it too (an improvement that added four string builders leaks
    four times, one run each, otherwise). What was released is ``{function, type, releaser}``
    (the leaking call, its return type, the releaser used). ``kept``: the functions whose
    results stay their object's (a shown ``keep_result`` lesson): never released. None unless
    the crash is a leak allocated under a call the block assigns to a variable it never
    releases, and the block was not repaired this way before.
    """
    if crashed.direction in crashed.released:
        return None
    frames, index = list(crashed.frames), crashed.index
    # The frame under the harness's: the library function the block called.
    called = frames[frames.index(HARNESS_ENTRY) - 1] if HARNESS_ENTRY in frames[1:] else ""
    decls = {d.name: d for d in map(FunctionDecl.from_dict, api)}
    callee = decls.get(called)
    releaser = result_releaser(callee, facts, api) if callee is not None else None
    lines = crashed.code.splitlines(keepends=True)
    if callee is not None and releaser is None:  # a record handed back through `T **`
        paired = paired_releaser(frames[:frames.index(called)], list(decls.values()))
        if paired and _release_out_in_block(lines, index, callee, paired):
            return Repair("".join(lines), [crashed.direction],
                          {"function": callee.name, "type": callee.return_type.strip(), "releaser": paired})
    if callee is None or releaser is None or callee.name in kept:
        return None  # a lesson saw a release of what it returns crash: the object owns it
    alike = [d for d in decls.values()
             if _spelled(d.return_type) == _spelled(callee.return_type) and d.name not in kept]

    def release_of(fn: FunctionDecl) -> str | None:
        return releaser if fn is callee else result_releaser(fn, facts, api)

    repaired: list[str] = []
    for mark in sorted([index, *sibling_blocks(crashed, lines)], reverse=True):  # bottom up: an insertion
        # moves what is below
        if _release_in_block(lines, mark, [callee] if mark == index else alike, release_of):
            repaired.append(direction_of(lines[mark]))
    if crashed.direction not in repaired:
        return None
    return Repair("".join(lines), repaired,
                  {"function": callee.name, "type": callee.return_type.strip(), "releaser": releaser})


def reapply_releases(code: str, known: Mapping[str, str], api: list[dict[str, Any]],
                     facts: HeaderFacts) -> tuple[str, list[str]]:
    """``code`` with the releases this run's repairs found, in the blocks that call those functions again.

    An improvement whose repaired block measured as noise goes back to the best version, and the
    next one may add the same call, or another returning the same type: without the release the
    repair found, it leaks again. ``known``: ``{function: releaser}`` of the run's repairs; each
    block that keeps the result of such a function, or of one returning the same type,
    unreleased gets it (that function's own releaser from the header when it has one). Returns
    the code and the functions whose results were released.
    """
    if not known:
        return code, []
    decls = list(map(FunctionDecl.from_dict, api))
    types = {_spelled(d.return_type) for d in decls if d.name in known}
    alike = [d for d in decls if d.name in known or _spelled(d.return_type) in types]
    if not alike:
        return code, []

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
