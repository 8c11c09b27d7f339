"""Helpers for :mod:`fuzzkit.sandbox`: the bounded log pump and the session process count."""

from __future__ import annotations

import os
import signal
import subprocess
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


def kill_group(pid: int, sig: int) -> None:
    """Signal process group ``pid``; a group that is gone is not an error."""
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def wait_or_kill(
    proc: subprocess.Popen[bytes], wall_timeout: float, watchdog: int | None
) -> tuple[bool, str | None]:
    """Wait for the process; kill its group on the wall timeout or the watchdog's count.

    Returns whether the wall timeout fired, and ``processes`` if the watchdog did.
    """
    deadline = time.monotonic() + wall_timeout
    limit = None
    while proc.poll() is None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        if watchdog is None:
            try:
                proc.wait(timeout=remaining)
            except subprocess.TimeoutExpired:
                break
            continue
        if count_session(proc.pid) > watchdog:
            limit = "processes"
            kill_group(proc.pid, signal.SIGKILL)
            proc.wait()
            break
        time.sleep(0.05)
    if proc.poll() is not None:
        return False, limit
    kill_group(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=2)
    except subprocess.TimeoutExpired:
        kill_group(proc.pid, signal.SIGKILL)
        proc.wait()
    return True, limit
