"""Generality: LogicFuzz on libraries nobody tuned it for, against each library's own fuzz harnesses.

Per library (a Debian source package name, ``NAME=VERSION`` for one upload, or a path to a
benchmark YAML; ``LIB:fn1,fn2`` names the functions instead of init-benchmark's own choice;
``@FILE`` reads libraries from a list file, one a line, and ``--devset`` is
``@bench/devset.txt``, the development set):

1. ``logicfuzz init-benchmark --apt LIB --ignore-fuzz-harnesses [--functions ...]`` writes
   ``OUT/LIB/benchmark.yaml`` (a YAML path is used as it is); the flag keeps the choice of
   functions from reading the library's own fuzz harnesses, the yardstick of step 3;
2. ``logicfuzz run`` on it into ``OUT/LIB/run`` (``--fuzz-seconds``, ``--max-iterations``,
   ``--jobs`` and every ``--run-arg`` are passed through) from an empty experience bank of its
   own (``OUT/LIB/bank``; ``--shared-bank`` uses the machine's), or ``--logicfuzz-run [LIB=]DIR``
   reuses a run made before (its ``run.json`` names the benchmark it ran);
3. the comparison at equal total fuzzing CPU (``harness_compare``): LogicFuzz's final harnesses
   (the best ``harness.c`` of each target that reached a running harness) and the library's own
   harness set (``upstream_harnesses``: the files of the Debian source defining
   ``LLVMFuzzerTestOneInput``, built as the library's Makefile.am or CMakeLists.txt fuzz
   target builds them, with the helper sources and companion in-tree libraries it links, C++
   ones with clang++, all linking the same library build; ``bench/yardstick.py`` checks that
   set alone) each get ``--budget`` CPU-seconds
   (default ``--seconds`` x the larger harness count of the two sides), split evenly over the
   side's harnesses, each fuzzed from an empty corpus. ``--dict own`` (the default) fuzzes each
   side with the dictionary it comes with: LogicFuzz's harnesses with the one ``logicfuzz run``
   uses (the string literals of the library's sources), each upstream harness with the
   dictionary the library ships beside it, if any; ``--dict same`` gives both sides LogicFuzz's
   (the harnesses alone compared), ``--dict none`` none.

Printed per library, as a Markdown table: functions running/total, fix rounds (sum over
targets), harness-misuse crash rounds (``crash.verdict`` events of ``harness_misuse``, from each
target's ``events.jsonl``), union line and branch coverage of the library's own sources for
both sides and their ratio (LogicFuzz/upstream), and oss-fuzz-gen's line-coverage diff:
library lines LogicFuzz covers that the upstream set does not, as a share of the lines
LogicFuzz covers (|L_lf - L_up| / |L_lf|; the JSON also has it as a share of all library lines).
A total row counts the libraries with a ratio >= 1.0. A library whose upstream set is empty or
does not build, or that fails at any step, gets a note saying so, and the next one goes on.
Everything goes to ``OUT/generality.json``; ``--merge A.json B.json`` joins the rows of
several sittings into one table. Exit codes: 0 every library measured, 1 some library failed
(the others are still in the table), 2 bad arguments (one line says what to change).

    python bench/generality.py lz4 jansson:json_loads,json_dumps --fuzz-seconds 30 --out results/gen
    python bench/generality.py benchmarks/cjson.yaml --logicfuzz-run results/cjson-run
    python bench/generality.py @bench/devset.txt --fuzz-seconds 10 --max-iterations 1 --seconds 15
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout first: benchkit and the product
from benchkit.generality_args import Library, UsageError, parse_args  # noqa: E402
from benchkit.generality_table import markdown, summarize  # noqa: E402
from benchkit.harness_compare import (  # noqa: E402
    build_side,
    covered_lines,
    fuzz_side,
    line_diff,
    load_bench,
    logicfuzz_harnesses,
    side_budget,
    side_dictionaries,
    split_budget,
    upstream_sources,
)
from benchkit.results_markdown import commit, markdown_copy  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
# The LogicFuzz side never learns from the yardstick it is measured against.
IGNORE_FUZZ_HARNESSES = "--ignore-fuzz-harnesses"


class StageError(Exception):
    """A library failed at one step; the message is what the tool said."""

    def __init__(self, stage: str, message: str) -> None:
        super().__init__(message)
        self.stage = stage


def _cli(args: list[str], log: Path, stdout: Path | None = None,
         env: dict[str, str] | None = None) -> tuple[int, str]:  # fmt: skip
    """Run ``logicfuzz ARGS`` from this checkout; (exit code, last line it printed to stderr)."""
    cmd = [sys.executable, "-m", "logicfuzz.cli", *args]
    print(f"  $ logicfuzz {' '.join(args)}", file=sys.stderr)
    with log.open("w") as err, (stdout.open("w") if stdout else open(os.devnull, "w")) as out:
        rc = subprocess.run(cmd, cwd=REPO, stdout=out, stderr=err, check=False,
                            env={**os.environ, **(env or {})}).returncode
    said = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    errors = [ln for ln in said if ln.lower().startswith("error")]
    return rc, (errors or said or [f"exit code {rc}"])[-1].strip()


def benchmark_of(lib: Library, work: Path) -> Path:
    """The library's benchmark YAML: the given one, the reused run's, or a new one from init-benchmark."""
    if lib.yaml:
        return lib.yaml
    if lib.run_dir and (lib.run_dir / "run.json").is_file():
        named = Path(json.loads((lib.run_dir / "run.json").read_text()).get("benchmark", ""))
        for candidate in (named, REPO / named):
            if named.name and candidate.is_file():
                return candidate
    out = work / "benchmark.yaml"
    if out.is_file() and IGNORE_FUZZ_HARNESSES in out.read_text(errors="replace").partition("\n")[0]:
        return out  # an earlier sitting into the same --out wrote it (one that read the harnesses is redone)
    funcs = ["--functions", ",".join(lib.functions)] if lib.functions else []
    rc, said = _cli(["init-benchmark", "--apt", lib.name, IGNORE_FUZZ_HARNESSES, *funcs],
                    work / "init-benchmark.log", out)
    if rc != 0:
        out.unlink(missing_ok=True)
        raise StageError("init-benchmark", said)
    return out


# What each arm adds to `logicfuzz run`: the default engine, or the engine without the usage index.
ARM_FLAGS = {"usage": [], "no-usage": ["--no-usage"]}


def logicfuzz_run(lib: Library, yaml_path: Path, work: Path, args: argparse.Namespace,
                  arm: str = "usage") -> Path:
    """The run directory: the reused one, or a new ``logicfuzz run`` (resumed if unfinished)."""
    if lib.run_dir and arm == "usage":
        return lib.run_dir
    out = work / "run"
    cmd = ["run", str(yaml_path), "--out", str(out), "--fuzz-seconds", str(args.fuzz_seconds),
           "--max-iterations", str(args.max_iterations), "--quiet", *ARM_FLAGS[arm],
           *args.run_arg]  # fmt: skip
    if args.jobs:
        cmd += ["--jobs", str(args.jobs)]
    if lib.functions and lib.yaml:
        cmd += ["--functions", ",".join(lib.functions)]
    rc, said = _cli(cmd, work / "run.log", env=_own_bank(work, args))
    if rc not in (0, 1):  # 1: some target failed, the others still count
        raise StageError("logicfuzz run", said)
    return out


def _own_bank(work: Path, args: argparse.Namespace) -> dict[str, str]:
    """The environment giving ``logicfuzz run`` an empty experience bank of its own, ``work/bank``.

    The figures then do not depend on what earlier runs on this machine learned. Nothing
    changes with ``--shared-bank`` or when the caller set ``LOGICFUZZ_EXPERIENCE_CONFIG``.
    """
    if args.shared_bank or os.environ.get("LOGICFUZZ_EXPERIENCE_CONFIG"):
        return {}
    config = work / "memory.yaml"
    config.write_text(f"bank:\n  directory: {json.dumps(str((work / 'bank').resolve()))}\n")
    return {"LOGICFUZZ_EXPERIENCE_CONFIG": str(config)}


def run_stats(run_dir: Path, project: str, bench: dict[str, Any]) -> dict[str, Any]:
    """Functions running/total, fix rounds and harness-misuse crash rounds of a run."""
    run_json = run_dir / "run.json"
    functions = json.loads(run_json.read_text()).get("functions") if run_json.is_file() else None
    names = functions or [f["name"] for f in bench.get("functions") or []]
    running = fixes = misuse = 0
    for name in names:
        tdir = run_dir / project / name
        record = json.loads((tdir / "result.json").read_text()) if (tdir / "result.json").is_file() else {}
        running += bool(record.get("runs"))
        fixes += int(record.get("fix_rounds") or 0)
        misuse += misuse_rounds(tdir, record)
    return {"functions_total": len(names), "functions_running": running, "fix_rounds": fixes,
            "misuse_crash_rounds": misuse}


def misuse_rounds(tdir: Path, record: dict[str, Any]) -> int:
    """Crashes the crash analyzers blamed on the harness: every verdict in the audit log."""
    events = tdir / "events.jsonl"
    if not events.is_file():  # result.json keeps only the last crash
        return int(((record.get("crash") or {}).get("verdict")) == "harness_misuse")
    count = 0
    for line in events.read_text(errors="replace").splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        verdict = (event.get("data") or {}).get("verdict")
        count += event.get("type") == "crash.verdict" and verdict == "harness_misuse"
    return count


def compare(bench: dict[str, Any], run_dir: Path, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Both sides built, fuzzed at equal total CPU and measured; the row's coverage part."""
    from fuzzkit.detect import prepare_library
    from fuzzkit.source import SourceSpec, fetch_source
    from fuzzkit.toolchain import Fuzzkit

    project = bench["project"]
    root = fetch_source(SourceSpec.model_validate(bench["source"]))
    lib = prepare_library(bench["source"], bench.get("build"))
    listed = upstream_sources(bench, root)
    mine = logicfuzz_harnesses(run_dir, project)
    built = {"logicfuzz": build_side("logicfuzz", mine, lib, work / "lf-build"),
             "upstream": build_side("upstream", listed, lib, work / "up-build")}
    budget = side_budget([len(s.builds) for s in built.values() if s.builds], args.seconds, args.budget)
    library_dict = Fuzzkit().fuzz_dictionary(lib)
    dicts = {side: side_dictionaries(b, side, args.dict, library_dict) for side, b in built.items()}
    samples: dict[str, dict[str, list[float]]] = {s: {"lines": [], "branches": []} for s in built}
    sides: dict[str, dict[str, Any]] = {s: {"harnesses": len(b.builds), "built": b.names,
                                           "failures": b.failures} for s, b in built.items()}
    diffs: list[dict[str, Any]] = []
    for r in range(args.repeats):
        line_sets = {}
        for side, b in built.items():  # alternate sides so machine load hits both alike
            if not b.builds:
                continue
            each = split_budget(budget, len(b.builds))
            print(f"{project}: {side} {r + 1}/{args.repeats}: {len(b.builds)} harnesses x {each} s",
                  file=sys.stderr)
            run = fuzz_side(b.builds, lib, each, 1, args.parallel, work / f"{side}{r}", dicts[side],
                            writable_tmp=side == "upstream")
            sides[side]["budget"] = run.budget()
            samples[side]["lines"].append(run.report.lines.percent)
            samples[side]["branches"].append(run.report.branches.percent)
            line_sets[side] = covered_lines(run, lib)
            sides[side]["library_lines"] = run.report.lines.count
        if len(line_sets) == 2:
            diffs.append(line_diff(line_sets["logicfuzz"], line_sets["upstream"],
                                   sides["logicfuzz"]["library_lines"]))
    for side, got in samples.items():
        for metric, values in got.items():
            sides[side][metric] = statistics.median(values) if values else None
            sides[side][f"{metric}_samples"] = values
    up = sides["upstream"]
    up["listed"] = [p.relative_to(root).as_posix() for p in listed]
    up["status"] = ("none shipped" if not listed else "does not build" if not up["harnesses"]
                    else "partly builds" if up["failures"] else "ok")
    row: dict[str, Any] = {"logicfuzz": sides["logicfuzz"], "upstream": up, "budget_per_side": budget}
    for metric in ("lines", "branches"):
        mine_value, their_value = sides["logicfuzz"].get(metric), up.get(metric)
        row[f"ratio_{metric}"] = (round(mine_value / their_value, 3)
                                  if mine_value is not None and their_value else None)
    if diffs:
        row["line_diff"] = {k: statistics.median(d[k] for d in diffs) for k in diffs[0]}
    return row


