"""A dropped improvement takes its citations with it: what only it cited was not used.

An experience item without an action counts as used when a reply cited it; a reply whose harness
was reverted (it broke the harness, or did not raise coverage) did not change the harness that
was measured, so its citations must not reach the Gatekeeper's validation as "used". An
improvement dropped because it broke the harness is also counted, so the run is extracted
even beside a strong answer (it is a failure the bank did not prevent).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_graph.context import Context
from long_term_memory.experience.trajectory import outcome_from_state
from nodes.experience import newly_cited
from nodes.memory_manager import finalize, revert_failed

BEST = {"version": 1, "code": "int LLVMFuzzerTestOneInput(void) { return 0; }", "lines_percent": 5.0,
        "build": {"version": 1, "ok": True}, "run": {"version": 1, "usable": True}}


def state(work_dir: Path, **over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "best": BEST, "harness_version": 2, "harness_code": "changed", "phase": "optimization",
        "build": {"version": 2, "ok": True}, "run": {"version": 2, "crashed": True, "usable": False},
        "last_change": {"kind": "improve", "version": 2, "directions": ["call f on the input"],
                        "cited": ["MEM-00000002"]},
        "extras": {"experience": {"shown": [], "matches": [], "used": ["MEM-00000001", "MEM-00000002"]}},
        "counters": {}, "project": "p", "function": "t", "work_dir": str(work_dir),
    }
    return {**base, **over}


def test_a_dropped_improvement_uncites_what_only_it_cited_and_is_counted(tmp_path: Path) -> None:
    update = revert_failed(state(tmp_path), Context())  # type: ignore[arg-type]
    assert update["harness_version"] == 1 and update["harness_code"] == BEST["code"]
    assert update["extras"]["experience"]["used"] == ["MEM-00000001"]
    assert update["counters"]["dropped_improvements"] == 1
    counters = {"dropped_improvements": 1, "harness_versions": 2}
    assert outcome_from_state({**state(tmp_path), "counters": counters}, run_id="r").dropped == 1
    assert "iteration.reverted" in (tmp_path / "events.jsonl").read_text()


def test_nothing_cited_by_the_change_leaves_the_citations_alone(tmp_path: Path) -> None:
    change = {"kind": "improve", "version": 2}
    update = revert_failed(state(tmp_path, last_change=change), Context())  # type: ignore[arg-type]
    assert "extras" not in update


def test_the_final_revert_keeps_the_finalized_flag_beside_the_uncited_experience(tmp_path: Path) -> None:
    update = finalize(state(tmp_path, last_decision="finalize: iteration budget 1 used"))  # type: ignore[arg-type]
    assert update["extras"]["finalized"] is True
    assert update["extras"]["experience"]["used"] == ["MEM-00000001"]
    assert update["harness_version"] == 1


def test_the_change_record_holds_only_what_this_reply_newly_cited() -> None:
    earlier = {"extras": {"experience": {"used": ["MEM-00000001"]}}}
    reply = {"extras": {"experience": {"used": ["MEM-00000001", "MEM-00000002"]}}}
    assert newly_cited(earlier, reply) == ["MEM-00000002"]  # type: ignore[arg-type]
    assert newly_cited(earlier, {}) == []  # type: ignore[arg-type]


def test_a_reverted_change_is_recorded_by_its_directions_not_its_lesson_notes(tmp_path: Path) -> None:
    steps = ["call f on the input", "applied [MEM-00000002] avoid_call(g): did not add g",
             "applied guidance: keep the struct tag"]
    change = {"kind": "improve", "version": 2, "directions": steps}
    update = revert_failed(state(tmp_path, last_change=change), Context())  # type: ignore[arg-type]
    rows = update["local_memory"]["attempted_directions"]
    assert [(r["direction"], r["outcome"]) for r in rows] == [
        ("call f on the input; applied guidance: keep the struct tag", "Failed")]
