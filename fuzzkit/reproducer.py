"""A crash input replayed alone and made as small as libFuzzer can make it, for a bug report.

libFuzzer minimizes a crash with ``-minimize_crash=1 -runs=N -exact_artifact_path=OUT INPUT``:
it runs itself again and again on smaller mutations of the input, keeping one that still
crashes with the same dedup token (ASan's ``dedup_token_length`` names the top frames; without
it every crash would count as the same and the input could slide to another bug). The result
is checked by replaying it: it is kept only when it gives the same kind and library frames as
the original, else the original input is the reproducer.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from fuzzkit.crash import CrashReport, library_signature, parse_sanitizer_report
from fuzzkit.crash_replay import fuzz_env
from fuzzkit.errors import ToolchainError
from fuzzkit.sandbox import Limits, run_sandboxed

__all__ = ["Reproducer", "minimize_crash", "replay_input", "reproduce"]



def _limits(seconds: float, rss_limit_mb: int) -> Limits:
    """As a fuzzing run's: the memory control group is a backstop above libFuzzer's own RSS check."""
    return Limits(cpu_seconds=int(seconds), memory_mb=int(rss_limit_mb) + 1024)


@dataclass
class Reproducer:
    """The input a report ships, and what replaying it alone gave.

    ``report`` is None when the input does not crash when run alone; ``log`` is that run's output.
    """

    path: Path
    original_bytes: int
    minimized: bool
    report: CrashReport | None
    log: str

    @property
    def size(self) -> int:
        """The reproducer's size in bytes."""
        return self.path.stat().st_size


def replay_input(binary: Path, unit: Path, work_dir: Path, *, harness_name: str = "harness.c",
                 timeout_per_input: int = 10, rss_limit_mb: int = 2048) -> tuple[CrashReport | None, str]:
    """Run ``binary`` on ``unit`` alone: the sanitizer's report (None: no crash) and the output."""
    work_dir.mkdir(parents=True, exist_ok=True)
    log = work_dir / "replay.log"
    cmd = [str(binary), f"-timeout={int(timeout_per_input)}", f"-rss_limit_mb={int(rss_limit_mb)}", str(unit)]
    run_sandboxed(cmd, cwd=work_dir, log_path=log, wall_timeout=timeout_per_input + 30,
                  limits=_limits(timeout_per_input + 30, rss_limit_mb), env=fuzz_env())
    text = log.read_text(errors="replace")
    log.unlink()
    ran = text.find(f"Running: {unit}")
    return parse_sanitizer_report(text[ran:] if ran >= 0 else text, harness_name=harness_name), text


def minimize_crash(binary: Path, unit: Path, out: Path, work_dir: Path, *, runs: int = 10000,
                   seconds: int = 30, timeout_per_input: int = 10, rss_limit_mb: int = 2048) -> bool:
    """Minimize ``unit`` into ``out`` with libFuzzer's ``-minimize_crash``; False when it wrote nothing.

    ``runs`` and ``seconds`` bound each minimization step; the whole stops after a few steps' time.
    """
    work_dir.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    env = fuzz_env()
    env["ASAN_OPTIONS"] = f"{env['ASAN_OPTIONS']}:dedup_token_length=3"
    cmd = [str(binary), "-minimize_crash=1", f"-runs={int(runs)}", f"-max_total_time={int(seconds)}",
           f"-timeout={int(timeout_per_input)}", f"-rss_limit_mb={int(rss_limit_mb)}",
           f"-exact_artifact_path={out}", str(unit)]
    wall = 4 * seconds + 60
    run_sandboxed(cmd, cwd=work_dir, log_path=work_dir / "minimize.log", wall_timeout=wall,
                  limits=_limits(wall, rss_limit_mb), env=env, writable=[out.parent])
    return out.is_file() and out.stat().st_size > 0


def reproduce(binary: Path, unit: Path, dest: Path, work_dir: Path, *, harness_name: str = "harness.c",
              runs: int = 10000, seconds: int = 30) -> Reproducer:
    """``unit`` replayed alone, minimized, and the smallest input that crashes the same way at ``dest``.

    Raises:
        ToolchainError: The binary or the input is missing.
    """
    binary, unit = Path(binary).resolve(), Path(unit).resolve()
    for path, what in ((binary, "fuzz binary"), (unit, "crash input")):
        if not path.is_file():
            raise ToolchainError(f"{what} {path} does not exist", "rerun the target that found the crash")
    original, log = replay_input(binary, unit, work_dir, harness_name=harness_name)
    size = unit.stat().st_size
    if original is not None and minimize_crash(binary, unit, dest, work_dir, runs=runs, seconds=seconds):
        smaller, small_log = replay_input(binary, dest, work_dir, harness_name=harness_name)
        same = smaller is not None and smaller.kind == original.kind and (
            library_signature(smaller, harness_name) == library_signature(original, harness_name))
        if same and dest.stat().st_size <= size:
            return Reproducer(dest, size, dest.stat().st_size < size, smaller, small_log)
    shutil.copyfile(unit, dest)
    return Reproducer(dest, size, False, original, log)
