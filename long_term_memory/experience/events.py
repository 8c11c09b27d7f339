"""The run's memory audit log, ``run.events.jsonl``: one JSON object per line.

Each line is ``{"v": 1, "type": ..., "ts": ..., "data": {...}}``. Types written by the
experience memory (a skip always carries a ``reason``):

``memory.search.result``, ``memory.inject``, ``memory.hit.write``, ``memory.validation.write``,
``memory.candidate.write``, ``memory.candidate.merge``, ``memory.candidate.skip``,
``memory.extract.request``, ``memory.extract.error``, ``memory.extract.skip``,
``memory.write.skip``, ``memory.bank.reembed``, ``memory.bank.repair``, ``memory.bank.torn_line``,
``memory.bank.quarantine`` (unusable JSONL lines moved to the quarantine file, or skipped).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from long_term_memory.event_lines import EVENT_VERSION, append_event, event_record

EVENT_TYPES = frozenset(
    {
        "memory.search.result",
        "memory.inject",
        "memory.hit.write",
        "memory.validation.write",
        "memory.candidate.write",
        "memory.candidate.merge",
        "memory.candidate.skip",
        "memory.extract.request",
        "memory.extract.error",
        "memory.extract.skip",
        "memory.write.skip",
        "memory.bank.reembed",
        "memory.bank.repair",
        "memory.bank.torn_line",
        "memory.bank.quarantine",
    }
)


class EventLog:
    """Appends events to one JSONL file; ``EventLog(None)`` keeps them in memory only.

    Every event is also kept in :attr:`events` (tests and the caller's summary read it). Lines
    are written with one ``write`` under an ``flock``, so several processes can share a file.
    """

    def __init__(self, path: Path | None) -> None:
        """Write to ``path`` (parent directories are created on the first event)."""
        self.path = Path(path) if path is not None else None
        self.events: list[dict[str, Any]] = []

    def emit(self, kind: str, /, **data: Any) -> dict[str, Any]:
        """Record one event and return it.

        Raises:
            ValueError: ``kind`` is not one of :data:`EVENT_TYPES` (a typo would hide events
                from anyone grepping the log).
        """
        if kind not in EVENT_TYPES:
            raise ValueError(f"unknown memory event type {kind!r}; known: {sorted(EVENT_TYPES)}")
        event = event_record(kind, data)
        self.events.append(event)
        if self.path is not None:
            append_event(self.path, event)
        return event

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        """The events of one type recorded through this log object."""
        return [e for e in self.events if e["type"] == kind]


def read_events(path: Path) -> list[dict[str, Any]]:
    """All well-formed events of a log file (a torn last line is ignored)."""
    out = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict) and event.get("v") == EVENT_VERSION:
            out.append(event)
    return out
