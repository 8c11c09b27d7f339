"""Running one LLM role from a node: model, history, memory filter, and the state update."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from langgraph.runtime import Runtime

from agent_graph.context import Context
from agent_graph.messages import append_and_trim
from agent_graph.state import FuzzState
from agents.base import Agent, AgentResult
from agents.llm import get_chat_model, model_name
from nodes._common import ctx_of, visit, work_dir


@lru_cache(maxsize=1)
def _reads_table() -> dict[str, tuple[str, ...]]:
    from agent_graph.registry import default_registry, memory_reads

    return memory_reads(default_registry())


def memory_reads_for(agent: str) -> tuple[str, ...]:
    """The session-memory categories ``agent`` reads (declared in the registry)."""
    return _reads_table().get(agent, ())


def call_agent(
    agent_cls: type[Agent[Any]],
    state: FuzzState,
    runtime: Runtime[Context],
    variables: dict[str, str],
    template: str | None = None,
) -> tuple[AgentResult[Any], dict[str, Any]]:
    """Run a role and build the update every LLM node returns (messages, usage, visits)."""
    ctx = ctx_of(runtime)
    debug_log = work_dir(state) / "debug.jsonl" if ctx.debug else None
    agent = agent_cls(get_chat_model(ctx), token_budget=ctx.message_token_budget,
                      model=model_name(ctx.model), debug_log=debug_log)
    history = (state.get("agent_messages") or {}).get(agent.name, [])
    result = agent.run(variables, history, template)
    update: dict[str, Any] = {
        **visit(agent.name),
        "agent_messages": {agent.name: append_and_trim(
            history, result.new_messages, ctx.message_token_budget, model_name(ctx.model))},
        "usage": {agent.name: dict(result.usage)},
        "counters": {"model_calls": result.usage["calls"]},
    }
    return result, update
