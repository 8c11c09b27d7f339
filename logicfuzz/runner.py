"""The benchmark runner: one run directory for one or several benchmarks, every target resumable.

Targets run on an executor (:mod:`logicfuzz.executors`): worker processes on this machine
(``jobs``, default: the number of cores) or Ray tasks (``--executor ray``). Each target's
checkpoints let a rerun with the same ``--out`` skip the targets that have a ``result.json``
and resume an interrupted one (:mod:`logicfuzz.target_run`).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agent_graph.benchmark import Benchmark, load_benchmark
from agent_graph.context import Context
from fuzzkit.coverage_union import union_coverage
from fuzzkit.errors import ToolchainError
from fuzzkit.exports import missing_functions
from fuzzkit.inputs import InputError, check_function_name
from fuzzkit.paths import writable_dir
from logicfuzz.executor_open import open_executor
from logicfuzz.executors import TargetExecutor, TargetJob
from logicfuzz.findings import candidates, write_findings
from logicfuzz.results import summarize
from logicfuzz.target_run import prepared_input, run_target, target_dir
from nodes.prepare import library_for

__all__ = ["RunOptions", "new_run_dir", "planned_targets", "prepared_input", "run_benchmark", "run_target",
           "target_dir", "union_of"]

Progress = Callable[[str, str, dict[str, Any]], None]


@dataclass
class RunOptions:
    """What ``logicfuzz run`` was asked to do."""

    benchmark: Path | list[Path]
    functions: list[str] = field(default_factory=list)
    out: Path | None = None
    context: Context = field(default_factory=Context)
    jobs: int = 0
    executor: str = "local"
    ray_address: str = ""

    @property
    def benchmarks(self) -> list[Path]:
        """The benchmark files, one or several."""
        return list(self.benchmark) if isinstance(self.benchmark, list) else [self.benchmark]


def new_run_dir(root: Path = Path("results")) -> Path:
    """``results/<timestamp>`` (suffixed when two runs start in the same second)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path, n = root / stamp, 1
    while path.exists():
        n += 1
        path = root / f"{stamp}-{n}"
    return path


def run_benchmark(options: RunOptions, progress: Progress | None = None) -> dict[str, Any]:
    """Run every requested function of the benchmark(s); returns the summary written to disk.

    With several benchmarks, each gets its ``<project>/summary.json`` and the run's
    ``summary.json`` totals them (``benchmarks`` lists each one's summary).
    """
    if options.jobs < 0:
        raise InputError(f"--jobs {options.jobs} is below 1; give at least 1 (or leave it out: one per core)")
    plan = planned_targets(options)
    where = "--out" if options.out else "the run directory"
    # Workers and tools run in other directories (other machines too): the run directory is absolute.
    out = writable_dir((options.out or new_run_dir()).resolve(), where, "give --out a writable directory")
    ctx_data = asdict(options.context)
    if ctx_data.get("memory_config"):  # a worker may run in another directory, or on another machine
        ctx_data["memory_config"] = str(Path(ctx_data["memory_config"]).resolve())
    several = len(plan) > 1
    # Fetch and build each library once, before the workers share it.
    missing = {bench.project: _not_defined(bench, names) for bench, names in plan}
    (out / "run.json").write_text(json.dumps({
        "benchmark": str(plan[0][0].path), "benchmarks": [str(b.path) for b, _ in plan],
        "benchmark_files": [str(Path(b.path).resolve()) for b, _ in plan],
        "functions": [n for _, names in plan for n in names], "executor": options.executor,
        "context": ctx_data}, indent=1))
    records: dict[str, dict[str, Any]] = {}
    jobs: list[TargetJob] = []
    for bench, names in plan:
        for name in names:
            key = f"{bench.project}/{name}"
            if name in missing[bench.project]:
                records[key] = _not_run(out, bench.project, name, missing[bench.project][name])
            else:
                jobs.append(TargetJob(key, str(Path(bench.path).resolve()), name, str(out), ctx_data))
    shown = (lambda key: key) if several else (lambda key: key.split("/", 1)[1])
    for key, record in records.items():
        if progress:
            progress(shown(key), "failed", record)
    n_jobs = min(options.jobs or 0, len(jobs)) if options.executor == "ray" else min(
        options.jobs or os.cpu_count() or 1, max(1, len(jobs)))
    if jobs:
        records.update(_dispatch(open_executor(options.executor, n_jobs, options.ray_address), jobs,
                                 progress and (lambda key, step, rec: progress(shown(key), step, rec))))
    found = findings_of(plan, records, out)
    summaries = [_summarize(bench, [records[f"{bench.project}/{n}"] for n in names], out, several,
                            found) for bench, names in plan]
    if not several:
        return summaries[0]
    summary = {"run_dir": str(out), "project": ", ".join(b.project for b, _ in plan),
               **summarize([r for s in summaries for r in s["results"]]), "benchmarks": summaries,
               "findings": found}
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary


