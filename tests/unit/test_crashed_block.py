"""An improvement that crashed fails as the block the crash happened in, not as all it added.

An improvement adds several blocks (``/* LF improve: <direction> */``); when one of them
crashes, only its direction becomes ``Failed`` in the local memory, so the next improvement
does not add that call again and may still add the others. A direction that names several
calls (an LLM's change, several blocks joined) makes each of them tabu, not only the first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_graph.context import Context
from agent_graph.memory.local_memory import failed_directions
from agent_graph.memory.local_memory_render import render_local_memory
from agents.offline.local_memory import tabu_names
from agents.offline.prompt_reader import read_prompt
from nodes.memory_manager import crashed_block, revert_failed

HARNESS = """\
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* @LF:CALL */
  doc = ed_read(data, size);
  /* LF improve: call ed_dump on result */
  if (doc != NULL) {
    ed_dump(doc, &out);
  }
  /* LF improve: call ed_copy_content on result */
  if (doc != NULL) {
    ed_content *c = ed_copy_content(doc);
    ed_free_content(c);
  }
  /* @LF:CLEANUP */
  ed_free(doc);
  return 0;
}
"""
DIRECTIONS = ["call ed_dump on result (ed_doc)", "call ed_copy_content on result (ed_doc)"]
BEST = {"version": 1, "code": "int LLVMFuzzerTestOneInput(void) { return 0; }", "lines_percent": 5.0,
        "build": {"version": 1, "ok": True}, "run": {"version": 1, "usable": True}}


def state(work_dir: Path, line: int) -> dict[str, Any]:
    frames = [{"function": "ed_free_content", "file": "ed.c", "line": 40},
              {"function": "LLVMFuzzerTestOneInput", "file": "harness.c", "line": line}]
    return {"best": BEST, "harness_version": 2, "harness_code": HARNESS, "phase": "optimization",
            "build": {"version": 2, "ok": True}, "run": {"version": 2, "crashed": True, "usable": False},
            "crash": {"version": 2, "kind": "bad-free", "frames": frames},
            "last_change": {"kind": "improve", "version": 2, "directions": DIRECTIONS},
            "counters": {}, "project": "p", "function": "ed_read", "work_dir": str(work_dir)}


def test_the_crashed_block_alone_becomes_a_failed_direction(tmp_path: Path) -> None:
    assert crashed_block(state(tmp_path, 11)) == "call ed_copy_content on result"  # type: ignore[arg-type]
    assert crashed_block(state(tmp_path, 14)) == ""  # type: ignore[arg-type]  # in the cleanup section
    update = revert_failed(state(tmp_path, 11), Context())  # type: ignore[arg-type]
    assert failed_directions(update["local_memory"]) == ["call ed_copy_content on result"]
    update = revert_failed(state(tmp_path, 14), Context())  # type: ignore[arg-type]
    assert failed_directions(update["local_memory"]) == ["; ".join(DIRECTIONS)]


def test_every_call_a_failed_direction_names_is_tabu() -> None:
    memory = {"attempted_directions": [{"direction": "; ".join(DIRECTIONS), "outcome": "Failed",
                                        "source_ref": "v2", "evidence": "did not run cleanly (bad-free)"}]}
    facts = read_prompt("ROLE: enhancer", "## Attempted directions\n" + render_local_memory(memory))
    names = ["ed_read", "ed_dump", "ed_copy_content", "ed_free"]
    assert tabu_names(facts, names) == ["ed_copy_content", "ed_dump"]


def test_the_improve_prompt_asks_a_model_for_the_mark_the_reader_looks_for() -> None:
    from agents.harness_marks import IMPROVE_MARK
    from prompts import load_template

    assert f"/* {IMPROVE_MARK} <the direction" in load_template("enhancer_improve")[1]
