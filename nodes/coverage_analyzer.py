"""Coverage analyzer node: strategies for the enhancer, kept in session memory."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from agent_graph.context import Context
from agent_graph.memory.code_memory import render_entry
from agent_graph.memory.session_memory import add_coverage_strategy
from agent_graph.state import FuzzState
from agents.coverage_analyzer import CoverageAnalyzer
from nodes.agent_call import call_agent, memory_reads_for
from nodes.common import ctx_of, log_event
from nodes.enhancer import directions_text, uncovered_text


def coverage_analyzer_node(state: FuzzState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Analyze the current version's coverage."""
    entry = (state.get("code_memory") or {}).get("harness.c")
    summary = render_entry(entry) if entry and ctx_of(runtime).code_memory else ""
    variables = CoverageAnalyzer.variables(state, memory_reads_for("coverage_analyzer"),
                                           uncovered_text(state), directions_text(state), summary)
    result, update = call_agent(CoverageAnalyzer, state, runtime, variables)
    memory = state.get("session_memory") or {}
    for s in result.output.strategies:
        if not s.strategy.strip():
            continue
        memory = add_coverage_strategy(memory, s.strategy, target_functions=s.target_functions,
                                       confidence=s.expected_gain)
    log_event(state, "coverage.analyzed", strategies=len(result.output.strategies))
    return {**update, "session_memory": memory, "coverage_analysis": {
        "version": state.get("harness_version"), "summary": result.output.summary,
        "strategies": [s.model_dump() for s in result.output.strategies]}}
