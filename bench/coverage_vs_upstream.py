"""Coverage of LogicFuzz's harnesses against the fuzz harnesses a library ships (or a naive one).

For each benchmark YAML (default: cjson, libyaml, zlib):

1. build the library as ``logicfuzz run`` does (same cache entry, same two flavours);
2. baseline: build the harnesses listed in ``upstream_harnesses`` (from the library's own
   source) with LogicFuzz's harness flags; a library that ships none gets the naive harness
   ``bench/naive/<project>.c`` (the input passed to the main entry point once);
3. LogicFuzz: take the final ``harness.c`` of every target of the given run directory that
   reached a running harness and build them the same way;
4. give both sides the same total fuzzing CPU (default): ``--seconds`` x the larger harness
   count of the two sides (or ``--budget``) CPU-seconds per side, split evenly over that
   side's harnesses, so 2 LogicFuzz harnesses get half the seconds each of one upstream
   harness; ``--per-harness`` gives every harness ``--seconds`` instead (the old measure,
   which favours the side with more harnesses). Each harness is fuzzed from an empty corpus
   with no dictionary (dictionaries and options files shipped beside upstream fuzzers are
   ignored, as LogicFuzz's harnesses get none), ``--repeats`` times, and the union line/branch
   coverage of the library's own files is measured (``fuzzkit.coverage_union``);
   ``--from-summary`` reads instead the ``union_coverage`` each run's ``summary.json``
   recorded (one sample per run; the baseline then gets ``--seconds`` per harness);
   ``--run-logicfuzz`` makes a run first (``logicfuzz run --fuzz-seconds SECONDS``);
5. print one table: median [min-max] over repeats, the ratio of the medians and the seconds
   each harness got, and add the baseline's medians to each run's ``baseline.json``, which
   ``logicfuzz report`` shows beside LogicFuzz's coverage.

Harnesses of one side are fuzzed ``--parallel`` at a time (default: the number of cores); the
budget counts seconds per harness, so this changes the wall time only.

Example (the numbers in a report come from this command):

    python bench/coverage_vs_upstream.py benchmarks/cjson.yaml --seconds 60 --repeats 3 \\
        --logicfuzz-runs results/cjson-run --markdown docs/results/coverage-vs-upstream.md
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from fuzzkit.detect import prepare_library
from fuzzkit.errors import ToolchainError
from fuzzkit.source import SourceSpec, fetch_source
from fuzzkit.toolchain import Fuzzkit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout first: benchkit and the product
from benchkit.harness_compare import (  # noqa: E402
    DICT_MODES,
    BuiltSide,
    build_side,
    fuzz_side,
    load_bench,
    logicfuzz_harnesses,
    side_budget,
    side_dictionaries,
    split_budget,
    upstream_sources,
)
from benchkit.results_markdown import add_markdown_option, markdown_copy  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DEFAULT_BENCHMARKS = [REPO / "benchmarks" / f"{name}.yaml" for name in ("cjson", "libyaml", "zlib")]
NAIVE_DIR = Path(__file__).resolve().parent / "naive"


def baseline_harnesses(bench: dict[str, Any], root: Path) -> tuple[str, list[Path]]:
    """("upstream", the shipped harnesses) or ("naive", [bench/naive/<project>.c])."""
    shipped = upstream_sources(bench, root)
    if shipped:
        return "upstream", shipped
    naive = NAIVE_DIR / f"{bench['project']}.c"
    if not naive.is_file():
        raise ToolchainError(
            f"{bench['project']} ships no fuzz harness and there is no {naive}",
            "write a naive harness there: pass the input to the library's main entry point once",
        )
    return "naive", [naive]


def summary_union(run_dir: Path) -> dict[str, float]:
    """Line/branch percent a run recorded in its summary.json."""
    summary_path = run_dir / "summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.is_file() else {}
    union = summary.get("union_coverage")
    if not union:
        raise ToolchainError(f"{summary_path}: no union_coverage recorded", "drop --from-summary")
    return {k: float(union[k]["percent"]) for k in ("lines", "branches")}


def run_logicfuzz(bench_path: Path, seconds: int, out: Path) -> Path:
    cmd = [sys.executable, "-m", "logicfuzz.cli", "run", str(bench_path), "--fuzz-seconds", str(seconds),
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


def seconds_each(counts: dict[str, int], args: argparse.Namespace) -> dict[str, int]:
    """Fuzzing seconds per harness of each side: an even split of an equal budget by default."""
    if args.per_harness:
        return {side: args.seconds for side in counts}
    budget = side_budget([n for n in counts.values() if n], args.seconds, args.budget)
    return {side: split_budget(budget, n) for side, n in counts.items()}


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
    built = {"base": must_build(kind, sources, lib, scratch / project / "base-build")}
    if not args.from_summary:
        harnesses = [h for d in lf_runs for h in logicfuzz_harnesses(d, project)]
        if not harnesses:
            where = ", ".join(map(str, lf_runs))
            raise ToolchainError(f"{where}: no running harness of {project} to measure",
                                 "pass the directory given to `logicfuzz run --out`")
        row["logicfuzz_harnesses"] = len(harnesses)
        built["logicfuzz"] = must_build("logicfuzz", harnesses, lib, scratch / project / "lf-build")
    each = seconds_each({side: len(b.builds) for side, b in built.items()}, args)
    library_dict = Fuzzkit().fuzz_dictionary(lib)
    dicts = {side: side_dictionaries(b, side, args.dict, library_dict) for side, b in built.items()}
    if args.from_summary:
        each["base"] = args.seconds  # the other side is not fuzzed here: no budget to match
    row["budget"] = {"mode": "per-harness" if args.per_harness or args.from_summary else "equal-cpu"}
    for r in range(args.repeats):
        # Alternate the sides so that load from the rest of the machine hits both alike.
        for side, b in built.items():
            print(f"{project}: {side} repeat {r + 1}/{args.repeats} ({len(b.builds)} harnesses, "
                  f"{each[side]} s each)", file=sys.stderr)
            work = scratch / project / f"{side}{r}"
            run = fuzz_side(b.builds, lib, each[side], args.jobs, args.parallel, work, dicts[side],
                            writable_tmp=side == "base")
            row["budget"][side] = run.budget()
            sides[side]["lines"].append(run.report.lines.percent)
            sides[side]["branches"].append(run.report.branches.percent)
    if args.from_summary:
        for d in lf_runs:
            got = summary_union(d)
            for k in ("lines", "branches"):
                sides["logicfuzz"][k].append(got[k])
    if args.write_baseline:
        for d in lf_runs:
            write_baseline(d, project, kind, sources, sides["base"], each["base"], args)
    return {**row, **sides, "logicfuzz_runs": [str(d) for d in lf_runs]}


def must_build(kind: str, sources: list[Path], lib: Any, work: Path) -> BuiltSide:
    """Every harness of a side built, or a ToolchainError naming the first that does not."""
    side = build_side(kind, sources, lib, work)
    if side.failures:
        name, errors = next(iter(side.failures.items()))
        raise ToolchainError(f"{kind} harness {name} does not build:\n{errors}")
    return side


def write_baseline(run_dir: Path, project: str, kind: str, sources: list[Path],
                   base: dict[str, list[float]], seconds: int, args: argparse.Namespace) -> None:
    """Put the baseline's medians in ``run_dir/baseline.json`` for ``logicfuzz report``."""
    if not base["lines"]:
        return
    path = run_dir / "baseline.json"
    data = json.loads(path.read_text()) if path.is_file() else {}
    label = (f"{kind} harness ({', '.join(s.name for s in sources)}), {seconds} s each, "
             f"median of {args.repeats}")
    data.setdefault("libraries", {})[project] = {
        "lines": statistics.median(base["lines"]), "branches": statistics.median(base["branches"]),
        "label": label}
    data.setdefault("label", label)
    path.write_text(json.dumps(data, indent=1))


