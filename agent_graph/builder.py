"""Build the LogicFuzz StateGraph from the node registry."""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from agent_graph.context import Context
from agent_graph.registry import Registry, agent_tools, default_registry, memory_reads
from agent_graph.state import FuzzInput, FuzzOutput, FuzzState
from nodes.agent_call import DECLARED
from nodes.supervisor import make_supervisor

# Every hop passes through the supervisor, so a target's run takes about twice as many steps as
# node visits; the node-visit guard (Context.max_node_visits) fires long before this limit.
RECURSION_LIMIT = 1000


def build_graph(registry: Registry | None = None, checkpointer: Any = None) -> Any:
    """Compile the graph: ``prepare`` first, then the supervisor routes between the nodes."""
    registry = registry or default_registry()
    builder = StateGraph(
        FuzzState, context_schema=Context, input_schema=FuzzInput, output_schema=FuzzOutput
    )
    routable = tuple(n for n in registry.names() if n != "prepare")
    builder.add_node("supervisor", make_supervisor(registry.route_cases()), destinations=(*routable, END))
    for spec in registry:
        builder.add_node(spec.name, spec.fn, metadata={
            "kind": spec.kind, "description": spec.description,
            "reads": list(spec.reads), "tools": list(spec.tools)})
        for dest in spec.destinations:
            builder.add_edge(spec.name, dest)
    builder.add_edge(START, "prepare" if "prepare" in registry else "supervisor")
    # Nodes read the declarations of *this* registry (memory reads, tools) from the run's config.
    declared = {"memory_reads": memory_reads(registry), "agent_tools": agent_tools(registry)}
    return builder.compile(checkpointer=checkpointer, name="logicfuzz").with_config(
        {"recursion_limit": RECURSION_LIMIT, "metadata": {DECLARED: declared}}
    )
