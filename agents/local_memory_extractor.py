"""Local memory extractor: after each measured version, update directions and distill a lesson."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from agent_graph.memory.local_memory import apply_extraction, empty_local_memory, extraction_variables
from agent_graph.memory.local_memory_schema import ExtractionReply
from agents.base import Agent
from agents.parsing import ReplyParseError, extract_json
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


def parse_extraction(reply_text: str) -> ExtractionReply:
    """The extraction reply validated (json-repair on the way).

    Raises:
        ValueError: no JSON object, or one that does not match :class:`ExtractionReply`;
            the message says which field is wrong.
    """
    if not isinstance(reply_text, str) or not reply_text.strip():
        raise ValueError("the reply is empty")
    try:
        data = extract_json(reply_text)
    except ReplyParseError as exc:
        raise ValueError(str(exc)) from exc
    try:
        return ExtractionReply.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "reply"
        raise ValueError(f"{where}: {first['msg']} ({exc.error_count()} problem(s))") from exc


def fold_reply(
    memory: dict[str, Any] | None, reply_text: str, *, source_ref: Mapping[str, Any] | None = None,
    metrics: str = "",
) -> tuple[dict[str, Any], str]:
    """Read an extraction reply and fold it into the memory: ``(memory, reason to log)``.

    A reply that cannot be parsed or validated returns ``memory`` itself (an empty memory for
    ``None``), unchanged, and a reason starting with ``rejected:``.
    """
    try:
        reply = parse_extraction(reply_text)
    except ValueError as exc:
        kept = memory if memory is not None else empty_local_memory()
        return kept, f"rejected: extraction reply unusable, local memory unchanged: {exc}"
    return apply_extraction(memory, reply, source_ref=source_ref, metrics=metrics)
