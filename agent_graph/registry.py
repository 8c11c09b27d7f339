"""The node registry: the one place a graph node is declared.

A node is declared by a :class:`NodeSpec`: its name, its function, the nodes it may hand over
to (so Studio draws every edge), the session-memory categories it reads and writes, the tools
its agent may call (names registered in :mod:`agents.tools`), and an optional routing case for
nodes added beside the built-in ones. ``build_graph`` reads only
this registry, and the memory injection table (:func:`memory_reads`) is derived from it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from agent_graph.memory.session_memory import CATEGORIES
from agent_graph.state import FuzzState
from agents.tools import tool_names
from nodes.build import build_node
from nodes.coverage_analyzer import coverage_analyzer_node
from nodes.crash_analyzer import crash_analyzer_node
from nodes.crash_feasibility import crash_feasibility_node
from nodes.enhancer import enhancer_node
from nodes.execution import execution_node
from nodes.function_analyzer import function_analyzer_node
from nodes.memory_manager import memory_manager_node
from nodes.prepare import prepare_node
from nodes.prototyper import prototyper_node

NodeFn = Callable[..., Any]


@dataclass(frozen=True)
class NodeSpec:
    """Declaration of one graph node."""

    name: str
    fn: NodeFn
    destinations: tuple[str, ...] = ("supervisor",)
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    kind: str = "llm"
    route_when: Callable[[FuzzState], bool] | None = None
    description: str = ""
    tools: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        unknown = [c for c in (*self.reads, *self.writes) if c not in CATEGORIES]
        if unknown:
            raise ValueError(
                f"node {self.name!r} names unknown memory categories {unknown}; "
                f"valid: {', '.join(CATEGORIES)}"
            )
        if self.tools:
            missing = [t for t in self.tools if t not in tool_names()]
            if missing:
                raise ValueError(f"node {self.name!r} names unknown tools {missing}; "
                                 f"registered: {', '.join(tool_names())}")


@dataclass
class Registry:
    """An ordered set of node specs."""

    specs: dict[str, NodeSpec] = field(default_factory=dict)

    def register(self, spec: NodeSpec) -> Registry:
        """Add a node; names are unique."""
        if spec.name in self.specs:
            raise ValueError(f"node {spec.name!r} is already registered")
        self.specs[spec.name] = spec
        return self

    def __iter__(self) -> Any:
        return iter(self.specs.values())

    def __contains__(self, name: object) -> bool:
        return name in self.specs

    def get(self, name: str) -> NodeSpec:
        """The spec of ``name``."""
        try:
            return self.specs[name]
        except KeyError:
            raise KeyError(f"no node {name!r}; registered: {', '.join(self.specs)}") from None

    def names(self) -> list[str]:
        """Registered node names in declaration order."""
        return list(self.specs)

    def route_cases(self) -> list[tuple[str, Callable[[FuzzState], bool]]]:
        """Routing cases contributed by registered nodes, in declaration order."""
        return [(s.name, s.route_when) for s in self if s.route_when is not None]

    def copy(self, extra: Iterable[NodeSpec] = ()) -> Registry:
        """A new registry with these specs plus ``extra``."""
        new = Registry(dict(self.specs))
        for spec in extra:
            new.register(spec)
        return new


CODE = ("read_code_mem", "read_file")
KNOWLEDGE_AND_CODE = ("search_knowledge", *CODE)


def default_registry() -> Registry:
    """The built-in LogicFuzz nodes."""
    cats = CATEGORIES
    return Registry().register(
        NodeSpec("prepare", prepare_node, kind="tool",
                 description="Fetch and build the library, parse its API, set up the target.")
    ).register(
        NodeSpec("function_analyzer", function_analyzer_node,
                 reads=("api_constraints",), writes=("api_constraints", "archetype"),
                 tools=("search_knowledge",),
                 description="Classify the API archetype and its usage constraints.")
    ).register(
        NodeSpec("prototyper", prototyper_node,
                 reads=("api_constraints", "archetype", "known_fixes"), tools=KNOWLEDGE_AND_CODE,
                 description="Write the first harness from the archetype's skeleton.")
    ).register(
        NodeSpec("build", build_node, kind="tool", description="Compile with clang (ASan, coverage).")
    ).register(
        NodeSpec("execution", execution_node, kind="tool",
                 description="Run libFuzzer for the budget; measure coverage; collect crashes.")
    ).register(
        NodeSpec("enhancer", enhancer_node,
                 reads=("api_constraints", "archetype", "known_fixes", "coverage_strategies"),
                 writes=("known_fixes",), tools=KNOWLEDGE_AND_CODE,
                 description="Fix compile/run errors; improve coverage.")
    ).register(
        NodeSpec("crash_analyzer", crash_analyzer_node, reads=("api_constraints", "known_fixes"),
                 tools=CODE, description="Triage a crash from the sanitizer report.")
    ).register(
        NodeSpec("crash_feasibility_analyzer", crash_feasibility_node,
                 reads=("api_constraints", "decisions"), writes=("decisions",), tools=CODE,
                 description="Decide: real library bug or harness misuse.")
    ).register(
        NodeSpec("coverage_analyzer", coverage_analyzer_node,
                 reads=("api_constraints", "archetype", "coverage_strategies"),
                 writes=("coverage_strategies",), tools=KNOWLEDGE_AND_CODE,
                 description="Read the coverage report; propose what to exercise next.")
    ).register(
        NodeSpec("memory_manager", memory_manager_node, kind="tool", reads=cats,
                 description="Record each measurement; finalize the run.")
    )


SUPERVISOR_MEMORY = ("decisions",)


def agent_tools(registry: Registry) -> dict[str, tuple[str, ...]]:
    """Which tools each agent may call (agents without tools are left out)."""
    return {spec.name: spec.tools for spec in registry if spec.tools}


def memory_reads(registry: Registry) -> dict[str, tuple[str, ...]]:
    """Which session-memory categories each agent's prompt receives."""
    table = {spec.name: spec.reads for spec in registry}
    table["supervisor"] = SUPERVISOR_MEMORY
    return table
