"""Coverage of LogicFuzz's harnesses against the fuzz harnesses a library ships (or a naive one).

For each benchmark YAML (default: cjson, libyaml, zlib):

1. build the library as ``logicfuzz run`` does (same cache entry, same two flavours);
2. baseline: build the harnesses listed in ``upstream_harnesses`` (from the library's own
   source) with LogicFuzz's harness flags; a library that ships none gets the naive harness
   ``bench/naive/<project>.c`` (the input passed to the main entry point once);
3. fuzz every baseline harness for ``--seconds`` with ``--jobs`` (empty corpus, no
   dictionary, like LogicFuzz), and measure the union line/branch coverage of the
   library's own files (``fuzzkit.coverage_union``), ``--repeats`` times;
4. LogicFuzz: take the final ``harness.c`` of every target of the given run directory that
   reached a running harness, build them the same way and fuzz each one for ``--seconds``
   from an empty corpus, ``--repeats`` times, exactly like the baseline (default), so both
   sides get the same fuzzing time per harness and the same noise; ``--from-summary`` reads
   instead the ``union_coverage`` each run's ``summary.json`` recorded (one sample per run,
   the best iteration of each target); ``--run-logicfuzz`` makes a run first
   (``logicfuzz run --fuzz-seconds SECONDS``);
5. print one table: median [min-max] over repeats, and the ratio of the medians, and add the
   baseline's medians to each run's ``baseline.json``, which ``logicfuzz report`` shows beside
   LogicFuzz's coverage.

Harnesses of one side are fuzzed ``--parallel`` at a time (default: the number of cores).

Example (the numbers in a report come from this command):

    python bench/coverage_vs_upstream.py benchmarks/cjson.yaml --seconds 60 --repeats 3 \\
        --logicfuzz-runs results/cjson-run
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml

from fuzzkit.coverage import CoverageReport
from fuzzkit.coverage_union import union_coverage
from fuzzkit.detect import prepare_library
from fuzzkit.detect_tree import harness_helpers
from fuzzkit.errors import ToolchainError
from fuzzkit.harness import HarnessBuild, build_harness
from fuzzkit.library import LibraryBuild
from fuzzkit.runner import run_fuzzer
from fuzzkit.source import SourceSpec, fetch_source

REPO = Path(__file__).resolve().parents[1]
DEFAULT_BENCHMARKS = [REPO / "benchmarks" / f"{name}.yaml" for name in ("cjson", "libyaml", "zlib")]
NAIVE_DIR = Path(__file__).resolve().parent / "naive"


def load_bench(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text())
    if not isinstance(data, dict) or "source" not in data:
        raise ToolchainError(f"{path}: not a benchmark YAML with a `source` section")
    return data


def baseline_harnesses(bench: dict[str, Any], root: Path) -> tuple[str, list[Path]]:
    """("upstream", the shipped harnesses) or ("naive", [bench/naive/<project>.c])."""
    shipped = [root / p for p in bench.get("upstream_harnesses") or []]
    if shipped:
        missing = [str(p) for p in shipped if not p.is_file()]
        if missing:
            raise ToolchainError(f"upstream harnesses not in the source: {missing}")
        return "upstream", shipped
    naive = NAIVE_DIR / f"{bench['project']}.c"
    if not naive.is_file():
        raise ToolchainError(
            f"{bench['project']} ships no fuzz harness and there is no {naive}",
            "write a naive harness there: pass the input to the library's main entry point once",
        )
    return "naive", [naive]


def build_all(kind: str, sources: list[Path], lib: LibraryBuild, work: Path) -> list[HarnessBuild]:
    """Build every harness with LogicFuzz's flags (fuzz and coverage flavours)."""
    builds = []
    for i, source in enumerate(sources):
        helpers = harness_helpers(source) if kind == "upstream" else []
        build = build_harness(source, lib, work / f"build{i}", extra_sources=helpers)
        if not build.ok or not build.fuzz_binary or not build.cov_binary:
            errors = "\n".join(d.render() for d in build.errors[:5])
            raise ToolchainError(f"{kind} harness {source} does not build:\n{errors}")
        builds.append(build)
    return builds