def measure(lib: Library, args: argparse.Namespace, arm: str = "usage") -> dict[str, Any]:
    """One library's row for one arm; a failing step gives a row with ``error`` and ``stage``.

    Every arm runs the same benchmark YAML (the same functions): the usage arm's, in
    ``OUT/LIB``; another arm works in ``OUT/LIB/ARM``.
    """
    base = args.out / lib.key
    work = base if arm == "usage" else base / arm
    work.mkdir(parents=True, exist_ok=True)
    row: dict[str, Any] = {"library": lib.key if arm == "usage" else f"{lib.key} ({arm})", "arm": arm,
                           "functions_requested": lib.functions, "commit": commit()}
    stage = "benchmark"
    try:
        base.mkdir(parents=True, exist_ok=True)
        yaml_path = benchmark_of(lib, base)
        bench = load_bench(yaml_path)
        stage = "logicfuzz run"
        run_dir = logicfuzz_run(lib, yaml_path, work, args, arm)
        row.update(benchmark=str(yaml_path), project=bench["project"], run_dir=str(run_dir))
        row.update(run_stats(run_dir, bench["project"], bench))
        stage = "comparison"
        row.update(compare(bench, run_dir, work, args))
    except StageError as exc:
        row.update(error=str(exc), stage=exc.stage)
    except Exception as exc:  # noqa: BLE001 - one library's failure must not stop the others
        row.update(error=f"{type(exc).__name__}: {exc}".strip().splitlines()[0], stage=stage)
    if row.get("error"):
        print(f"{lib.key}: failed in {row['stage']}: {row['error']}", file=sys.stderr)
    return row


def write_json(path: Path, rows: list[dict[str, Any]], args: argparse.Namespace) -> None:
    settings = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()
                if k not in ("libraries", "merge")}
    data = {"settings": settings, "rows": rows, "summary": summarize(rows),
            "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1))


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(argv)
    except UsageError as exc:
        print(f"generality.py: error: {exc}", file=sys.stderr)
        return 2
    rows: dict[str, dict[str, Any]] = {}
    for merged in args.merge:  # later sittings win for a library measured twice
        rows.update({r["library"]: r for r in json.loads(merged.read_text())["rows"]})
    for lib in args.libraries:
        for arm in args.arms:  # side by side: the same functions, the same budget per side
            row = measure(lib, args, arm)
            rows[row["library"]] = row
            write_json(args.json, list(rows.values()), args)  # kept even if a later library hangs
    if not args.libraries:
        write_json(args.json, list(rows.values()), args)
    with markdown_copy(args.markdown, "LogicFuzz vs the libraries' own fuzz harnesses at equal CPU"):
        print(markdown(list(rows.values())))
    print(f"\nJSON: {args.json}", file=sys.stderr)
    return 1 if any(r.get("error") for r in rows.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
