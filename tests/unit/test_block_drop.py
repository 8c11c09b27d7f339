"""A misuse crash inside one of an improvement's blocks drops that block, not the improvement.

The other blocks the improvement added are built and measured as the next version; the
crashed block's direction is Failed. A crash outside every block, or in the change's only
block, still goes back to the best version.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_graph.context import Context
from agent_graph.memory.local_memory import failed_directions
from agent_graph.routing import Limits, route
from nodes.block_drop import without_block
from nodes.memory_manager import revert_failed
from tests.unit.test_crashed_block import DIRECTIONS, HARNESS, state


def _state(tmp_path: Path, line: int, code: str = HARNESS) -> dict[str, Any]:
    return {**state(tmp_path, line), "harness_code": code, "counters": {"harness_versions": 2}}


def test_the_crashed_block_goes_and_the_others_are_built_as_the_next_version(tmp_path: Path) -> None:
    update = revert_failed(_state(tmp_path, 11), Context())  # type: ignore[arg-type]
    code = update["harness_code"]
    assert "ed_copy_content" not in code and "ed_free_content" not in code
    assert "ed_dump(doc, &out);" in code and "/* @LF:CLEANUP */" in code
    assert code.count("{") == code.count("}")
    assert update["harness_version"] == 3 and update["counters"]["dropped_blocks"] == 1
    assert update["last_change"]["directions"] == [DIRECTIONS[0]]
    assert failed_directions(update["local_memory"]) == ["call ed_copy_content on result"]
    assert "improvement.block_dropped" in (tmp_path / "events.jsonl").read_text()
    merged = {**_state(tmp_path, 11), **update, "counters": {"harness_versions": 3},
              "analysis": {"archetype": "stateless_parser"}}
    decision = route(merged, Limits())  # type: ignore[arg-type]
    assert decision.next == "build", decision


def test_the_last_block_of_a_change_is_reverted_with_the_change(tmp_path: Path) -> None:
    one = HARNESS.replace("  /* LF improve: call ed_dump on result */\n", "")
    update = revert_failed(_state(tmp_path, 10, one), Context())  # type: ignore[arg-type]
    assert update["harness_version"] == 1 and update["counters"]["dropped_improvements"] == 1


def test_a_crash_outside_the_blocks_reverts_the_whole_change(tmp_path: Path) -> None:
    update = revert_failed(_state(tmp_path, 14), Context())  # type: ignore[arg-type]
    assert update["harness_version"] == 1


def test_braces_in_strings_and_comments_do_not_end_a_block() -> None:
    code = ('  /* LF improve: call f on x */\n  if (x != NULL) {\n    f(x, "}", \'{\'); /* } */\n'
            '  }\n  after();\n')
    assert without_block(code, 0) == "  after();\n"
    assert without_block("  /* LF improve: g */\n  g();\n", 0) is None
