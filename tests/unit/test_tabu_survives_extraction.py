"""The tabu list survives the local-memory extraction that follows a measured version.

Seen on a development-set library: an improvement whose four directions crashed was recorded as
one failed direction joining them (over the schema's 300 characters). The extractor copied it,
its reply failed validation, the retry turn (which only says what was wrong) was answered as an
empty task, and that reply replaced the direction list whole: the next improvement repeated the
same four crashing directions. The API here is invented.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from agent_graph.memory.local_memory import (
    apply_extraction,
    empty_local_memory,
    failed_directions,
    record_failed_attempt,
)
from agent_graph.memory.local_memory_schema import MAX_LINE, Direction
from agents.local_memory_extractor import LocalMemoryExtractor
from agents.offline.model import OfflineChatModel
from agents.parsing import RETRY_NOTE
from fuzzkit.api import FunctionDecl, Param
from prompts import render

TARGET = FunctionDecl("shp_mesh_new", "shp_mesh *", (Param("data", "const uint8_t *"), Param("n", "size_t")),
                      "shp.h")
STEPS = [f"call shp_mesh_{verb} on result (shp_triangle_mesh)" for verb in
         ("reset", "info", "next_frame", "simplify", "weld_vertices", "export")]
BASE = ("#include <stdint.h>\n#include \"shp.h\"\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {\n"
        "  shp_mesh *m = shp_mesh_new(d, n);\n  shp_mesh_free(m);\n  return 0;\n}\n")
BETTER = BASE.replace("  shp_mesh_free(m);", "  shp_mesh_area(m);\n  shp_mesh_free(m);")


def _after_two_failures() -> dict[str, Any]:
    memory = record_failed_attempt(empty_local_memory(), "call shp_mesh_merge on a new shp_mesh",
                                   "crashed the harness (harness misuse)", "v2")
    return record_failed_attempt(memory, "; ".join(STEPS), "did not run cleanly after fix rounds", "v3")


def _variables(memory: dict[str, Any]) -> dict[str, str]:
    state = {"target": TARGET.to_dict(), "api": [TARGET.to_dict()], "headers": ["shp.h"],
             "analysis": {"archetype": "object_lifecycle"}, "local_memory": memory,
             "last_change": {"kind": "improve", "directions": ["call shp_mesh_area on result (shp_mesh)"]}}
    return LocalMemoryExtractor.variables(state, {"version": 1, "code": BASE, "lines_percent": 2.0},
                                          {"version": 4, "code": BETTER, "lines_percent": 4.5},
                                          noise=0.5, iteration=2)


def test_a_failed_change_of_many_directions_is_recorded_within_the_schema() -> None:
    rows = _after_two_failures()["attempted_directions"]
    assert len("; ".join(STEPS)) > MAX_LINE
    assert all(len(r["direction"]) <= MAX_LINE for r in rows)
    assert [Direction.model_validate(r).outcome for r in rows] == ["Failed", "Failed"]
    assert rows[1]["direction"].startswith(STEPS[0]) and rows[1]["direction"].endswith("...")


def test_the_extraction_after_a_measured_version_keeps_both_failed_directions() -> None:
    memory = _after_two_failures()
    agent = LocalMemoryExtractor(OfflineChatModel())
    result = agent.run(_variables(memory), [])
    out, why = apply_extraction(memory, result.output)
    assert set(failed_directions(memory)) <= set(failed_directions(out))
    assert any(r["outcome"] == "Success" and "shp_mesh_area" in r["direction"]
               for r in out["attempted_directions"]), why
    assert result.usage["calls"] == 1  # the first reply was valid: no retry


def test_a_retry_turn_is_answered_from_the_task_before_it() -> None:
    system, user = render("local_memory_extraction", _variables(_after_two_failures()))
    model = OfflineChatModel()
    first = model.invoke([SystemMessage(system), HumanMessage(user)]).content
    retry = HumanMessage(f"{RETRY_NOTE}: the reply has no JSON object. Reply again.")
    retried = model.invoke([SystemMessage(system), HumanMessage(user), AIMessage("{}"), retry]).content
    assert retried == first
    assert "shp_mesh_merge" in retried


def test_a_reply_that_forgets_a_failed_direction_does_not_erase_it() -> None:
    memory = _after_two_failures()
    reply = LocalMemoryExtractor.output_model.model_validate({"updated_directions": [
        {"direction": "unrecorded change", "outcome": "Noise"}], "new_memory_item": None})
    out, why = apply_extraction(memory, reply)
    assert failed_directions(out) == failed_directions(memory)
    assert "2 kept that the reply left out" in why
