"""Helpers for :mod:`fuzzkit.sandbox`: the bounded log pump and the session process count."""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import IO

# Enough to keep libFuzzer's final report when a chatty harness floods stdout.
MAX_LOG_BYTES = 32 * 1024 * 1024
_TAIL_LINES = 5000


def count_session(sid: int) -> int:
    """How many live processes belong to session ``sid`` (the sandboxed command's pid)."""
    count = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        # Fields after the parenthesized command name: state ppid pgrp session ...
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 3 and fields[0] != b"Z" and int(fields[3]) == sid:
            count += 1
    return count


def count_user_processes() -> int:
    """How many processes this user has (``RLIMIT_NPROC`` counts them all)."""
    uid = os.getuid()
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                count += entry.stat().st_uid == uid
            except OSError:
                continue
    return count


def pump(
    stream: IO[bytes],
    log_path: Path,
    start: float,
    on_line: Callable[[float, str], None] | None,
    append: bool,
    max_log_bytes: int,
) -> None:
    """Copy ``stream`` to ``log_path``, keeping the first ``max_log_bytes`` and the last lines."""
    written = 0
    dropped = 0
    tail: deque[bytes] = deque(maxlen=_TAIL_LINES)
    with open(log_path, "ab" if append else "wb") as log:
        # Bounded reads: a harness printing binary data without newlines must not eat memory.
        for raw in iter(lambda: stream.readline(65536), b""):
            if on_line is not None:
                on_line(time.monotonic() - start, raw.decode("utf-8", "replace").rstrip("\n"))
            if not tail and written + len(raw) <= max_log_bytes:
                log.write(raw)
                written += len(raw)
            else:
                if len(tail) == tail.maxlen:
                    dropped += len(tail[0])
                tail.append(raw)
        if tail:
            log.write(f"\n[... {dropped} bytes of output dropped ...]\n".encode())
            log.writelines(tail)
