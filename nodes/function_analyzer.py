"""Function analyzer node: archetype and constraints into state and session memory."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from agent_graph.context import Context
from agent_graph.memory.session_memory import add_api_constraint, set_archetype
from agent_graph.state import FuzzState
from agents.function_analyzer import FunctionAnalyzer
from agents.sections import target_decl
from long_term_memory.retrieval import KnowledgeRetriever, get_retriever
from nodes.agent_call import call_agent, memory_reads_for
from nodes.common import log_event


def archetype_catalog(retriever: KnowledgeRetriever) -> str:
    """One line per archetype: id, title and identifying signals."""
    lines = []
    for arch_id in retriever.list_archetypes():
        arch = retriever.get_archetype(arch_id)
        lines.append(f"- {arch_id}: {arch.title}. Signals: {'; '.join(arch.signals[:4])}")
    return "\n".join(lines)


def knowledge_hits(retriever: KnowledgeRetriever, query: str, k: int = 4) -> str:
    """Semantic-search hits over the long-term knowledge for the target."""
    hits = retriever.search(query, k=k)
    return "\n".join(f"- [{h.kind}] {h.id} (score {h.score:.2f}): {h.title}" for h in hits)


def function_analyzer_node(state: FuzzState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Analyze the target; validated against the knowledge's archetype ids."""
    retriever = get_retriever(state["long_term_retriever"])
    target = target_decl(state)
    reads = memory_reads_for("function_analyzer")
    variables = FunctionAnalyzer.variables(
        state, reads, archetype_catalog(retriever),
        knowledge_hits(retriever, f"{target.prototype()} {state.get('project', '')}"),
    )
    result, update = call_agent(FunctionAnalyzer, state, runtime, variables)
    analysis = result.output
    dropped = analysis.rules_dropped  # a stated rule that fit no Rule: left out, counted in the event
    known = retriever.list_archetypes()
    if analysis.archetype not in known:
        # A model may invent an id; fall back to the nearest archetype by meaning.
        suggested = retriever.suggest_archetypes(f"{target.prototype()} {analysis.reasoning}", k=1)
        log_event(state, "analysis.archetype.unknown", given=analysis.archetype,
                  replaced_by=suggested[0][0])
        analysis = analysis.model_copy(update={"archetype": suggested[0][0], "confidence": "LOW"})
    memory = set_archetype(state.get("session_memory") or {}, analysis.archetype,
                           analysis.confidence, analysis.reasoning)
    stated = list(filter(None, (c.strip() for c in analysis.constraints)))
    for constraint in stated:
        own = [r for r in analysis.rules if r.text.strip() == constraint]
        memory = add_api_constraint(memory, constraint, analysis.confidence, rules=own)
    for rule in (r for r in analysis.rules if r.text.strip() not in stated):  # a rule with no sentence
        memory = add_api_constraint(memory, rule.sentence(), analysis.confidence, rules=[rule])
    log_event(state, "analysis.done", archetype=analysis.archetype,
              constraints=len(analysis.constraints), rules=len(analysis.rules), rules_dropped=dropped)
    return {**update, "analysis": analysis.model_dump(), "session_memory": memory}
