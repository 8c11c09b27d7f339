"""Every branch of the supervisor's routing, on hand-built states."""

from __future__ import annotations

from typing import Any

import pytest

from agent_graph.routing import END, Limits, route, should_consolidate

LIMITS = Limits(max_fix_rounds=3, max_iterations=4, plateau_iterations=2, max_node_visits=50)


def state(**kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "analysis": {"archetype": "stateless_parser"},
        "harness_code": "int x;",
        "harness_version": 2,
        "build": {"version": 2, "ok": True},
        "run": {"version": 2, "usable": True, "crashed": False},
        "local_memory": {"recorded_version": 2},
        "coverage_analysis": {"version": 2},
        "phase": "optimization",
        "best": {"version": 2},
        "counters": {},
        "fix_rounds": 0,
        "no_gain_iterations": 0,
    }
    base.update(kw)
    return base


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"analysis": None}, "function_analyzer"),
        ({"harness_code": ""}, "prototyper"),
        ({"build": {"version": 1, "ok": True}}, "build"),
        ({"build": {"version": 2, "ok": False}}, "enhancer"),
        ({"run": {"version": 1}}, "execution"),
        ({"run": {"version": 2, "crashed": True}}, "crash_analyzer"),
        ({"run": {"version": 2, "crashed": True}, "crash_analysis": {"version": 2}},
         "crash_feasibility_analyzer"),
        ({"run": {"version": 2, "crashed": True},
          "crash_analysis": {"version": 2, "feasible": False}}, "enhancer"),
        ({"run": {"version": 2, "crashed": False, "usable": False}}, "enhancer"),
        ({"local_memory": {"recorded_version": 1}}, "memory_manager"),
        ({"coverage_analysis": {"version": 1}}, "coverage_analyzer"),
        ({}, "enhancer"),
    ],
)
def test_each_branch(overrides: dict[str, Any], expected: str) -> None:
    assert route(state(**overrides), LIMITS).next == expected


def test_real_crash_finalizes_then_ends() -> None:
    crashed = state(run={"version": 2, "crashed": True},
                    crash_analysis={"version": 2, "feasible": True})
    decision = route(crashed, LIMITS)
    assert decision.next == "memory_manager"
    assert decision.reason == "finalize: real crash found in library code"
    assert route({**crashed, "extras": {"finalized": True}}, LIMITS).next == END


def test_fix_round_guard_fires_in_compilation() -> None:
    failing = state(phase="compilation", best=None, build={"version": 2, "ok": False}, fix_rounds=3)
    decision = route(failing, LIMITS)
    assert decision.guard == "fix_rounds" and decision.next == "memory_manager"
    assert decision.reason.startswith("finalize")


def test_fix_round_guard_reverts_in_optimization() -> None:
    failing = state(build={"version": 2, "ok": False}, fix_rounds=3)
    decision = route(failing, LIMITS)
    assert (decision.next, decision.guard) == ("memory_manager", "fix_rounds")
    assert "revert" in decision.reason


def test_an_improvement_crashing_by_misuse_is_reverted_not_repaired() -> None:
    crashed = state(harness_version=3, build={"version": 3, "ok": True},
                    run={"version": 3, "crashed": True, "usable": False},
                    crash_analysis={"version": 3, "feasible": False})
    decision = route(crashed, LIMITS)
    assert decision.next == "memory_manager" and "revert to best" in decision.reason
    # The first running version has nothing to go back to: it is repaired.
    assert route({**crashed, "phase": "compilation", "best": None}, LIMITS).next == "enhancer"


def test_iteration_guard() -> None:
    decision = route(state(counters={"iterations": 4}), LIMITS)
    assert decision.guard == "iterations" and decision.reason.startswith("finalize")


def test_plateau_guard() -> None:
    decision = route(state(no_gain_iterations=2), LIMITS)
    assert decision.guard == "plateau" and decision.reason == "finalize: coverage plateau"


def test_node_visit_guard_beats_everything() -> None:
    decision = route(state(analysis=None, node_visits={"enhancer": 30, "build": 20}), LIMITS)
    assert decision.guard == "visits" and decision.next == "memory_manager"


def test_termination_reason_ends() -> None:
    done = state(termination_reason="stop", extras={"finalized": True})
    assert route(done, LIMITS).next == END


def test_added_route_case_runs_after_guards_before_rules() -> None:
    cases = [("toy", lambda s: not (s.get("extras") or {}).get("toy_done"))]
    assert route(state(), LIMITS, cases).next == "toy"
    assert route(state(extras={"toy_done": True}), LIMITS, cases).next == "enhancer"
    guarded = state(node_visits={"x": 50})
    assert route(guarded, LIMITS, cases).guard == "visits"


@pytest.mark.parametrize(("versions", "last", "expected"),
                         [(0, 0, False), (1, 0, False), (3, 0, True), (3, 3, False), (6, 3, True)])
def test_consolidation_every_three_loop_turns(versions: int, last: int, expected: bool) -> None:
    # Harness versions count, in both phases: optimization iterations alone would never
    # consolidate while a harness is being repaired.
    s = {"counters": {"harness_versions": versions, "iterations": 0}, "last_consolidation": last}
    assert should_consolidate(s, 3) is expected


def test_a_fix_round_that_changed_nothing_ends_the_repairs_of_a_harness_that_builds() -> None:
    misuse = {"run": {"version": 2, "crashed": True}, "crash_analysis": {"version": 2, "feasible": False},
              "phase": "compilation", "best": None, "fix_rounds": 1}
    unchanged = {"kind": "fix", "version": 2, "unchanged": True}
    decision = route(state(**misuse, last_change=unchanged), LIMITS)
    assert (decision.next, decision.guard) == ("memory_manager", "fix_rounds")
    assert "the last fix round changed nothing" in decision.reason and "after 1 fix rounds" in decision.reason
    # a change that did something, an older version's no-op, or a build error: repairs go on
    assert route(state(**misuse, last_change={**unchanged, "unchanged": False}), LIMITS).next == "enhancer"
    assert route(state(**misuse, last_change={**unchanged, "version": 1}), LIMITS).next == "enhancer"
    broken = {**misuse, "build": {"version": 2, "ok": False}}
    assert route(state(**broken, last_change=unchanged), LIMITS).next == "enhancer"


def test_an_improvement_that_does_not_build_and_a_repair_that_changed_nothing_revert_to_best() -> None:
    # Asking the same fixer again repeats its answer; the best version is there to go back to.
    broken = {"harness_version": 3, "build": {"version": 3, "ok": False}, "phase": "optimization",
              "fix_rounds": 1,
              "best": {"version": 2, "code": "int x;"}}
    unchanged = {"kind": "improve", "version": 3, "unchanged": True}
    decision = route(state(**broken, last_change=unchanged), LIMITS)
    assert (decision.next, decision.guard) == ("memory_manager", "fix_rounds")
    assert "changed nothing" in decision.reason and "revert to best" in decision.reason
    # a repair that changed the code goes on being repaired
    assert route(state(**broken, last_change={**unchanged, "unchanged": False}), LIMITS).next == "enhancer"
