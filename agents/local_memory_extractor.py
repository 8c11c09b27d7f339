"""Local memory extractor: after each measured version, update directions and distill a lesson."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_graph.memory.local_memory import extraction_variables
from agent_graph.memory.local_memory_schema import ExtractionReply
from agents.base import Agent
from agents.sections import target_decl


class LocalMemoryExtractor(Agent[ExtractionReply]):
    """The SE-Agent memory manager's LLM step (``prompts/local_memory_extraction.txt``)."""

    name = "local_memory_extractor"
    template = "local_memory_extraction"
    output_model = ExtractionReply

    @staticmethod
    def variables(
        state: Mapping[str, Any], parent: dict[str, Any], measured: dict[str, Any], noise: float,
        iteration: int,
    ) -> dict[str, str]:
        """Template values.

        Args:
            state: the graph state (target, analysis, local memory, last change).
            parent: the snapshot the version is compared with (the best so far): ``version``,
                ``code``, ``lines_percent``.
            measured: the snapshot of the version just measured, same keys.
            noise: line-coverage points within which a change is noise.
            iteration: the phase-2 iteration that measured it.
        """
        change = state.get("last_change") or {}
        return extraction_variables(
            state.get("local_memory") or {},
            target=target_decl(state).prototype(),
            archetype=(state.get("analysis") or {}).get("archetype", ""),
            old_code=parent.get("code", ""),
            new_code=measured.get("code", ""),
            old_coverage=float(parent.get("lines_percent", 0.0)),
            new_coverage=float(measured.get("lines_percent", 0.0)),
            noise=noise,
            change=list(change.get("directions") or change.get("fixes") or []),
            operator=str(change.get("kind", "improve")),
            source_ref=f"v{measured.get('version')}",
            parent_ref=f"v{parent.get('version')}",
            iteration=iteration,
        )
