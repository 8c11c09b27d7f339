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

import fcntl
import json
import os
import time
from pathlib import Path
from typing import Any

EVENT_VERSION = 1
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
        event = {
            "v": EVENT_VERSION,
            "type": kind,
            "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "data": data,
        }
        self.events.append(event)
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            line = (json.dumps(event, default=str, ensure_ascii=False) + "\n").encode()
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                os.write(fd, line)
            finally:
                os.close(fd)
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
