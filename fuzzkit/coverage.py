"""Measuring library coverage by replaying inputs through the coverage build."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fuzzkit.errors import ToolchainError
from fuzzkit.library import LibraryBuild
from fuzzkit.sandbox import Limits, run_sandboxed
from fuzzkit.sandbox_env import step_env
from fuzzkit.tools import tool

_METRICS = ("lines", "functions", "branches")
_CODE_REGION = 0


@dataclass
class CoverageCount:
    """Covered out of count, as llvm-cov reports them."""

    covered: int = 0
    count: int = 0

    @property
    def percent(self) -> float:
        """Percentage covered (0 when there is nothing to cover)."""
        return round(100.0 * self.covered / self.count, 2) if self.count else 0.0

    def to_dict(self) -> dict[str, Any]:
        """``{covered, count, percent}``."""
        return {"covered": self.covered, "count": self.count, "percent": self.percent}


@dataclass
class CoverageReport:
    """Coverage of the library's own files (``LibraryBuild.coverage_files``) only.

    ``function_hits`` maps each library function (static ones without llvm-cov's ``file.c:``
    prefix) to its execution count; ``function_region_percent`` gives the share of its
    code regions that ran, to tell a barely-entered function from an exercised one.
    """

    lines: CoverageCount = field(default_factory=CoverageCount)
    functions: CoverageCount = field(default_factory=CoverageCount)
    branches: CoverageCount = field(default_factory=CoverageCount)
    per_file: dict[str, dict[str, CoverageCount]] = field(default_factory=dict)
    function_hits: dict[str, int] = field(default_factory=dict)
    function_region_percent: dict[str, float] = field(default_factory=dict)
    inputs_run: int = 0
    seconds: float = 0.0

    def uncovered(self, names: Iterable[str]) -> list[str]:
        """The given function names that never ran (unknown names count as not run)."""
        return [n for n in names if self.function_hits.get(n, 0) == 0]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; each metric is ``{covered, count, percent}``."""
        data = asdict(self)
        for metric in _METRICS:
            data[metric] = getattr(self, metric).to_dict()
        data["per_file"] = {
            name: {m: c.to_dict() for m, c in metrics.items()} for name, metrics in self.per_file.items()
        }
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CoverageReport:
        """Inverse of :meth:`to_dict` (``percent`` is recomputed)."""

        def count(d: dict[str, Any]) -> CoverageCount:
            return CoverageCount(covered=d["covered"], count=d["count"])

        return cls(
            **{m: count(data[m]) for m in _METRICS},
            per_file={
                name: {m: count(c) for m, c in metrics.items()}
                for name, metrics in data.get("per_file", {}).items()
            },
            function_hits=dict(data.get("function_hits", {})),
            function_region_percent=dict(data.get("function_region_percent", {})),
            inputs_run=data.get("inputs_run", 0),
            seconds=data.get("seconds", 0.0),
        )


def measure_coverage(
    cov_binary: Path,
    inputs: list[Path],
    lib: LibraryBuild,
    work_dir: Path,
    timeout_per_input: int = 10,
) -> CoverageReport:
    """Replay corpus directories and input files through ``cov_binary`` and report coverage.

    Directories run in one process (falling back to one process per file if it dies);
    single files (crash files) run one per process so a crash cannot lose other profiles.
    Paths that do not exist are skipped.

    Raises:
        ToolchainError: The binary is missing or the LLVM tools fail.
    """
    start = time.monotonic()
    cov_binary = Path(cov_binary).resolve()
    work_dir = Path(work_dir).resolve()
    prof_dir = work_dir / "profraw"
    shutil.rmtree(prof_dir, ignore_errors=True)
    inputs_run = replay_inputs(cov_binary, inputs, prof_dir, work_dir / "replay.log", timeout_per_input)
    profdata = merge_profiles(
        sorted(prof_dir.glob("*.profraw")), work_dir / "coverage.profdata", cov_binary.name
    )
    report = export_report(profdata, [cov_binary], lib)
    report.inputs_run = inputs_run
    report.seconds = round(time.monotonic() - start, 3)
    return report


def replay_inputs(
    cov_binary: Path, inputs: Sequence[Path], prof_dir: Path, log: Path, timeout_per_input: int = 10,
    writable_tmp: bool = False,
) -> int:
    """Replay ``inputs`` through ``cov_binary``, writing ``.profraw`` files into ``prof_dir``.

    Directories run in one process (falling back to one process per file if it dies);
    single files (crash files) run one per process so a crash cannot lose other profiles.
    Paths that do not exist are skipped. Returns how many inputs ran. ``writable_tmp``: see
    :class:`fuzzkit.sandbox.Limits` (a library's own harness).

    Raises:
        ToolchainError: The binary does not exist.
    """
    if not Path(cov_binary).is_file():
        raise ToolchainError(f"coverage binary {cov_binary} does not exist", "build the harness")
    prof_dir.mkdir(parents=True, exist_ok=True)
    dirs = [Path(p).resolve() for p in inputs if Path(p).is_dir()]
    files = [Path(p).resolve() for p in inputs if Path(p).is_file()]
    replay = _Replayer(Path(cov_binary).resolve(), prof_dir, log, timeout_per_input, writable_tmp)
    corpus_files = [f for d in dirs for f in sorted(d.iterdir()) if f.is_file()]
    if not replay.run(dirs, len(corpus_files)):
        for stale in prof_dir.glob("*.profraw"):
            stale.unlink()  # rerun file by file without counting the batch twice
        for path in corpus_files:
            replay.run([path], 1)
    for path in files:
        replay.run([path], 1)
    return replay.inputs_run


