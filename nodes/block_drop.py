"""An improvement that crashes in one of its blocks loses that block, not the whole change.

An improvement adds several blocks, each opened by ``/* LF improve: <direction> */``. When the
harness's own frame in a misuse crash lies in one of them, the next version is the same harness
without that block (its direction is recorded as Failed); the other blocks, which may be what
the improvement gains, are built and measured. Only when the crash is outside every block, or
the block is the change's last one, does the whole improvement go back to the best version.
"""

from __future__ import annotations

import re
from typing import Any

from agent_graph.state import FuzzState, counter
from agents.harness_marks import IMPROVE_MARK
from fuzzkit.api import FunctionDecl
from fuzzkit.api_twins import twins
from fuzzkit.header_facts import HeaderFacts

MARK = re.compile(rf"/\*\s*{re.escape(IMPROVE_MARK)}\s*(.+?)\s*\*/")


def crashed_mark(state: FuzzState) -> tuple[str, int]:
    """The direction of the block the crash of this version happened in, and its mark's line index.

    The harness's own frame gives the line; the nearest mark above it (before any ``@LF:``
    section marker) names the block. ``("", -1)`` when the crash is elsewhere.
    """
    crash = state.get("crash") or {}
    if not (state.get("run") or {}).get("crashed") or crash.get("version") != state.get("harness_version"):
        return "", -1
    line = next((f.get("line") for f in crash.get("frames") or []
                 if f.get("function") == "LLVMFuzzerTestOneInput"), None)
    lines = (state.get("harness_code") or "").splitlines()[: int(line or 0)]
    for index in range(len(lines) - 1, -1, -1):
        found = MARK.search(lines[index])
        if found or "@LF:" in lines[index]:
            return (found.group(1), index) if found else ("", -1)
    return "", -1


def block_end(lines: list[str], mark_index: int) -> int | None:
    """The index of the line closing the block marked on line ``mark_index`` (None if it cannot tell)."""
    depth, opened = 0, False
    for end in range(mark_index + 1, len(lines)):
        text = re.sub(r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'|/\*.*?\*/|//.*", "", lines[end])
        depth += text.count("{") - text.count("}")
        opened = opened or "{" in text
        if opened and depth <= 0:
            return end
        if not opened and text.strip():
            return None  # a mark not followed by its block's opening line
    return None


def without_block(code: str, mark_index: int) -> str | None:
    """``code`` without the block whose mark is on line ``mark_index`` (None if it cannot tell)."""
    lines = code.splitlines(keepends=True)
    end = block_end(lines, mark_index)
    return None if end is None else "".join(lines[:mark_index] + lines[end + 1:])


def drop_crashed_block(state: FuzzState) -> tuple[dict[str, Any], str] | None:
    """The next version without the block the crash happened in, and that block's direction.

    The change's blocks that call a twin of the crashed block's call go with it (a sibling parser
    of the same context, a sibling converter of the same object, a sibling mode of the same
    cipher context: see :mod:`fuzzkit.api_twins`), since they fail the same way. None when the
    crash is outside the change's blocks, or nothing of the change would be left.
    """
    direction, index = crashed_mark(state)
    code = state.get("harness_code") or ""
    best = (state.get("best") or {}).get("code") or ""
    if not direction:
        return None
    lines = code.splitlines()
    old = [m.group(1) for m in MARK.finditer(best)]
    new = [i for i, line in enumerate(lines) if (m := MARK.search(line)) and m.group(1) not in old]
    family = set(_twins_of(state, direction))
    drop = [i for i in new if i == index or _called(MARK.search(lines[i]).group(1)) in family]  # type: ignore[union-attr]
    if index not in new or len(new) - len(drop) < 1:
        return None
    smaller: str | None = code
    for at in sorted(drop, reverse=True):  # from the bottom up: the lines above keep their index
        smaller = without_block(smaller, at) if smaller is not None else None
    if smaller is None:
        return None
    gone = {MARK.search(lines[i]).group(1) for i in drop}  # type: ignore[union-attr]
    version = counter(state, "harness_versions") + 1
    change = dict(state.get("last_change") or {})
    change.update(version=version, from_version=state.get("harness_version"),
                  directions=[d for d in change.get("directions") or [] if d.split(" (")[0] not in gone])
    return ({"harness_code": smaller, "harness_version": version, "last_change": change, "fix_rounds": 0,
             "counters": {"harness_versions": 1, "dropped_blocks": len(drop)}}, direction)


def _called(direction: str) -> str:
    """The function a direction calls (``call F on ...``), '' for a free-form one."""
    found = re.match(r"call (\w+)\b", direction)
    return found.group(1) if found else ""


def _twins_of(state: FuzzState, direction: str) -> list[str]:
    """The twins of the function the crashed direction calls, by the header's typedefs."""
    name = _called(direction)
    if not name:
        return []
    api = [FunctionDecl.from_dict(d) for d in state.get("api") or []]
    facts = HeaderFacts.from_dict(state.get("header_facts"))
    return twins(name, api, {t.name: t.canonical for t in facts.typedefs})
