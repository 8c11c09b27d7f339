"""The blocks an improvement adds to a harness: found, dropped, or repaired by a release.

Each block an improvement adds opens with ``/* LF improve: <direction> */``. After a crash in
one of them, the graph keeps what it can of the change: a leak of what the block's call returned
(:mod:`.results`) or left in a field of an object it was given (:mod:`.fields`) is released in
the block; any other crash drops the block and its twins' blocks (:mod:`.drop`). A later
improvement that adds such a call again gets the run's releases up front. Whatever the model:
these are C edits from the header facts and the sanitizer's stack, and the memory manager and
enhancer nodes (``nodes.improvement_blocks``) only carry state to them and back.
"""

from agents.improvement_blocks.drop import drop_crashed_block
from agents.improvement_blocks.fields import reapply_field_releases, release_left_in_field
from agents.improvement_blocks.marks import (
    HARNESS_ENTRY,
    CrashedBlock,
    block_at,
    block_end,
    called,
    without_block,
)
from agents.improvement_blocks.results import Repair, reapply_releases, release_leaked_result

__all__ = [
    "HARNESS_ENTRY",
    "CrashedBlock",
    "Repair",
    "block_at",
    "block_end",
    "called",
    "drop_crashed_block",
    "reapply_field_releases",
    "reapply_releases",
    "release_leaked_result",
    "release_left_in_field",
    "without_block",
]
