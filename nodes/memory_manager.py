"""Memory manager node: records each measured iteration, reverts failed ones, finalizes the run.

After every measured harness version it updates the run's best result, the plateau counter and
the coverage history, and runs the SE-Agent local-memory extraction (attempted directions
replaced wholesale, a distilled lesson appended, compression past a token threshold); when the
supervisor decides to stop, it writes the final record once.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from agent_graph.context import Context
from agent_graph.memory.code_memory_c import called_names
from agent_graph.memory.local_memory import (
    apply_extraction,
    branch_for,
    compress,
    describe_approach,
    empty_local_memory,
    metrics_delta,
    record_failed_attempt,
    set_global_status,
)
from agent_graph.state import FuzzState, counter, merge_extras
from agents.base import ModelCallError
from agents.llm import model_name
from agents.local_memory_extractor import LocalMemoryExtractor
from agents.parsing import ReplyParseError
from long_term_memory.experience.models import ITEM_ID
from nodes.agent_call import call_agent
from nodes.common import ctx_of, log_event
from nodes.experience import finalize_experience
from nodes.improvement_blocks import (
    crashed_mark,
    drop_crashed_block,
    release_leaked_result,
    release_left_in_field,
    remembered_fields,
    remembered_releases,
)


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


def _revert(state: FuzzState, best: dict[str, Any]) -> dict[str, Any]:
    """Back to the best version; the experience items only the dropped improvement cited are not used."""
    update = {"harness_code": best["code"], "harness_version": best["version"],
              "build": best["build"], "run": best["run"], "fix_rounds": 0}
    cited = set((state.get("last_change") or {}).get("cited") or [])
    exp = (state.get("extras") or {}).get("experience") or {}
    if cited and exp.get("used"):
        update["extras"] = {"experience": {**exp, "used": [i for i in exp["used"] if i not in cited]}}
    return update


def _reverted_into(update: dict[str, Any], state: FuzzState, best: dict[str, Any]) -> None:
    """``update`` plus the revert to ``best`` (both ``extras`` kept: the reducer merges one level)."""
    reverted = _revert(state, best)
    extras = {**(update.get("extras") or {}), **(reverted.pop("extras", None) or {})}
    update.update(reverted)
    if extras:
        update["extras"] = extras


def _api_names(state: FuzzState) -> list[str]:
    return [d["name"] for d in state.get("api") or []]


def _with_status(state: FuzzState, local: dict[str, Any], best: dict[str, Any], iteration: int,
                 ctx: Context) -> dict[str, Any]:
    calls = ((state.get("code_memory") or {}).get("harness.c") or {}).get("library_calls") or []
    archetype = (state.get("analysis") or {}).get("archetype", "")
    local = set_global_status(local, iteration=iteration, best_coverage=best["lines_percent"],
                              best_harness_id=f"v{best['version']}",
                              current_approach=describe_approach(archetype, calls))
    local = compress(local, ctx.local_memory_tokens, gain_noise(ctx, best["lines_percent"]),
                     model_name(ctx.model))
    return {**local, "recorded_version": best["version"]}


def gain_noise(ctx: Context, best_percent: float) -> float:
    """Points of line coverage within the fuzzer's noise, for a best harness at ``best_percent``.

    ``min_gain_percent``, or ``min_gain_share`` of the best coverage when that is smaller, never
    below a tenth of ``min_gain_percent``: repeat runs vary by a share of what a harness covers,
    so +0.5 points on a harness covering 6% of a 100,000-line library (500 lines) is a gain.
    """
    return max(ctx.min_gain_percent / 10, min(ctx.min_gain_percent, ctx.min_gain_share * best_percent))


def _reaches_new_api(best: dict[str, Any], current: dict[str, Any]) -> bool:
    """A gain, however small, from API functions the harness now calls that the best never ran.

    Such a version is kept below the noise: the calls it adds run on every input, and what they
    reach grows with fuzzing time, while a same-calls version's small gain is the fuzzer's luck
    (a function the library calls itself and a run happened to reach does not count).
    """
    if current["lines_percent"] <= best["lines_percent"]:
        return False
    before = set((best.get("run") or {}).get("uncovered_functions") or [])
    after = set((current.get("run") or {}).get("uncovered_functions") or [])
    return bool((before - after) & set(called_names(current.get("code") or "")))


def _extract(state: FuzzState, runtime: Runtime[Context], best: dict[str, Any],
             current: dict[str, Any], iteration: int, noise: float) -> tuple[dict[str, Any], dict[str, Any]]:
    """The LLM extraction step; a failure leaves the local memory as it was and says why."""
    local = state.get("local_memory") or empty_local_memory()
    variables = LocalMemoryExtractor.variables(state, best, current, noise, iteration)
    try:
        result, llm_update = call_agent(LocalMemoryExtractor, state, runtime, variables, stateless=True)
    except (ReplyParseError, ModelCallError) as exc:
        log_event(state, "local_memory.extracted", iteration=iteration, reason=f"rejected: {exc}")
        return local, {}
    local, why = apply_extraction(
        local, result.output,
        source_ref={"iteration": iteration, "harness_id": f"v{current['version']}",
                    "parent_id": f"v{best['version']}"},
        metrics=metrics_delta(best["lines_percent"], current["lines_percent"]))
    log_event(state, "local_memory.extracted", iteration=iteration, reason=why)
    return local, llm_update


def record_measurement(state: FuzzState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Fold the current version's measurement into best, plateau counter and local memory."""
    ctx = ctx_of(runtime)
    current = _snapshot(state)
    update: dict[str, Any] = {"fix_rounds": 0}
    if state.get("phase") == "compilation" or not state.get("best"):
        update.update(phase="optimization", best=current, no_gain_iterations=0)
        update["coverage_history"] = [_history_row(state, 0)]
        log_event(state, "iteration.baseline", version=current["version"], lines=current["lines_percent"])
        local = _with_status(state, state.get("local_memory") or empty_local_memory(), current, 0, ctx)
        return {**update, "local_memory": local}
    best = state["best"]
    iteration = counter(state, "iterations") + 1
    noise = 0.0 if _reaches_new_api(best, current) else gain_noise(ctx, best["lines_percent"])
    branch = branch_for(best["lines_percent"], current["lines_percent"], noise)
    local, llm_update = _extract(state, runtime, best, current, iteration, noise)
    update.update(llm_update)
    update["counters"] = {**(llm_update.get("counters") or {}), "iterations": 1}
    update["coverage_history"] = [_history_row(state, iteration)]
    if branch == "success":
        update.update(best=current, no_gain_iterations=0)
        best = current
    else:
        update["no_gain_iterations"] = int(state.get("no_gain_iterations") or 0) + 1
        _reverted_into(update, state, best)
    log_event(state, "iteration.measured", iteration=iteration, outcome=branch,
              delta=round(current["lines_percent"] - state["best"]["lines_percent"], 3),
              lines=current["lines_percent"])
    return {**update, "local_memory": _with_status(state, local, best, iteration, ctx)}


