"""Helpers every node uses: context, visit counting, work dirs, the run's event log."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from agent_graph.context import Context
from agent_graph.event_stream import emit
from long_term_memory.event_lines import append_event, event_record


def ctx_of(runtime: Runtime[Context] | None) -> Context:
    """The run's context; a plain dict (as some clients send) or nothing gives defaults."""
    context = getattr(runtime, "context", None)
    if isinstance(context, Context):
        return context
    if isinstance(context, dict):
        return Context.from_mapping(context)
    return Context()


def visit(name: str) -> dict[str, Any]:
    """The update that counts one visit of ``name`` (the node-visit guard reads it)."""
    return {"node_visits": {name: 1}}


def work_dir(state: Mapping[str, Any]) -> Path:
    """The target's output directory, created on demand."""
    path = Path(state.get("work_dir") or "results/adhoc")
    path.mkdir(parents=True, exist_ok=True)
    return path


def log_event(state: Mapping[str, Any], event_type: str, /, **data: Any) -> None:
    """Append one line to the target's ``events.jsonl`` audit log."""
    append_event(work_dir(state) / "events.jsonl", event_record(event_type, data))
    emit(event_type)
