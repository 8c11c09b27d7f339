"""Running a libFuzzer binary for a time budget and describing what happened."""

from __future__ import annotations

import re
import shutil
import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fuzzkit.crash import CrashReport, parse_sanitizer_report
from fuzzkit.crash_replay import fuzz_env, replayed_crash
from fuzzkit.errors import ToolchainError
from fuzzkit.sandbox import Limits, run_sandboxed

_STATUS = re.compile(
    r"^#(?P<execs>\d+)\s+(?P<event>\w+)\s+cov: (?P<cov>\d+) ft: (?P<ft>\d+)"
    r"(?: corp: (?P<corp>\d+)/\S+)?(?:.*?exec/s: (?P<eps>\d+))?(?:.*?rss: (?P<rss>\d+)Mb)?"
)
_FINAL = re.compile(r"^stat::(?P<name>\w+):\s+(?P<value>\d+)", re.MULTILINE)


@dataclass
class FuzzStats:
    """Counters from the libFuzzer log (final stats when printed, else the last status line)."""

    execs: int = 0
    exec_per_sec: float = 0.0
    cov: int = 0
    ft: int = 0
    corpus_size: int = 0
    peak_rss_mb: int = 0
    new_units: int = 0


@dataclass
class FuzzRun:
    """One libFuzzer run. Crashes, leaks, timeouts and OOMs are results, not exceptions.

    ``crashed`` is True whenever libFuzzer or a sanitizer reported a failure (see
    ``crash.kind`` for which); ``timed_out`` only when the wall-clock guard had to kill the
    process group. ``limit`` names the sandbox limit that stopped the run (``processes``,
    ``memory``, ``wall-time``...; see :class:`fuzzkit.sandbox.SandboxResult`), and
    ``sandbox_warnings`` the isolation this machine could not give. ``progress``
    holds (seconds since start, cov, ft) per status line, timed when the line reached us.
    """

    exit_code: int | None
    seconds: float
    timed_out: bool
    crashed: bool
    crash_files: list[str]
    corpus_dir: str
    log_path: str
    stats: FuzzStats
    crash: CrashReport | None = None
    progress: list[tuple[float, int, int]] = field(default_factory=list)
    seed_dirs: list[str] = field(default_factory=list)
    limit: str | None = None
    sandbox_warnings: list[str] = field(default_factory=list)

    def replay_inputs(self) -> list[Path]:
        """What coverage should replay: the corpus, the seeds and the crash files.

        libFuzzer never copies seed inputs into the corpus directory, so seeds must be
        replayed separately or their coverage is lost.
        """
        return [Path(self.corpus_dir), *map(Path, self.seed_dirs), *map(Path, self.crash_files)]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        data = asdict(self)
        data["crash"] = self.crash.to_dict() if self.crash else None
        data["progress"] = [list(p) for p in self.progress]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FuzzRun:
        """Inverse of :meth:`to_dict`."""
        return cls(
            **{
                **data,
                "stats": FuzzStats(**data["stats"]),
                "crash": CrashReport.from_dict(data["crash"]) if data.get("crash") else None,
                "progress": [tuple(p) for p in data.get("progress", [])],
            }
        )


def parse_fuzz_stats(text: str) -> FuzzStats:
    """Counters from a libFuzzer log; pure."""
    stats = FuzzStats()
    for line in text.splitlines():
        m = _STATUS.match(line)
        if m:
            stats.execs = int(m["execs"])
            stats.cov, stats.ft = int(m["cov"]), int(m["ft"])
            stats.corpus_size = int(m["corp"]) if m["corp"] else stats.corpus_size
            stats.exec_per_sec = float(m["eps"]) if m["eps"] else stats.exec_per_sec
            stats.peak_rss_mb = max(stats.peak_rss_mb, int(m["rss"] or 0))
    final = {m["name"]: int(m["value"]) for m in _FINAL.finditer(text)}
    stats.execs = final.get("number_of_executed_units", stats.execs)
    stats.exec_per_sec = float(final.get("average_exec_per_sec", stats.exec_per_sec))
    stats.peak_rss_mb = final.get("peak_rss_mb", stats.peak_rss_mb)
    stats.new_units = final.get("new_units_added", stats.new_units)
    return stats


def _flags(**values: object) -> list[str]:
    """The ``-name=value`` flags of libFuzzer for each value given (none for 0, ``None`` or empty)."""
    return [f"-{name}={value}" for name, value in values.items() if value]


