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
from agents.improvement_blocks import without_block
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


TWINS = """\
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* @LF:CALL */
  obj = ed_eval(data, size);
  /* LF improve: call ed_convert_number on result */
  if (obj != NULL) {
    obj = ed_convert_number(obj);
  }
  /* LF improve: call ed_to_text on result */
  if (obj != NULL) {
    ed_print(ed_to_text(obj));
  }
  /* LF improve: call ed_convert_string on result */
  if (obj != NULL) {
    obj = ed_convert_string(obj);
  }
  /* @LF:CLEANUP */
  ed_free(obj);
  return 0;
}
"""
TWIN_API = [{"name": n, "return_type": r, "params": [{"name": "obj", "type": "ed_obj_p"}]}
            for n, r in (("ed_convert_number", "ed_obj_p"), ("ed_convert_string", "ed_obj_p"),
                         ("ed_to_text", "char *"), ("ed_free", "void"))]
FACTS = {"typedefs": [{"name": "ed_obj_p", "underlying": "struct ed_obj *", "canonical": "struct ed_obj *"}]}


def test_the_crashed_calls_twins_in_the_same_change_go_with_it(tmp_path: Path) -> None:
    """A block calling a function with the crashed call's signature and name family fails the
    same way: it is dropped in the same step, not crashed on one version later."""
    directions = ["call ed_convert_number on result", "call ed_to_text on result",
                  "call ed_convert_string on result"]
    crashed = {**_state(tmp_path, 6, TWINS), "api": TWIN_API, "header_facts": FACTS,
               "last_change": {"kind": "improve", "version": 2, "directions": directions}}
    update = revert_failed(crashed, Context())  # type: ignore[arg-type]
    code = update["harness_code"]
    assert "ed_convert" not in code and "ed_to_text(obj)" in code
    assert update["last_change"]["directions"] == ["call ed_to_text on result"]
    assert update["counters"]["dropped_blocks"] == 2
    assert failed_directions(update["local_memory"]) == ["call ed_convert_number on result"]
    # without the twin's block the same crash drops the one block
    alone = {**crashed, "header_facts": {}}  # no Types: the typedef is not known to be a pointer
    assert revert_failed(alone, Context())["counters"]["dropped_blocks"] == 1  # type: ignore[arg-type]
    # nothing of the change left once the twins go: the whole change goes back
    pair = TWINS.replace("  /* LF improve: call ed_to_text on result */\n  if (obj != NULL) {\n"
                         "    ed_print(ed_to_text(obj));\n  }\n", "")
    assert revert_failed({**crashed, "harness_code": pair}, Context())["harness_version"] == 1  # type: ignore[arg-type]
