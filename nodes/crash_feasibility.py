"""Crash feasibility node: real library bug (stop) or harness misuse (fix the harness)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from agent_graph.context import Context
from agent_graph.memory.session_memory import add_decision
from agent_graph.state import FuzzState
from agents.crash_analyzer import CrashFeasibilityAnalyzer
from nodes.agent_call import call_agent, memory_reads_for
from nodes.common import log_event


def crash_feasibility_node(state: FuzzState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Decide the crash's verdict and record it as a decision."""
    variables = CrashFeasibilityAnalyzer.variables(
        state, memory_reads_for("crash_feasibility_analyzer"))
    result, update = call_agent(CrashFeasibilityAnalyzer, state, runtime, variables)
    verdict = result.output
    why = verdict.reasoning or verdict.fix_hint or f"verdict {verdict.verdict} given without reasons"
    memory = add_decision(state.get("session_memory") or {}, f"crash:{verdict.verdict}", why,
                          source="crash_feasibility_analyzer")
    log_event(state, "crash.verdict", feasible=verdict.feasible, verdict=verdict.verdict)
    analysis = {**(state.get("crash_analysis") or {}), **verdict.model_dump()}
    return {**update, "crash_analysis": analysis, "session_memory": memory}