def merge_profiles(raws: Sequence[Path], profdata: Path, what: str) -> Path:
    """``llvm-profdata merge`` of ``raws`` into ``profdata``.

    Raises:
        ToolchainError: There is no profile, or the tool fails.
    """
    if not raws:
        raise ToolchainError(
            f"{what} wrote no coverage profile",
            f"run it by hand with LLVM_PROFILE_FILE set; see the replay log next to {profdata}",
        )
    _llvm([tool("llvm-profdata"), "merge", "-sparse", *map(str, raws), "-o", str(profdata)])
    return profdata


def export_report(profdata: Path, binaries: Sequence[Path], lib: LibraryBuild) -> CoverageReport:
    """``llvm-cov export`` of the library's files for one or more coverage binaries."""
    objects = [str(binaries[0])] + [arg for b in binaries[1:] for arg in ("-object", str(b))]
    exported = _llvm(
        [tool("llvm-cov"), "export", "-skip-expansions", f"-instr-profile={profdata}",
         *objects, *lib.coverage_files]
    )  # fmt: skip
    return parse_export(json.loads(exported), lib.coverage_files)


class _Replayer:
    def __init__(self, binary: Path, prof_dir: Path, log: Path, timeout_per_input: int,
                 writable_tmp: bool = False) -> None:
        self.binary = binary
        self.writable_tmp = writable_tmp
        self.log = log
        self.timeout_per_input = timeout_per_input
        self.prof_dir = prof_dir
        self.env = step_env({"LOGICFUZZ_REPLAY_TIMEOUT": str(timeout_per_input)})
        self.runs = 0
        self.inputs_run = 0
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("")

    def run(self, paths: list[Path], count: int) -> bool:
        """Run the binary on ``paths`` (plus its empty input); True if it exited cleanly."""
        result = run_sandboxed(
            [str(self.binary), *map(str, paths)],
            cwd=self.log.parent,
            log_path=self.log,
            wall_timeout=30 + self.timeout_per_input * (count + 1),
            # No ASan here, so RLIMIT_AS works and stops a harness that allocates without bound.
            limits=Limits(file_size_mb=256, address_space_mb=4096, memory_mb=4096,
                          writable_tmp=self.writable_tmp),
            # Numbered per run: in the sandbox's PID namespace every replay is pid 2, so %p
            # alone would let each run overwrite the last one's profile.
            env={**self.env, "LLVM_PROFILE_FILE": str(self.prof_dir / f"cov-{self.runs}-%p.profraw")},
            append=True,
            writable=[self.prof_dir],
        )
        self.inputs_run += count
        self.runs += 1
        return result.exit_code == 0 and not result.timed_out


def _llvm(cmd: list[str]) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise ToolchainError(
            f"{Path(cmd[0]).name} failed: {proc.stderr.strip()[-1000:]}",
            "llvm-profdata and llvm-cov must be the same LLVM version as clang",
        )
    return proc.stdout


def parse_export(data: dict[str, Any], coverage_files: Iterable[str]) -> CoverageReport:
    """Build a report from ``llvm-cov export`` JSON, keeping only ``coverage_files``; pure."""
    wanted = set(coverage_files)
    report = CoverageReport()
    export = data["data"][0]
    names = [Path(f["filename"]).name for f in export["files"] if f["filename"] in wanted]
    for entry in export["files"]:
        if entry["filename"] not in wanted:
            continue
        name = Path(entry["filename"]).name
        key = name if names.count(name) == 1 else entry["filename"]
        metrics = {m: CoverageCount(entry["summary"][m]["covered"], entry["summary"][m]["count"])
                   for m in _METRICS}  # fmt: skip
        report.per_file[key] = metrics
        for metric, value in metrics.items():
            total = getattr(report, metric)
            total.covered += value.covered
            total.count += value.count
    for func in export.get("functions", []):
        if not func["filenames"] or func["filenames"][0] not in wanted:
            continue
        name = func["name"].rsplit(":", 1)[-1]
        report.function_hits[name] = report.function_hits.get(name, 0) + int(func["count"])
        code = [r for r in func["regions"] if r[5] == 0 and r[7] == _CODE_REGION]
        if code:
            percent = round(100.0 * sum(1 for r in code if r[4] > 0) / len(code), 1)
            report.function_region_percent[name] = max(percent, report.function_region_percent.get(name, 0.0))
    return report
