"""Crash analyzer node: triage of the current version's crash."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from agent_graph.context import Context
from agent_graph.state import FuzzState
from agents.crash_analyzer import CrashAnalyzer
from nodes.agent_call import call_agent, memory_reads_for
from nodes.common import log_event, work_dir


def crash_analyzer_node(state: FuzzState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Triage the crash; the feasibility analyzer decides what it means."""
    variables = CrashAnalyzer.variables(state, memory_reads_for("crash_analyzer"))
    result, update = call_agent(CrashAnalyzer, state, runtime, variables)
    crash = state.get("crash") or {}
    log_event(state, "crash.triaged", signature=crash.get("signature"),
              location=result.output.location, kind=result.output.crash_type,
              entry=crash.get("entry_function") or "", version=state.get("harness_version"),
              **{k: crash[k] for k in ("allocated_in", "freed_first_in") if crash.get(k)})
    report_dir = work_dir(state) / "crashes"
    report_dir.mkdir(exist_ok=True)
    (report_dir / f"v{state.get('harness_version')}.txt").write_text(
        f"{crash.get('summary', '')}\n{result.output.model_dump_json(indent=1)}\n", encoding="utf-8")
    return {**update, "crash_analysis": {"version": state.get("harness_version"),
                                         **result.output.model_dump()}}
