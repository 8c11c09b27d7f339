"""Prototyper node: the first harness from the archetype's skeleton."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from agent_graph.context import Context
from agent_graph.state import FuzzState, counter
from agents.prototyper import Prototyper
from long_term_memory.retrieval import Pitfall, get_retriever
from nodes.agent_call import call_agent, memory_reads_for
from nodes.common import ctx_of, log_event
from nodes.experience import inject, note_used


def pitfall_lines(pitfalls: list[Pitfall]) -> str:
    """Pitfalls as one line each: category, title and fix."""
    return "\n".join(f"- [{p.category}] {p.title}: {p.fix}" for p in pitfalls) or "(none)"


def prototyper_node(state: FuzzState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Write harness v1 (or the next version after a restart from scratch)."""
    retriever = get_retriever(state["long_term_retriever"])
    archetype = (state.get("analysis") or {}).get("archetype", "stateless_parser")
    bundle = retriever.get_archetype_bundle(archetype)
    experience, extras = inject(state, ctx_of(runtime))
    variables = Prototyper.variables(
        state, memory_reads_for("prototyper"), archetype, bundle.archetype.text,
        bundle.skeleton, pitfall_lines(bundle.pitfalls), experience,
    )
    result, update = call_agent(Prototyper, state, runtime, variables)
    update.update(note_used(state, result.reply, extras, result.deterministic))
    version = counter(state, "harness_versions") + 1
    log_event(state, "harness.written", version=version, by="prototyper",
              calls=result.output.functions_called)
    update["counters"] = {**update["counters"], "harness_versions": 1}
    return {**update, "harness_code": result.code, "harness_version": version}