def title(rows: list[dict[str, Any]], args: argparse.Namespace) -> str:
    """The Markdown file's title: which library got which baseline, and how the CPU was shared."""
    libraries: dict[str, list[str]] = {"upstream": [], "naive": []}
    for row in rows:
        libraries.get(row.get("baseline", ""), []).append(row["library"])
    sides = [f"{kind} ({', '.join(names)})" for kind, names in
             (("the upstream", libraries["upstream"]), ("a naive", libraries["naive"])) if names]
    against = " or ".join(sides) or "the upstream or a naive"
    how = "per harness" if args.per_harness else "equal CPU per side"
    return f"LogicFuzz's harnesses against {against} harness, {how}"


def print_table(rows: list[dict[str, Any]], args: argparse.Namespace) -> None:
    """One Markdown row per library: median [min-max] over repeats, ratios, seconds per harness."""
    head = ["library", "baseline", "s/harness base / LF", "base lines %", "base branches %",
            "LogicFuzz lines %", "LogicFuzz branches %", "ratio lines", "ratio branches"]  # fmt: skip
    table = []
    for row in rows:
        if "error" in row:
            error = " ".join(row["error"].split())[:60].replace("|", "\\|")
            table.append([row["library"], "error: " + error, *["-"] * 7])
            continue
        b, m, budget = row["base"], row["logicfuzz"], row.get("budget", {})
        secs = " / ".join(str((budget.get(s) or {}).get("per_harness_seconds", "-"))
                          for s in ("base", "logicfuzz"))
        table.append([
            row["library"], row["baseline"], secs, spread(b["lines"]), spread(b["branches"]),
            spread(m["lines"]), spread(m["branches"]), ratio(m["lines"], b["lines"]),
            ratio(m["branches"], b["branches"]),
        ])  # fmt: skip
    how = (f"{args.seconds} s per harness" if args.per_harness else
           f"equal total CPU per side ({args.budget or str(args.seconds) + ' s x the larger harness count'})")
    print(f"coverage of the library's own code, {how}, {args.jobs} job(s); median [min-max]\n")
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for r in table:
        print("| " + " | ".join(r) + " |")


def report(rows: list[dict[str, Any]], args: argparse.Namespace) -> None:
    """Print the table; with ``--markdown``, write it there too under :func:`title`."""
    with markdown_copy(args.markdown, title(rows, args)):
        print_table(rows, args)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The bench's arguments (``--markdown`` is checked here, before any build or fuzzing)."""
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("benchmarks", nargs="*", type=Path, default=DEFAULT_BENCHMARKS)
    p.add_argument("--seconds", type=int, default=60,
                   help="CPU-seconds per harness of the larger side (default 60); with --per-harness, "
                        "every harness's seconds")
    p.add_argument("--budget", type=int, help="total fuzzing CPU-seconds per side (overrides --seconds)")
    p.add_argument("--per-harness", action="store_true",
                   help="give every harness --seconds (the side with more harnesses gets more CPU)")
    p.add_argument("--dict", choices=DICT_MODES, default="own",
                   help="dictionaries: own (each side its own: LogicFuzz's from the library's "
                        "literals, upstream's shipped beside each harness), same (LogicFuzz's for "
                        "both sides), none")
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
    add_markdown_option(p)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Measure each benchmark's two sides, print one Markdown table; 1 when a library failed."""
    args = parse_args(argv)
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
    report(rows, args)
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
