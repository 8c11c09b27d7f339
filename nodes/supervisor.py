"""The supervisor: routes on state, logs notable decisions, consolidates session memory."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Command

from agent_graph.context import Context
from agent_graph.memory.session_consolidate import consolidate_session_memory
from agent_graph.memory.session_memory import add_decision
from agent_graph.routing import END, Limits, loop_iterations, route, should_consolidate
from agent_graph.state import FuzzState
from nodes.common import ctx_of, log_event, visit

# Routine hops (build after a new harness, run after a build) are not worth a memory line.
_NOTABLE = {"enhancer", "crash_analyzer", "crash_feasibility_analyzer", "memory_manager", END}


def limits_of(ctx: Context) -> Limits:
    """The loop guards of this run."""
    return Limits(
        max_fix_rounds=ctx.max_fix_rounds,
        max_iterations=ctx.max_iterations,
        plateau_iterations=ctx.plateau_iterations,
        max_node_visits=ctx.max_node_visits,
    )


def make_supervisor(
    cases: Sequence[tuple[str, Callable[[FuzzState], bool]]] = (),
) -> Callable[..., Command[Any]]:
    """The supervisor node; ``cases`` (the registry's routing cases) join the built-in rules."""
    cases = list(cases)

    def supervisor(state: FuzzState, runtime: Runtime[Context]) -> Command[Any]:
        ctx = ctx_of(runtime)
        decision = route(state, limits_of(ctx), cases)
        update: dict[str, Any] = {**visit("supervisor"), "next_node": decision.next,
                                  "last_decision": decision.reason}
        memory = state.get("session_memory") or {}
        if should_consolidate(state, ctx.consolidate_every):
            memory = consolidate_session_memory(memory)
            update["last_consolidation"] = loop_iterations(state)
            log_event(state, "memory.session.consolidate", iteration=update["last_consolidation"])
        if decision.next in _NOTABLE and decision.reason != state.get("last_decision"):
            memory = add_decision(memory, f"route:{decision.next}", decision.reason)
        if memory is not state.get("session_memory"):
            update["session_memory"] = memory
        if decision.guard:
            update["counters"] = {f"guard_{decision.guard}": 1}
            log_event(state, "guard.fired", guard=decision.guard, reason=decision.reason)
        if decision.next == END:
            update["phase"] = "done"
            update["termination_reason"] = state.get("termination_reason") or decision.reason
        return Command(goto=decision.next, update=update)

    return supervisor
