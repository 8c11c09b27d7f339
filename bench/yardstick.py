"""The yardstick alone: does each library's own fuzz harness set build and run?

Per library (the forms of ``bench/generality.py``: a Debian source package, ``NAME=VERSION``,
a benchmark YAML, ``@FILE`` or ``--devset``): the benchmark YAML (``init-benchmark`` as in
``generality.py``, kept in ``OUT/LIB/benchmark.yaml``), then the library's own harnesses
(``upstream_harnesses``) built as the comparison builds them (``harness_compare.build_side``:
as the library's build files build them, linking LogicFuzz's library build), then each built
harness run ``-runs=N`` from an empty corpus. Prints a Markdown table (harnesses listed,
built, running; why the others did not build) and writes ``OUT/yardstick.json``. Exit code 0
when every listed harness of every library builds and runs, 1 otherwise, 2 on bad arguments.

    python bench/yardstick.py --devset --out results/yardstick
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script or loaded by path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout first: benchkit and the product
from generality import StageError, benchmark_of  # noqa: E402

from benchkit.generality_args import REPO, UsageError, expand_lists, library_of  # noqa: E402
from benchkit.harness_compare import build_side, load_bench, upstream_sources  # noqa: E402


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Libraries (``@FILE`` and ``--devset`` expanded), ``--runs`` and ``--out``."""
    p = argparse.ArgumentParser(prog="yardstick.py", description=__doc__.splitlines()[0])
    p.add_argument("libraries", nargs="*", metavar="LIB", help="as for bench/generality.py")
    p.add_argument("--devset", action="store_true", help="the libraries of bench/devset.txt")
    p.add_argument("--runs", type=int, default=100,
                   help="libFuzzer -runs of each built harness (default 100)")
    p.add_argument("--out", type=Path, help="work directory (default results/yardstick-<time>)")
    args = p.parse_args(expand_lists(sys.argv[1:] if argv is None else list(argv)))
    if not args.libraries:
        raise UsageError("no library given: name Debian source packages or benchmark YAMLs, "
                         "@FILE or --devset")
    if args.runs < 1:
        raise UsageError("--runs must be at least 1")
    args.libraries = [library_of(s) for s in args.libraries]
    args.out = (args.out or REPO / "results" / time.strftime("yardstick-%Y%m%d-%H%M%S")).resolve()
    return args


def measure(lib: Any, args: argparse.Namespace) -> dict[str, Any]:
    """One library's row: listed, built and running harnesses, and what failed."""
    from fuzzkit.detect import prepare_library
    from fuzzkit.source import SourceSpec, fetch_source

    work = args.out / lib.key
    work.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    try:
        bench = load_bench(benchmark_of(lib, work))
        root = fetch_source(SourceSpec.model_validate(bench["source"]))
        built = prepare_library(bench["source"], bench.get("build"))
        listed = upstream_sources(bench, root)
        side = build_side("upstream", listed, built, work / "up-build")
    except StageError as exc:
        return {"library": lib.key, "error": f"{exc.stage}: {exc}"}
    except Exception as exc:  # noqa: BLE001 - one library's failure must not stop the others
        return {"library": lib.key, "error": f"{type(exc).__name__}: {exc}".splitlines()[0]}
    running, crashed = [], {}
    for name, build in zip(side.names, side.builds, strict=True):
        proc = subprocess.run([str(build.fuzz_binary), f"-runs={args.runs}"], cwd=work, capture_output=True,
                              text=True, check=False, timeout=600)  # fmt: skip
        if proc.returncode == 0 and f"Done {args.runs} runs" in proc.stderr:
            running.append(name)
        else:
            crashed[name] = (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
    return {"library": lib.key, "listed": [p.relative_to(root).as_posix() for p in listed],
            "built": side.names, "running": running, "failures": side.failures, "not_running": crashed,
            "seconds": round(time.monotonic() - start, 1)}


def markdown(rows: list[dict[str, Any]]) -> str:
    """The table: one row per library."""
    lines = ["| library | listed | built | running | did not build or run |", "|---|---|---|---|---|"]
    for r in rows:
        if r.get("error"):
            lines.append(f"| {r['library']} | - | - | - | failed: {r['error']} |")
            continue
        why = "; ".join(f"{k}: {v[:120]}" for k, v in {**r["failures"], **r["not_running"]}.items())
        lines.append(f"| {r['library']} | {len(r['listed'])} | {len(r['built'])} | {len(r['running'])} "
                     f"| {why or '-'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(argv)
    except UsageError as exc:
        print(f"yardstick.py: error: {exc}", file=sys.stderr)
        return 2
    rows = []
    for lib in args.libraries:
        rows.append(measure(lib, args))
        (args.out / "yardstick.json").write_text(json.dumps({"runs": args.runs, "rows": rows}, indent=1))
    print(markdown(rows))
    print(f"\nJSON: {args.out / 'yardstick.json'}", file=sys.stderr)
    whole = all(not r.get("error") and not r["failures"] and not r["not_running"] for r in rows)
    return 0 if whole else 1


if __name__ == "__main__":
    sys.exit(main())
