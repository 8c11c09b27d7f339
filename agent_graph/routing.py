"""The supervisor's routing rules: pure functions from state to the next node.

Phase 1 (compilation) ends when a harness builds, calls the target and runs for its budget;
phase 2 (optimization) ends on a real crash, on a coverage plateau or on the iteration budget.
Every loop is guarded by a counter kept in state; ``route`` is the only place they are checked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agent_graph.state import FuzzState, counter

END = "__end__"


@dataclass(frozen=True)
class Limits:
    """The loop guards, taken from the runtime context."""

    max_fix_rounds: int = 5
    max_iterations: int = 5
    plateau_iterations: int = 2
    max_node_visits: int = 80


@dataclass(frozen=True)
class Route:
    """A routing decision: where to go, why, and whether it is a loop guard firing."""

    next: str
    reason: str
    guard: str = ""


def _version_of(record: dict[str, Any] | None) -> int | None:
    return None if not record else record.get("version")


def finish(state: FuzzState, limits: Limits, reason: str, guard: str = "") -> Route:
    """End the run, letting the memory manager write its final record first (once)."""
    if not (state.get("extras") or {}).get("finalized"):
        return Route("memory_manager", f"finalize: {reason}", guard)
    return Route(END, reason, guard)


def _fix_or_finish(state: FuzzState, limits: Limits, why: str) -> Route:
    rounds = int(state.get("fix_rounds") or 0)
    change = state.get("last_change") or {}
    unchanged = bool(change.get("unchanged") and change.get("version") == state.get("harness_version"))
    reverts = state.get("phase") == "optimization" and bool(state.get("best"))
    # The fixer knew no repair: measuring the same harness again repeats the failure, and an
    # improvement that does not build has a best version to go back to. (A first harness that
    # does not build is asked again: the fallback draft and a sampling model can differ.)
    stuck = unchanged and (reverts or bool((state.get("build") or {}).get("ok")))
    if stuck:
        why = f"{why}; the last fix round changed nothing"
    if stuck or rounds >= limits.max_fix_rounds:
        if reverts:
            return Route("memory_manager", f"{why}; fix rounds exhausted, revert to best", "fix_rounds")
        return finish(state, limits, f"{why}; gave up after {rounds} fix rounds", "fix_rounds")
    return Route("enhancer", why)


RouteCase = tuple[str, Callable[[FuzzState], bool]]


def route(state: FuzzState, limits: Limits, cases: Sequence[RouteCase] = ()) -> Route:
    """Decide the next node from the state alone.

    Args:
        state: The current state.
        limits: The loop guards.
        cases: Routing cases of added nodes (from the registry), checked after the guards and
            before the built-in rules: the first whose predicate holds wins.
    """
    if state.get("termination_reason"):
        return finish(state, limits, state["termination_reason"])
    visits = sum((state.get("node_visits") or {}).values())
    if visits >= limits.max_node_visits:
        return finish(state, limits, f"node visit limit {limits.max_node_visits} reached", "visits")
    for name, applies in cases:
        if applies(state):
            return Route(name, f"{name}: its routing case applies")
    if not state.get("analysis"):
        return Route("function_analyzer", "target not analyzed yet")
    if not state.get("harness_code"):
        return Route("prototyper", "no harness yet")

    version = state.get("harness_version")
    build = state.get("build") or {}
    if _version_of(build) != version:
        return Route("build", f"harness v{version} not built")
    if not build.get("ok"):
        return _fix_or_finish(state, limits, "compile error")

    run = state.get("run") or {}
    if _version_of(run) != version:
        return Route("execution", f"harness v{version} not run")
    if run.get("crashed"):
        analysis = state.get("crash_analysis") or {}
        if _version_of(analysis) != version:
            return Route("crash_analyzer", "new crash")
        if "feasible" not in analysis:
            return Route("crash_feasibility_analyzer", "crash needs a feasibility verdict")
        if analysis["feasible"]:
            return finish(state, limits, "real crash found in library code")
        best = state.get("best") or {}
        if state.get("phase") == "optimization" and best and best.get("version") != version:
            # An improvement that misuses the API is dropped, not repaired: the best version
            # runs, and the improvement's directions go on the tabu list.
            return Route("memory_manager", "improvement crashes by harness misuse; revert to best")
        return _fix_or_finish(state, limits, "crash caused by the harness")
    if not run.get("usable"):
        return _fix_or_finish(state, limits, run.get("problem") or "harness does not exercise target")

    if (state.get("local_memory") or {}).get("recorded_version") != version:
        return Route("memory_manager", f"record measurement of v{version}")
    if counter(state, "iterations") >= limits.max_iterations:
        return finish(state, limits, f"iteration budget {limits.max_iterations} used", "iterations")
    if int(state.get("no_gain_iterations") or 0) >= limits.plateau_iterations:
        return finish(state, limits, "coverage plateau", "plateau")
    if _version_of(state.get("coverage_analysis")) != version:
        return Route("coverage_analyzer", "coverage not analyzed for this harness")
    return Route("enhancer", "improve coverage")


def loop_iterations(state: FuzzState) -> int:
    """Turns of the build-measure loop so far: one per harness version, in either phase.

    The first draft, every repair of the compilation phase and every improvement of the
    optimization phase is one turn, so consolidation also runs while a harness is repaired.
    """
    return counter(state, "harness_versions")


def should_consolidate(state: FuzzState, every: int) -> bool:
    """True once per ``every`` loop turns (the seed's 'every 3 iterations')."""
    turns = loop_iterations(state)
    if turns == 0 or turns % every:
        return False
    return int(state.get("last_consolidation") or 0) != turns
