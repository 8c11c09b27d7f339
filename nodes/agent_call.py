"""Running one LLM role from a node: model, history, memory filter, and the state update."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from langgraph.config import get_config
from langgraph.runtime import Runtime

from agent_graph.context import Context
from agent_graph.memory.code_memory import compress_history
from agent_graph.memory.messages import REPLACE, append_and_trim, trim_messages_to_limit
from agent_graph.state import FuzzState
from agents.base import Agent, AgentResult, ModelCallError
from agents.llm import features_for, get_chat_model, model_name
from agents.parsing import ReplyParseError
from agents.rate_limit import rate_limit_for
from agents.tools import tools_for
from nodes.common import ctx_of, log_event, visit, work_dir

# The graph's metadata key under which ``build_graph`` publishes its registry's declarations.
DECLARED = "logicfuzz_declared"


def _declared(table: str) -> dict[str, Any]:
    """A table the running graph's registry declared (empty outside a graph run)."""
    try:
        metadata = get_config().get("metadata") or {}
    except RuntimeError:  # called outside a graph: nothing was declared
        return {}
    return dict((metadata.get(DECLARED) or {}).get(table) or {})


def memory_reads_for(agent: str) -> tuple[str, ...]:
    """The session-memory categories ``agent`` reads, as the running graph's registry declares."""
    return tuple(_declared("memory_reads").get(agent, ()))


def tools_of(agent: str) -> tuple[str, ...]:
    """The tools ``agent`` may call, as the running graph's registry declares."""
    return tuple(_declared("agent_tools").get(agent, ()))


def make_agent(agent_cls: type[Agent[Any]], state: FuzzState, ctx: Context) -> Agent[Any]:
    """The role bound to the context's model: its tools, native features, budgets, rate limit."""
    features = features_for(ctx)
    tools = tools_for(tools_of(agent_cls.name), state) if features.use("tools") else []
    return agent_cls(get_chat_model(ctx), token_budget=ctx.message_token_budget,
                     model=model_name(ctx.model), tools=tools, features=features,
                     debug_log=work_dir(state) / "debug.jsonl" if ctx.debug else None,
                     max_tool_rounds=ctx.max_tool_rounds, max_output_tokens=ctx.max_output_tokens,
                     rate=rate_limit_for(ctx))


def call_agent(
    agent_cls: type[Agent[Any]],
    state: FuzzState,
    runtime: Runtime[Context],
    variables: dict[str, str],
    template: str | None = None,
    stateless: bool = False,
    sampling: dict[str, Any] | None = None,
    fall_back: str = "",
) -> tuple[AgentResult[Any], dict[str, Any]]:
    """Run a role and build the update every LLM node returns (messages, usage, visits).

    A ``stateless`` role gets everything it needs in each prompt: it is sent no history, and
    only its latest exchange is kept. ``sampling`` replaces context fields for this call only
    (``temperature``, ``max_output_tokens``), e.g. the extraction settings of the memory config.

    The floor under weak models: when the model's reply cannot be used after its retries (or
    the model cannot be reached), or the caller passes a ``fall_back`` reason, the context's
    ``fallback`` model (the offline engine by default) does the step from the same prompt; the
    event log says so (``model.fallback``) and ``counters["fallback:<agent>"]`` counts it.
    """
    ctx = ctx_of(runtime)
    if sampling:
        ctx = replace(ctx, **sampling)
    agent = make_agent(agent_cls, state, ctx)
    history = [] if stateless else (state.get("agent_messages") or {}).get(agent.name, [])
    model = model_name(ctx.model)
    compact = history
    if ctx.code_memory:
        # Past the threshold, old turns give way to the code memory plus the newest messages.
        compact = compress_history(history, state.get("code_memory") or {}, ctx.history_keep_last,
                                   ctx.history_compress_tokens, model, summary=ctx.history_summary)
    result, reason = _first_try(agent, ctx, state, fall_back, lambda a: a.run(variables, compact, template))
    if result is None:
        backup = make_agent(agent_cls, state, replace(ctx, model=ctx.fallback))
        result = backup.run(variables, compact, template)
        log_event(state, "model.fallback", agent=agent.name, model=ctx.fallback, reason=reason[:500])
    if stateless:
        messages: Any = {REPLACE: result.new_messages}
    elif compact is history:
        messages = append_and_trim(history, result.new_messages, ctx.message_token_budget, model)
    else:
        messages = {REPLACE: trim_messages_to_limit([*compact, *result.new_messages],
                                                    ctx.message_token_budget, model)}
    _log_call(state, agent.name, result, len(compact), compact is not history)
    update: dict[str, Any] = {
        **visit(agent.name),
        "agent_messages": {agent.name: messages},
        "usage": {agent.name: dict(result.usage)},
        "counters": {"model_calls": result.usage["calls"],
                     **({f"fallback:{agent.name}": 1} if reason else {})},
    }
    return result, update


def _first_try(agent: Agent[Any], ctx: Context, state: FuzzState, fall_back: str,
               run: Callable[[Agent[Any]], AgentResult[Any]]) -> tuple[AgentResult[Any] | None, str]:
    """The run's own model does the step: ``(result, "")``, or ``(None, why)`` for the fallback.

    Raises:
        ModelCallError, ReplyParseError: the step failed and no fallback model may do it.
    """
    features = agent.features or features_for(ctx)
    reason = fall_back if fall_back and can_fall_back(ctx) else ""
    down = features.rejected.get(UNREACHABLE, "")
    if down and not reason:
        if not can_fall_back(ctx):
            raise ModelCallError(f"{agent.name}: the model endpoint failed earlier in this run: {down}")
        reason = f"the model endpoint failed earlier in this run: {down}"
    if reason:
        return None, reason
    known = dict(features.rejected)
    try:
        return run(agent), ""
    except (ReplyParseError, ModelCallError) as exc:
        # The step-down happened even though the call failed: say so.
        for feature, why in features.rejected.items():
            if feature not in known and feature != UNREACHABLE:
                log_event(state, "model.feature_unsupported", agent=agent.name, feature=feature,
                          reason=why)
        if unreachable(exc):
            # Down or too slow: later steps go straight to the fallback (or fail fast).
            features.reject(UNREACHABLE, str(exc))
        if not can_fall_back(ctx):
            raise
        return None, f"{type(exc).__name__}: {exc}"


def _log_call(state: FuzzState, agent: str, result: AgentResult[Any], history: int,
              compressed: bool) -> None:
    """The events of one finished call: refused features, tool calls, the call itself."""
    for degraded in result.degraded:
        log_event(state, "model.feature_unsupported", agent=agent, **degraded)
    for call in result.tool_calls:
        log_event(state, "model.tool_call", agent=agent, **call)
    log_event(state, "model.call", agent=agent, prompt_tokens=result.usage["prompt_tokens"],
              completion_tokens=result.usage["completion_tokens"], calls=result.usage["calls"],
              history_messages=history, history_compressed=compressed,
              tool_calls=len(result.tool_calls), structured=result.structured)


UNREACHABLE = "reachable"


def unreachable(exc: Exception) -> bool:
    """True when a model call failed because the endpoint is down or timed out (not a bad reply)."""
    names = " ".join(type(e).__name__ for e in (exc, exc.__cause__) if e is not None)
    # openai's APIConnectionError/APITimeoutError, langchain-openai's subclasses, httpx's own.
    return any(word in names for word in ("ConnectionError", "ConnectError", "Timeout"))


def can_fall_back(ctx: Context) -> bool:
    """True when a failed step may be done by the context's fallback model."""
    return bool(ctx.fallback) and ctx.fallback != ctx.model