def revert_failed(state: FuzzState, ctx: Context) -> dict[str, Any]:
    """An improvement that could not be made to build or run: count it and go back to best.

    A crash inside one of several blocks the improvement added drops only that block; a leak of
    what a block's call returned is first repaired by releasing it (:mod:`agents.improvement_blocks`).
    """
    best = state["best"]
    repaired = release_leaked_result(state) or release_left_in_field(state)
    if repaired is not None:
        update, direction, released = repaired
        log_event(state, "improvement.block_repaired", version=state.get("harness_version"),
                  next_version=update["harness_version"], direction=direction, **released)
        update["extras"] = (remembered_fields(state, released) if "field" in released
                            else remembered_releases(state, released))
        return update
    dropped = drop_crashed_block(state)
    if dropped is not None:
        update, direction, calls = dropped
        version = f"v{state.get('harness_version')}"
        local = record_failed_attempt(state.get("local_memory") or empty_local_memory(), direction,
                                      "crashed the harness (harness misuse)", version, _api_names(state),
                                      calls=calls)
        log_event(state, "improvement.block_dropped", version=state.get("harness_version"),
                  next_version=update["harness_version"], direction=direction)
        return {**update, "local_memory": local}
    why = "did not compile" if not (state.get("build") or {}).get("ok") else "did not run cleanly"
    change = state.get("last_change") or {}
    steps = [d for d in change.get("directions") or change.get("fixes") or [] if not _lesson_note(d)]
    direction = crashed_block(state) or "; ".join(steps) or "unrecorded change"
    local = record_failed_attempt(state.get("local_memory") or empty_local_memory(), direction,
                                  f"{why} after fix rounds", f"v{state.get('harness_version')}",
                                  _api_names(state))
    iteration = counter(state, "iterations") + 1
    log_event(state, "iteration.reverted", version=state.get("harness_version"), reason=why)
    return {**_revert(state, best), "local_memory": _with_status(state, local, best, iteration, ctx),
            "counters": {"iterations": 1, "dropped_improvements": 1},
            "no_gain_iterations": int(state.get("no_gain_iterations") or 0) + 1}


def _lesson_note(step: str) -> bool:
    """``applied [MEM-...] ...``: which lesson a change honoured, not a direction it followed."""
    return step.startswith("applied [") and ITEM_ID.match(step, len("applied [")) is not None


def crashed_block(state: FuzzState) -> str:
    """The improvement the crash of this version happened in, from its block's comment ("" if none)."""
    return crashed_mark(state)[0]


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
        _reverted_into(update, state, best)
    return update


def memory_manager_node(state: FuzzState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Dispatch on why the supervisor came here."""
    if (state.get("last_decision") or "").startswith("finalize"):
        update = finalize(state)
        # The experience lifecycle judges the final result (after any revert to the best harness).
        # ``extras`` merges as the graph's reducer would: a plain dict merge would drop what
        # the prototyper and enhancer left there (the experience shown and cited).
        final = {**state, **update, "extras": merge_extras(state.get("extras"), update.get("extras"))}
        experience = finalize_experience(final, runtime)  # type: ignore[arg-type]
        visits = {**(experience.pop("node_visits", None) or {}), "memory_manager": 1}
        return {**experience, **update, "node_visits": visits}
    run = state.get("run") or {}
    if run.get("version") == state.get("harness_version") and run.get("usable"):
        update = record_measurement(state, runtime)
    else:
        update = revert_failed(state, ctx_of(runtime))
    update["node_visits"] = {**(update.get("node_visits") or {}), "memory_manager": 1}
    return update
