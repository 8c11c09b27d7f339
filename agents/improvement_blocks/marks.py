"""Where an improvement's blocks are in a harness: their marks, their ends, the one a crash is in.

An improvement adds several blocks, each opened by ``/* LF improve: <direction> */``
(:data:`agents.harness_marks.IMPROVE_MARK`). A crash's line in the harness names the block, and
so the direction, that caused it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agents.harness_marks import IMPROVE_MARK

MARK = re.compile(rf"/\*\s*{re.escape(IMPROVE_MARK)}\s*(.+?)\s*\*/")
HARNESS_ENTRY = "LLVMFuzzerTestOneInput"


@dataclass(frozen=True)
class CrashedBlock:
    """The block of an improvement a crash happened in, with what a repair of it reads.

    Attributes:
        code: The harness version that crashed.
        index: The line index of the block's mark in ``code``.
        direction: The block's direction (the text of its mark).
        best_code: The best version's code: a block it has is not the change's.
        released: The directions of the change's blocks a release already repaired.
        frames: The crash's stack, function names innermost first.
    """

    code: str
    index: int
    direction: str
    best_code: str = ""
    released: tuple[str, ...] = ()
    frames: tuple[str, ...] = ()


def block_at(code: str, line: int) -> tuple[str, int]:
    """The direction of the block holding line ``line`` (1-based) of ``code``, and its mark's line index.

    The nearest mark above the line (before any ``@LF:`` section marker) names the block.
    ``("", -1)`` when the line is in no block.
    """
    lines = code.splitlines()[:line]
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


def sibling_blocks(crashed: CrashedBlock, lines: list[str]) -> list[int]:
    """The mark lines of the change's other new blocks (not in the best version, not repaired yet)."""
    old = set(MARK.findall(crashed.best_code))
    return [i for i, line in enumerate(lines) if i != crashed.index and (m := MARK.search(line))
            and m.group(1) not in old and m.group(1) not in crashed.released]


def direction_of(line: str) -> str:
    """The direction a mark line opens its block with ('' when the line holds no mark)."""
    found = MARK.search(line)
    return found.group(1) if found else ""


def called(direction: str) -> str:
    """The function a direction calls (``call F on ...``), '' for a free-form one."""
    found = re.match(r"call (\w+)\b", direction)
    return found.group(1) if found else ""
