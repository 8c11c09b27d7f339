"""The graph's state: plain data only, so it round-trips through a checkpointer and shows in Studio.

Live objects (chat model, FAISS index, embedding model) never live here: the long-term
retriever is a small serializable handle resolved by ``long_term_memory.retrieval.get_retriever``.
Every list or dict field that several nodes write names its reducer.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from typing_extensions import TypedDict

from agent_graph.memory.messages import merge_agent_messages

Phase = Literal["compilation", "optimization", "done"]


def add_counts(old: dict[str, int] | None, new: dict[str, int] | None) -> dict[str, int]:
    """Reducer for counters keyed by name: values in ``new`` are increments, not totals."""
    merged = dict(old or {})
    for key, inc in (new or {}).items():
        merged[key] = merged.get(key, 0) + int(inc)
    return merged


def add_usage(
    old: dict[str, dict[str, int]] | None, new: dict[str, dict[str, int]] | None
) -> dict[str, dict[str, int]]:
    """Reducer for per-agent token usage: sums ``calls``, ``prompt_tokens``, ``completion_tokens``."""
    merged = {agent: dict(v) for agent, v in (old or {}).items()}
    for agent, inc in (new or {}).items():
        merged[agent] = add_counts(merged.get(agent), inc)
    return merged


def append_items(old: list[Any] | None, new: list[Any] | None) -> list[Any]:
    """Reducer for append-only logs (coverage history, events)."""
    return list(old or []) + list(new or [])


def merge_extras(old: dict[str, Any] | None, new: dict[str, Any] | None) -> dict[str, Any]:
    """Reducer for ``extras``: a shallow merge, the room where added nodes keep their own data."""
    return {**(old or {}), **(new or {})}


class FuzzInput(TypedDict, total=False):
    """What a caller provides: a benchmark and one function of it (or a prepared target)."""

    benchmark: str
    function: str
    work_dir: str
    run_dir: str
    target: dict[str, Any]
    api: list[dict[str, Any]]
    header_facts: dict[str, Any]
    library_usage: dict[str, Any]  # fuzzkit.usage_models.TargetUsage: the library's own use of the API
    headers: list[str]
    library: dict[str, Any]
    project: str
    seed_dir: str
    dict_path: str


class FuzzOutput(TypedDict, total=False):
    """What a run returns to its caller."""

    target: dict[str, Any]
    phase: Phase
    harness_code: str
    build: dict[str, Any]
    run: dict[str, Any]
    coverage: dict[str, Any]
    best: dict[str, Any]
    coverage_history: list[dict[str, Any]]
    crash: dict[str, Any]
    crash_analysis: dict[str, Any]
    termination_reason: str
    counters: dict[str, int]
    usage: dict[str, dict[str, int]]
    memories_used: list[dict[str, Any]]
    session_memory: dict[str, Any]


class FuzzState(FuzzInput, FuzzOutput, total=False):
    """The whole state of one target's run."""

    long_term_retriever: dict[str, Any]
    analysis: dict[str, Any]
    harness_version: int
    fix_rounds: int
    no_gain_iterations: int
    pending_fixes: list[str]
    pending_rules: list[dict[str, Any]]  # the pending fixes' rules (fuzzkit.guidance_facts.Rule dumps)
    last_change: dict[str, Any]
    next_node: str
    last_decision: str
    last_consolidation: int
    coverage_analysis: dict[str, Any]
    local_memory: dict[str, Any]
    code_memory: dict[str, dict[str, Any]]
    agent_messages: Annotated[dict[str, list[dict[str, Any]]], merge_agent_messages]
    node_visits: Annotated[dict[str, int], add_counts]
    counters: Annotated[dict[str, int], add_counts]
    usage: Annotated[dict[str, dict[str, int]], add_usage]
    coverage_history: Annotated[list[dict[str, Any]], append_items]
    extras: Annotated[dict[str, Any], merge_extras]


def counter(state: FuzzState, name: str) -> int:
    """A counter's current value (0 when never incremented)."""
    return int((state.get("counters") or {}).get(name, 0))
