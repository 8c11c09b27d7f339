"""Audit-log lines: ``{"v": 1, "type": ..., "ts": ..., "data": {...}}``, one JSON object a line.

The one writer behind both logs a run keeps: each target's ``events.jsonl`` (the graph's steps)
and the run's ``run.events.jsonl`` (the experience memory). A line is appended with one
``write`` under an ``flock``, so several processes can share a file and no line is interleaved.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path
from typing import Any

EVENT_VERSION = 1


def event_record(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """One event, stamped now (UTC, seconds)."""
    return {"v": EVENT_VERSION, "type": kind, "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "data": data}


def append_event(path: Path, event: dict[str, Any]) -> None:
    """Append ``event`` to ``path`` as one line (parent directories created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(event, default=str, ensure_ascii=False) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, line)
    finally:
        os.close(fd)
