"""An improvement that crashes in one of its blocks loses that block, not the whole change.

When the harness's own frame in a misuse crash lies in one of the blocks an improvement added,
the next version is the same harness without that block; the other blocks, which may be what
the improvement gains, are built and measured. The change's blocks that call a twin of the
crashed block's call (a sibling parser of the same context, a sibling converter of the same
object, a sibling mode of the same cipher context: :mod:`fuzzkit.api_twins`) go with it, since
they fail the same way. Only when the crash is outside every block, or nothing of the change
would be left, does the whole improvement go back to the best version.
"""

from __future__ import annotations

from collections.abc import Sequence

from agents.improvement_blocks.marks import MARK, CrashedBlock, called, direction_of, without_block
from fuzzkit.api import FunctionDecl
from fuzzkit.api_twins import twins
from fuzzkit.header_facts import HeaderFacts


def drop_crashed_block(crashed: CrashedBlock, api: Sequence[FunctionDecl],
                       facts: HeaderFacts) -> tuple[str, list[str]] | None:
    """The harness without the crashed block and its twins' blocks, and the directions dropped.

    One direction per dropped block. None when the crashed block is not one of the change's
    (the best version has it), or nothing of the change would be left.
    """
    lines = crashed.code.splitlines()
    old = [m.group(1) for m in MARK.finditer(crashed.best_code)]
    new = [i for i, line in enumerate(lines) if (m := MARK.search(line)) and m.group(1) not in old]
    name = called(crashed.direction)
    family = set(twins(name, list(api), {t.name: t.canonical for t in facts.typedefs}) if name else [])
    drop = [i for i in new if i == crashed.index or called(direction_of(lines[i])) in family]
    if crashed.index not in new or len(new) - len(drop) < 1:
        return None
    smaller: str | None = crashed.code
    for at in sorted(drop, reverse=True):  # from the bottom up: the lines above keep their index
        smaller = without_block(smaller, at) if smaller is not None else None
    if smaller is None:
        return None
    return smaller, [direction_of(lines[i]) for i in drop]