def planned_targets(options: RunOptions) -> list[tuple[Benchmark, list[str]]]:
    """Each benchmark with the functions to run from it (all, or those ``--functions`` names).

    Raises:
        InputError: a name no benchmark defines, or two benchmarks of the same project.
    """
    benches = [load_benchmark(path) for path in options.benchmarks]
    seen: dict[str, str] = {}
    for bench in benches:
        if bench.project in seen:
            raise InputError(f"{bench.path} and {seen[bench.project]} are both project "
                             f"{bench.project!r}; their targets would share a directory: give one")
        seen[bench.project] = bench.path
    for name in options.functions:
        check_function_name(name, "--functions")
        if len(benches) == 1:
            benches[0].function(name)  # unknown names fail before any work starts
        elif not any(name in {f.name for f in b.functions} for b in benches):
            raise InputError(f"--functions {name}: none of the benchmarks defines it")
    if len(benches) == 1:
        return [(benches[0], options.functions or [f.name for f in benches[0].functions])]
    plan = [(b, [f.name for f in b.functions if not options.functions or f.name in options.functions])
            for b in benches]
    return [(b, names) for b, names in plan if names]


def _dispatch(executor: TargetExecutor, jobs: list[TargetJob],
              progress: Callable[[str, str, dict[str, Any]], None] | None) -> dict[str, dict[str, Any]]:
    """Run the jobs on ``executor``; each target's record by key, progress shown as it streams in."""
    records: dict[str, dict[str, Any]] = {}
    try:
        for job in jobs:
            executor.submit(job)
        while len(records) < len(jobs):
            for key, step, record in executor.updates(timeout=0.5):
                if record is None:
                    if progress and key not in records:  # a step can arrive after its record
                        progress(key, step, {})
                    continue
                records[key] = record
                if progress:
                    progress(key, "skipped (done before)" if record.get("skipped") else (
                        "failed" if record.get("error") else "done"), record)
    finally:
        executor.close()
    return records


def _summarize(bench: Benchmark, ordered: list[dict[str, Any]], out: Path, several: bool,
               found: list[dict[str, Any]]) -> dict[str, Any]:
    """One benchmark's summary, written to ``summary.json`` (``<project>/summary.json`` if several)."""
    summary = {"run_dir": str(out), "project": bench.project, **summarize(ordered)}
    summary["union_coverage"] = union_of(bench, ordered, out)
    summary["findings"] = [f for f in found if f.get("project") in (bench.project, None)]
    path = target_dir(out, bench.project, "summary.json") if several else out / "summary.json"
    path.write_text(json.dumps(summary, indent=1))
    return summary


def findings_of(plan: list[tuple[Benchmark, list[str]]], records: dict[str, dict[str, Any]],
                out: Path) -> list[dict[str, Any]]:
    """Write ``out/findings/`` (:mod:`logicfuzz.findings`); the summary's short entry of each.

    A toolchain failure while replaying or minimizing is one entry with an ``error`` (the run's
    results stand; a rerun with the same ``--out`` writes the findings again).
    """
    recs = list(records.values())
    wanted = {c.project for c in candidates(recs)}  # only these libraries need their source named
    sources = {b.project: _source_line(b) for b, _ in plan if b.project in wanted}
    try:
        entries = write_findings(out, recs, sources)
    except ToolchainError as exc:
        return [{"error": f"findings not written: {exc}"}]
    keys = ("id", "project", "kind", "top_frame", "targets", "reproducer_bytes", "unclear", "folder")
    return [{k: e.get(k) for k in keys} for e in entries]


def _source_line(bench: Benchmark) -> str:
    """Where the library came from, for a bug report: ``apt acme version 1.2-1, tree acme-1.2``."""
    spec = bench.source
    kind = next(k for k in ("apt", "git", "tarball", "path") if getattr(spec, k))
    text = f"{kind} {getattr(spec, kind)}" + (f" version {spec.version}" if spec.version else "")
    try:
        return f"{text}, tree {Path(library_for(bench).root).name}"
    except ToolchainError:
        return text


def _not_defined(bench: Benchmark, functions: list[str]) -> dict[str, str]:
    """Build the library; the requested targets it does not define, each with its one-line reason.

    Raises:
        InputError: The only requested target is not defined (nothing would run).
    """
    missing = missing_functions(library_for(bench), functions, bench.project)
    if len(functions) == 1 and missing:
        raise InputError(missing[functions[0]])
    return missing


def _not_run(out: Path, project: str, function: str, why: str) -> dict[str, Any]:
    """The error record of a target refused before it ran (kept as its ``error.json``)."""
    record = {"project": project, "function": function, "error": why}
    tdir = target_dir(out, project, function)
    tdir.mkdir(parents=True, exist_ok=True)
    (tdir / "error.json").write_text(json.dumps(record, indent=1))
    return record


def union_of(bench: Benchmark, records: list[dict[str, Any]], out: Path) -> dict[str, Any] | None:
    """Line/branch/function coverage of the library by all running harnesses together."""
    harnesses = []
    for r in records:
        art = r.get("artifacts") or {}
        if r.get("runs") and art.get("cov_binary") and Path(art["cov_binary"]).is_file():
            inputs = [Path(p) for p in [art.get("corpus_dir"), *art.get("crash_files", [])] if p]
            harnesses.append((Path(art["cov_binary"]), inputs))
    if not harnesses:
        return None
    try:
        report = union_coverage(harnesses, library_for(bench), out / "union_coverage")
    except ToolchainError as exc:
        return {"error": str(exc)}
    data = report.to_dict()
    return {"harnesses": len(harnesses), **{k: data[k] for k in ("lines", "branches", "functions")}}
