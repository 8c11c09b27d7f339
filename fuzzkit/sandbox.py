"""Running an untrusted binary with resource limits, a wall timeout and a bounded log."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

# Enough to keep libFuzzer's final report when a chatty harness floods stdout.
MAX_LOG_BYTES = 32 * 1024 * 1024
_TAIL_LINES = 5000


@dataclass(frozen=True)
class Limits:
    """Per-process limits applied in the child before it runs.

    Address space is deliberately not limited: ASan reserves terabytes of virtual memory.
    Memory is bounded by libFuzzer's ``-rss_limit_mb`` instead.
    """

    cpu_seconds: int | None = None
    file_size_mb: int | None = 512
    extra_processes: int | None = 256


@dataclass
class SandboxResult:
    """How a sandboxed process ended; ``exit_code`` is negative for a signal, None if unknown."""

    exit_code: int | None
    seconds: float
    timed_out: bool


def _count_user_processes() -> int:
    uid = os.getuid()
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                count += entry.stat().st_uid == uid
            except OSError:
                continue
    return count


def _preexec(limits: Limits, nproc: int | None) -> Callable[[], None]:
    def apply() -> None:
        def cap(which: int, value: int) -> None:
            try:
                _, hard = resource.getrlimit(which)
                soft = value if hard == resource.RLIM_INFINITY else min(value, hard)
                resource.setrlimit(which, (soft, hard))
            except (ValueError, OSError):
                pass  # best effort: a limit we may not lower is not worth failing the run

        cap(resource.RLIMIT_CORE, 0)
        if limits.cpu_seconds:
            cap(resource.RLIMIT_CPU, limits.cpu_seconds)
        if limits.file_size_mb:
            cap(resource.RLIMIT_FSIZE, limits.file_size_mb * 1024 * 1024)
        if nproc:
            cap(resource.RLIMIT_NPROC, nproc)

    return apply


def _kill_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def run_sandboxed(
    cmd: Sequence[str],
    *,
    cwd: Path,
    log_path: Path,
    wall_timeout: float,
    limits: Limits = Limits(),  # noqa: B008 - frozen dataclass, safe as a default
    env: dict[str, str] | None = None,
    on_line: Callable[[float, str], None] | None = None,
    append: bool = False,
    max_log_bytes: int = MAX_LOG_BYTES,
) -> SandboxResult:
    """Run ``cmd`` in its own process group, writing stdout+stderr to ``log_path``.

    The whole group gets SIGTERM, then SIGKILL two seconds later, when ``wall_timeout``
    passes. The log keeps the first ``max_log_bytes`` and the last lines.

    Args:
        cmd: The command.
        cwd: Working directory.
        log_path: Where the combined output goes.
        wall_timeout: Seconds before the group is killed.
        limits: Resource limits for the child.
        env: Environment (defaults to this process's).
        on_line: Called from a reader thread with (seconds since start, line) per line.
        append: Append to ``log_path`` instead of replacing it.
        max_log_bytes: Output kept from the start; after that only the last lines are kept.
    """
    nproc = None
    if limits.extra_processes:
        nproc = _count_user_processes() + limits.extra_processes
    start = time.monotonic()
    proc = subprocess.Popen(
        list(cmd),
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=_preexec(limits, nproc),
    )
    assert proc.stdout is not None
    reader = threading.Thread(
        target=_pump, args=(proc.stdout, log_path, start, on_line, append, max_log_bytes), daemon=True
    )
    reader.start()
    timed_out = False
    try:
        proc.wait(timeout=wall_timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid, signal.SIGKILL)
            proc.wait()
    seconds = time.monotonic() - start
    # Leftover children (a symbolizer, a forked helper) would hold the pipe open.
    _kill_group(proc.pid, signal.SIGKILL)
    reader.join(timeout=10)
    return SandboxResult(exit_code=proc.returncode, seconds=round(seconds, 3), timed_out=timed_out)


def _pump(
    stream: IO[bytes],
    log_path: Path,
    start: float,
    on_line: Callable[[float, str], None] | None,
    append: bool,
    max_log_bytes: int,
) -> None:
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
