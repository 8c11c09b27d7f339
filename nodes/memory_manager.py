"""Memory manager node: records each measured iteration, reverts failed ones, finalizes the run.

After every measured harness version it updates the run's best result, the plateau counter,
the coverage history and the attempted directions of the local memory; when the supervisor
decides to stop, it writes the final record once.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from agent_graph.context import Context
from agent_graph.state import FuzzState, counter
from nodes._common import ctx_of, log_event, visit


def lines_percent(run: dict[str, Any]) -> float:
    """Line coverage of a run record, in percent."""
    return float(((run.get("coverage") or {}).get("lines") or {}).get("percent", 0.0))


def _snapshot(state: FuzzState) -> dict[str, Any]:
    run = state.get("run") or {}
    return {"version": state.get("harness_version"), "code": state.get("harness_code", ""),
            "build": state.get("build"), "run": run, "lines_percent": lines_percent(run),
            "coverage": run.get("coverage")}


def _history_row(state: FuzzState, iteration: int) -> dict[str, Any]:
    run = state.get("run") or {}
    cov = run.get("coverage") or {}
    return {"iteration": iteration, "version": state.get("harness_version"),
            "lines": lines_percent(run),
            "branches": float((cov.get("branches") or {}).get("percent", 0.0)),
            "progress": run.get("progress") or []}


def _direction(state: FuzzState, outcome: str, evidence: str) -> dict[str, Any]:
    change = state.get("last_change") or {}
    text = "; ".join(change.get("directions") or change.get("fixes") or []) or "unrecorded change"
    return {"direction": text, "outcome": outcome, "source_ref": f"v{state.get('harness_version')}",
            "evidence": evidence}


def _revert(state: FuzzState, best: dict[str, Any]) -> dict[str, Any]:
    return {"harness_code": best["code"], "harness_version": best["version"],
            "build": best["build"], "run": best["run"], "fix_rounds": 0}


def record_measurement(state: FuzzState, ctx: Context) -> dict[str, Any]:
    """Fold the current version's measurement into best, plateau counter and local memory."""
    local = dict(state.get("local_memory") or {"attempted_directions": []})
    directions = list(local.get("attempted_directions") or [])
    current = _snapshot(state)
    update: dict[str, Any] = {"fix_rounds": 0}
    if state.get("phase") == "compilation" or not state.get("best"):
        update.update(phase="optimization", best=current, no_gain_iterations=0)
        update["coverage_history"] = [_history_row(state, 0)]
        log_event(state, "iteration.baseline", version=current["version"],
                  lines=current["lines_percent"])
        best = current
    else:
        best = state["best"]
        iteration = counter(state, "iterations") + 1
        delta = current["lines_percent"] - best["lines_percent"]
        evidence = f"line coverage {best['lines_percent']:.2f}% -> {current['lines_percent']:.2f}%"
        update["counters"] = {"iterations": 1}
        update["coverage_history"] = [_history_row(state, iteration)]
        if delta >= ctx.min_gain_percent:
            outcome = "Success"
            update.update(best=current, no_gain_iterations=0)
            best = current
        else:
            outcome = "Noise" if abs(delta) < ctx.min_gain_percent else "Failed"
            update["no_gain_iterations"] = int(state.get("no_gain_iterations") or 0) + 1
            update.update(_revert(state, best))
        directions.append(_direction(state, outcome, evidence))
        log_event(state, "iteration.measured", iteration=iteration, outcome=outcome,
                  delta=round(delta, 3), lines=current["lines_percent"])
    local.update(
        recorded_version=best["version"],
        attempted_directions=directions,
        global_status={"iteration": counter(state, "iterations") + (1 if "counters" in update else 0),
                       "best_coverage": best["lines_percent"], "best_harness": f"v{best['version']}"},
    )
    return {**update, "local_memory": local}


def revert_failed(state: FuzzState) -> dict[str, Any]:
    """An improvement that could not be made to build or run: count it and go back to best."""
    best = state["best"]
    local = dict(state.get("local_memory") or {})
    why = (state.get("build") or {}).get("errors") and "did not compile" or "did not run cleanly"
    local["attempted_directions"] = [*(local.get("attempted_directions") or []),
                                     _direction(state, "Failed", f"{why} after fix rounds")]
    local["recorded_version"] = best["version"]
    log_event(state, "iteration.reverted", version=state.get("harness_version"), reason=why)
    return {**_revert(state, best), "local_memory": local, "counters": {"iterations": 1},
            "no_gain_iterations": int(state.get("no_gain_iterations") or 0) + 1}


def finalize(state: FuzzState) -> dict[str, Any]:
    """The run's closing record (experience extraction hooks in here)."""
    reason = (state.get("last_decision") or "").removeprefix("finalize: ")
    log_event(state, "run.finalized", reason=reason, best=(state.get("best") or {}).get("version"))
    update: dict[str, Any] = {"extras": {"finalized": True}, "termination_reason": reason}
    best = state.get("best")
    run = state.get("run") or {}
    real_crash = run.get("crashed") and (state.get("crash_analysis") or {}).get("feasible")
    if best and best.get("version") != state.get("harness_version") and not real_crash:
        # The last attempt did not beat the best one: the run's result is the best harness.
        update.update(_revert(state, best))
    return update


def memory_manager_node(state: FuzzState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Dispatch on why the supervisor came here."""
    ctx = ctx_of(runtime)
    if (state.get("last_decision") or "").startswith("finalize"):
        return {**visit("memory_manager"), **finalize(state)}
    run = state.get("run") or {}
    if run.get("version") == state.get("harness_version") and run.get("usable"):
        return {**visit("memory_manager"), **record_measurement(state, ctx)}
    return {**visit("memory_manager"), **revert_failed(state)}