def run_fuzzer(
    binary: Path,
    work_dir: Path,
    seconds: int = 60,
    rss_limit_mb: int = 2048,
    timeout_per_input: int = 10,
    max_len: int | None = None,
    seed_dirs: Sequence[Path] = (),
    dict_path: Path | None = None,
    extra_args: Sequence[str] = (),
    harness_name: str = "",
    writable_tmp: bool = False,
    seed: int = 0,
    runs: int = 0,
) -> FuzzRun:
    """Fuzz ``binary`` for ``seconds`` with new inputs kept in ``work_dir/corpus``.

    Artifacts go to ``work_dir/artifacts/`` (emptied first), the log to ``work_dir/fuzz.log``.
    Seed directories are read, never written. ``harness_name`` (the harness file name) decides
    :attr:`CrashReport.in_harness`; by default the binary's name plus ``.c`` (as built by
    :func:`fuzzkit.harness.build_harness`).
    ``writable_tmp``: a library's own harness may write to ``/tmp`` (see :class:`Limits`).
    ``seed``, ``runs``: libFuzzer's ``-seed`` and ``-runs`` (0: its defaults); with both, a run ends
    after the same inputs each time (unless ``seconds`` ends it first).

    Raises:
        ToolchainError: The binary does not exist.
    """
    binary = Path(binary).resolve()
    if not binary.is_file():
        raise ToolchainError(f"fuzz binary {binary} does not exist", "build the harness first")
    work_dir = Path(work_dir).resolve()
    corpus, artifacts, log_path = work_dir / "corpus", work_dir / "artifacts", work_dir / "fuzz.log"
    corpus.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(artifacts, ignore_errors=True)
    artifacts.mkdir()
    options = [f"-max_total_time={int(seconds)}", f"-rss_limit_mb={int(rss_limit_mb)}",
               f"-timeout={int(timeout_per_input)}", f"-artifact_prefix={artifacts}/",
               "-print_final_stats=1", *extra_args,
               *_flags(max_len=max_len, dict=Path(dict_path).resolve() if dict_path else None,
                       seed=seed, runs=runs)]
    cmd = [str(binary), *options, str(corpus), *(str(Path(d).resolve()) for d in seed_dirs)]
    progress = _Progress()
    grace = timeout_per_input + 15
    # The memory cgroup is a backstop above libFuzzer's own -rss_limit_mb check.
    limits = Limits(cpu_seconds=int(seconds + grace + 30), memory_mb=int(rss_limit_mb) + 1024,
                    writable_tmp=writable_tmp)
    result = run_sandboxed(cmd, cwd=work_dir, log_path=log_path, wall_timeout=seconds + grace,
                           limits=limits, env=fuzz_env(), on_line=progress.on_line)
    text = log_path.read_text(errors="replace")
    harness_name = harness_name or _harness_hint(binary)
    crash = _crash_of(text, harness_name, result.limit, rss_limit_mb)
    crash, files = replayed_crash(crash, text, binary, work_dir, harness_name, timeout_per_input, limits)
    return FuzzRun(
        exit_code=result.exit_code, seconds=result.seconds, timed_out=result.timed_out,
        crashed=crash is not None or bool(files), crash_files=files,
        corpus_dir=str(corpus), log_path=str(log_path), stats=parse_fuzz_stats(text), crash=crash,
        progress=progress.points, seed_dirs=[str(Path(d).resolve()) for d in seed_dirs],
        limit=result.limit, sandbox_warnings=result.warnings,
    )


def merge_corpus(binary: Path, inputs: Sequence[Path], work_dir: Path, timeout_per_input: int = 10,
                 rss_limit_mb: int = 2048) -> Path:
    """The subset of ``inputs`` that keeps all their coverage features (libFuzzer's ``-merge=1``).

    The kept inputs are copied into ``work_dir/merged`` (replaced), which is returned; the log
    is ``work_dir/merge.log``. ``inputs`` (corpus directories) are only read.

    Raises:
        ToolchainError: The binary is missing, or the merge did not finish cleanly.
    """
    binary = Path(binary).resolve()
    if not binary.is_file():
        raise ToolchainError(f"fuzz binary {binary} does not exist", "build the harness first")
    work_dir = Path(work_dir).resolve()
    merged, log_path = work_dir / "merged", work_dir / "merge.log"
    shutil.rmtree(merged, ignore_errors=True)
    merged.mkdir(parents=True)
    count = sum(1 for d in inputs if Path(d).is_dir() for f in Path(d).iterdir() if f.is_file())
    cmd = [str(binary), "-merge=1", f"-merge_control_file={work_dir / 'merge.control'}",
           f"-timeout={int(timeout_per_input)}", f"-rss_limit_mb={int(rss_limit_mb)}", str(merged),
           *(str(Path(d).resolve()) for d in inputs)]
    wall = 60 + timeout_per_input * count
    result = run_sandboxed(cmd, cwd=work_dir, log_path=log_path, wall_timeout=wall,
                           limits=Limits(cpu_seconds=wall + 30, memory_mb=int(rss_limit_mb) + 1024),
                           env=fuzz_env())
    if result.exit_code != 0 or result.timed_out:
        raise ToolchainError(f"libFuzzer -merge=1 with {binary.name} failed (exit {result.exit_code}"
                             f"{', timed out' if result.timed_out else ''}); see {log_path}",
                             "export the corpus as the run left it (--no-minimize)")
    return merged


class _Progress:
    """(seconds since start, cov, ft) of each libFuzzer status line, timed as it arrives."""

    def __init__(self) -> None:
        self.points: list[tuple[float, int, int]] = []
        self._lock = threading.Lock()

    def on_line(self, elapsed: float, line: str) -> None:
        m = _STATUS.match(line)
        if m:
            with self._lock:
                self.points.append((round(elapsed, 3), int(m["cov"]), int(m["ft"])))


def _crash_of(text: str, harness_name: str, limit: str | None, rss_limit_mb: int) -> CrashReport | None:
    """The run's crash: the sanitizer's report, or an OOM when the memory cgroup killed it."""
    crash = parse_sanitizer_report(text, harness_name=harness_name)
    if crash is None and limit == "memory":
        # The memory cgroup (a backstop above -rss_limit_mb) killed the fuzzer before libFuzzer's
        # once-a-second RSS check could report: a fast allocator is still an OOM result.
        crash = CrashReport(kind="oom", category="oom", signature="oom@memory-limit",
                            summary=f"killed by the sandbox memory limit ({int(rss_limit_mb) + 1024} MB) "
                                    "before libFuzzer reported")
    return crash


def _harness_hint(binary: Path) -> str:
    """The harness file name, assuming the build_harness naming (``<stem>`` from ``<stem>.c``)."""
    for suffix in (".c", ".cc", ".cpp", ".cxx"):
        if (binary.parent / f"{binary.name}{suffix}").exists():
            return binary.name + suffix
    return binary.name + ".c"
