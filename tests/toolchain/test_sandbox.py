from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from fuzzkit.sandbox import Limits, run_sandboxed
from tests.sandbox_procs import wait_gone

pytestmark = pytest.mark.toolchain


def test_wall_timeout_kills_the_whole_group_even_if_it_ignores_sigterm(tmp_path: Path) -> None:
    log = tmp_path / "log"
    # Ignored signals stay ignored across fork and exec, so the sleeping child ignores TERM too.
    script = "trap '' TERM; sleep 120 & echo child $!; wait"
    start = time.monotonic()
    result = run_sandboxed(["sh", "-c", script], cwd=tmp_path, log_path=log, wall_timeout=1)
    # bwrap itself dies on SIGTERM and takes its namespace down (-15); without it the group
    # ignores TERM and gets SIGKILL two seconds later (-9). Either way nothing may survive.
    assert result.timed_out and result.exit_code in (-signal.SIGTERM, -signal.SIGKILL)
    assert time.monotonic() - start < 1 + 2 + 3
    assert log.read_text().startswith("child ")
    # The printed pid is a PID-namespace pid under bwrap; the child is found by its cwd.
    assert not wait_gone(tmp_path)


def test_file_size_limit(tmp_path: Path) -> None:
    result = run_sandboxed(
        ["sh", "-c", "head -c 5000000 /dev/zero > big"],
        cwd=tmp_path,
        log_path=tmp_path / "log",
        wall_timeout=20,
        limits=Limits(file_size_mb=1),
    )
    assert result.exit_code != 0 and not result.timed_out
    assert (tmp_path / "big").stat().st_size <= 1024 * 1024


def test_cpu_limit_stops_a_busy_loop(tmp_path: Path) -> None:
    result = run_sandboxed(
        ["sh", "-c", "while :; do :; done"],
        cwd=tmp_path,
        log_path=tmp_path / "log",
        wall_timeout=30,
        limits=Limits(cpu_seconds=1),
    )
    assert not result.timed_out
    assert result.exit_code in (-signal.SIGXCPU, -signal.SIGKILL)
    assert result.seconds < 15


def test_log_keeps_head_and_tail_of_a_flood(tmp_path: Path) -> None:
    log = tmp_path / "log"
    lines: list[tuple[float, str]] = []
    result = run_sandboxed(
        ["sh", "-c", "seq 1 100000; echo FINAL"],
        cwd=tmp_path,
        log_path=log,
        wall_timeout=30,
        on_line=lambda t, line: lines.append((t, line)),
        max_log_bytes=1000,
    )
    assert result.exit_code == 0
    text = log.read_text()
    assert text.startswith("1\n2\n3\n")
    assert "bytes of output dropped" in text and text.rstrip().endswith("FINAL")
    assert len(text) < 100_000
    assert len(lines) == 100_001 and lines[-1][1] == "FINAL"
    assert all(a[0] <= b[0] for a, b in zip(lines, lines[1:], strict=False))