def fuzz_union(
    builds: list[HarnessBuild], lib: LibraryBuild, seconds: int, jobs: int, parallel: int, work: Path
) -> CoverageReport:
    """Fuzz each harness for ``seconds`` from an empty corpus and measure what they cover together."""
    extra = [f"-fork={jobs}"] if jobs > 1 else []

    def one(i: int) -> tuple[Path, list[Path]]:
        build = builds[i]
        run = run_fuzzer(Path(str(build.fuzz_binary)), work / f"fuzz{i}", seconds=seconds, extra_args=extra)
        print(f"    {Path(str(build.fuzz_binary)).name}#{i}: {run.stats.execs} execs, cov {run.stats.cov}, "
              f"{'crash ' + run.crash.kind if run.crash else 'no crash'}", file=sys.stderr)  # fmt: skip
        return Path(str(build.cov_binary)), run.replay_inputs()

    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        pairs = list(pool.map(one, range(len(builds))))
    return union_coverage(pairs, lib, work / "union")


def logicfuzz_harnesses(run_dir: Path, project: str) -> list[Path]:
    """The final harness of every target of a run that reached a running harness."""
    found = []
    for target in sorted((run_dir / project).glob("*/result.json")):
        record = json.loads(target.read_text())
        harness = target.parent / "harness.c"
        if record.get("runs") and harness.is_file():
            found.append(harness)
    if not found:
        raise ToolchainError(f"{run_dir}: no running harness of {project} to measure",
                             "pass the directory given to `logicfuzz run --out`")
    return found


def summary_union(run_dir: Path) -> dict[str, float]:
    """Line/branch percent a run recorded in its summary.json."""
    summary_path = run_dir / "summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.is_file() else {}
    union = summary.get("union_coverage")
    if not union:
        raise ToolchainError(f"{summary_path}: no union_coverage recorded", "drop --from-summary")
    return {k: float(union[k]["percent"]) for k in ("lines", "branches")}


def run_logicfuzz(bench_path: Path, seconds: int, out: Path) -> Path:
    cmd = [sys.executable, "-m", "agent_graph.cli", "run", str(bench_path), "--fuzz-seconds", str(seconds),
           "--out", str(out), "--quiet"]  # fmt: skip
    print(f"  $ {' '.join(cmd)}", file=sys.stderr)
    subprocess.run(cmd, check=False, cwd=REPO)
    return out


def spread(values: list[float]) -> str:
    if not values:
        return "-"
    return f"{statistics.median(values):.1f} [{min(values):.1f}-{max(values):.1f}]"


def ratio(a: list[float], b: list[float]) -> str:
    if not a or not b or statistics.median(b) == 0:
        return "-"
    return f"{statistics.median(a) / statistics.median(b):.2f}x"


def measure(path: Path, args: argparse.Namespace, runs: list[Path], scratch: Path) -> dict[str, Any]:
    bench = load_bench(path)
    project = bench["project"]
    root = fetch_source(SourceSpec.model_validate(bench["source"]))
    lib = prepare_library(bench["source"], bench.get("build"))
    kind, sources = baseline_harnesses(bench, root)
    row: dict[str, Any] = {"library": project, "baseline": kind, "harnesses": [s.name for s in sources]}
    lf_runs = [d for d in runs if (d / project).is_dir()]
    if args.run_logicfuzz and not lf_runs:
        out = Path(args.out or scratch) / "logicfuzz"
        lf_runs = [run_logicfuzz(path, args.seconds, out / f"{project}-r0")]
    if not lf_runs:
        raise ToolchainError(f"no LogicFuzz run of {project} given",
                             "pass --logicfuzz-runs RUN_DIR (a `logicfuzz run --out` directory) "
                             "or --run-logicfuzz")
    sides: dict[str, dict[str, list[float]]] = {
        "base": {"lines": [], "branches": []}, "logicfuzz": {"lines": [], "branches": []}}
    base_builds = build_all(kind, sources, lib, scratch / project / "base-build")
    lf_builds: list[HarnessBuild] = []
    if not args.from_summary:
        harnesses = [h for d in lf_runs for h in logicfuzz_harnesses(d, project)]
        row["logicfuzz_harnesses"] = len(harnesses)
        lf_builds = build_all("logicfuzz", harnesses, lib, scratch / project / "lf-build")
    for r in range(args.repeats):
        # Alternate the sides so that load from the rest of the machine hits both alike.
        for side, builds in (("base", base_builds), ("logicfuzz", lf_builds)):
            if not builds:
                continue
            print(f"{project}: {side} repeat {r + 1}/{args.repeats} ({len(builds)} harnesses)",
                  file=sys.stderr)
            report = fuzz_union(builds, lib, args.seconds, args.jobs, args.parallel,
                                scratch / project / f"{side}{r}")
            sides[side]["lines"].append(report.lines.percent)
            sides[side]["branches"].append(report.branches.percent)
    if args.from_summary:
        for d in lf_runs:
            got = summary_union(d)
            for k in ("lines", "branches"):
                sides["logicfuzz"][k].append(got[k])
    if args.write_baseline:
        for d in lf_runs:
            write_baseline(d, project, kind, sources, sides["base"], args)
    return {**row, **sides, "logicfuzz_runs": [str(d) for d in lf_runs]}


