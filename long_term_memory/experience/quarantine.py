"""The bank's quarantine: lines taken out of the JSONL are kept here, byte for byte.

``<task>.quarantine.jsonl`` holds one JSON object per removed line: when, from which file and
byte offset, why, and the exact bytes (``raw_b64``) with a readable preview. A line is written
here (and fsynced) before it leaves the records file, so a crash between the two steps keeps it
twice, never zero times. Nothing reads this file back automatically: it is for a person, who can
restore a line by decoding ``raw_b64`` and appending it to the records.
"""

from __future__ import annotations

import base64
import json
import os
import time
from pathlib import Path

PREVIEW_CHARS = 160


def keep_aside(path: Path, source: str, lines: list[tuple[int, bytes, str]]) -> None:
    """Append ``(offset, raw bytes, reason)`` entries to the quarantine file ``path`` and fsync."""
    if not lines:
        return
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    payload = "".join(
        json.dumps(
            {
                "v": 1,
                "ts": stamp,
                "file": source,
                "offset": offset,
                "reason": reason,
                "bytes": len(raw),
                "preview": raw[:PREVIEW_CHARS].decode("utf-8", "backslashreplace"),
                "raw_b64": base64.b64encode(raw).decode("ascii"),
            },
            ensure_ascii=True,
        )
        + "\n"
        for offset, raw, reason in lines
    ).encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        view = memoryview(payload)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def kept_lines(path: Path) -> list[bytes]:
    """The raw bytes of every quarantined line (tests and ``memory repair`` report them)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    out = []
    for line in text.splitlines():
        try:
            out.append(base64.b64decode(json.loads(line)["raw_b64"]))
        except (ValueError, KeyError, TypeError):
            continue
    return out