def write_baseline(run_dir: Path, project: str, kind: str, sources: list[Path],
                   base: dict[str, list[float]], args: argparse.Namespace) -> None:
    """Put the baseline's medians in ``run_dir/baseline.json`` for ``logicfuzz report``."""
    if not base["lines"]:
        return
    path = run_dir / "baseline.json"
    data = json.loads(path.read_text()) if path.is_file() else {}
    label = (f"{kind} harness ({', '.join(s.name for s in sources)}), {args.seconds} s, "
             f"median of {args.repeats}")
    data.setdefault("libraries", {})[project] = {
        "lines": statistics.median(base["lines"]), "branches": statistics.median(base["branches"]),
        "label": label}
    data.setdefault("label", label)
    path.write_text(json.dumps(data, indent=1))


def print_table(rows: list[dict[str, Any]], seconds: int, jobs: int) -> None:
    head = ["library", "baseline", "base lines %", "base branches %", "LogicFuzz lines %",
            "LogicFuzz branches %", "ratio lines", "ratio branches"]  # fmt: skip
    table = [head]
    for row in rows:
        if "error" in row:
            table.append([row["library"], "error: " + row["error"][:60], *["-"] * 6])
            continue
        b, m = row["base"], row["logicfuzz"]
        table.append([
            row["library"], row["baseline"], spread(b["lines"]), spread(b["branches"]), spread(m["lines"]),
            spread(m["branches"]), ratio(m["lines"], b["lines"]), ratio(m["branches"], b["branches"]),
        ])  # fmt: skip
    widths = [max(len(r[i]) for r in table) for i in range(len(head))]
    print(f"coverage of the library's own code, {seconds} s per harness, {jobs} job(s); median [min-max]")
    for i, r in enumerate(table):
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
        if i == 0:
            print("  ".join("-" * w for w in widths))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("benchmarks", nargs="*", type=Path, default=DEFAULT_BENCHMARKS)
    p.add_argument("--seconds", type=int, default=60, help="fuzzing time per harness (default 60)")
    p.add_argument("--jobs", type=int, default=1, help="libFuzzer jobs per harness (default 1)")
    p.add_argument("--repeats", type=int, default=3, help="fuzzing repeats per side (default 3)")
    p.add_argument("--parallel", type=int, default=os.cpu_count() or 1,
                   help="harnesses of one side fuzzed at once (default: cores)")
    p.add_argument("--logicfuzz-runs", nargs="*", type=Path, default=[], help="LogicFuzz run directories")
    p.add_argument("--from-summary", action="store_true",
                   help="use each run's recorded union coverage instead of fuzzing its harnesses again")
    p.add_argument("--run-logicfuzz", action="store_true", help="make a LogicFuzz run first")
    p.add_argument("--no-write-baseline", dest="write_baseline", action="store_false",
                   help="do not add the baseline to each run's baseline.json (read by `logicfuzz report`)")
    p.add_argument("--out", type=Path, help="keep work files and write results.json here")
    args = p.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="coverage-vs-upstream-") as tmp:
        scratch = args.out or Path(tmp)
        for path in args.benchmarks:
            try:
                rows.append(measure(path, args, args.logicfuzz_runs, scratch))
            except ToolchainError as exc:
                rows.append({"library": path.stem, "error": str(exc)})
                print(f"{path}: {exc}", file=sys.stderr)
        if args.out:
            (args.out / "results.json").write_text(json.dumps(rows, indent=1))
    print_table(rows, args.seconds, args.jobs)
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
