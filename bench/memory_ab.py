"""Experience memory A/B: the same sequence of targets in baseline and retrieve+extract mode.

Each mode starts from an empty experience bank (a fresh cache directory) and runs the
functions one after another (jobs=1), so later targets can retrieve what earlier ones left.
Prints per mode: targets reaching a running harness, fix rounds, model calls, prompt tokens,
mean line coverage, and how many experience items were shown and cited.

    .venv/bin/python bench/memory_ab.py benchmarks/cjson.yaml benchmarks/zlib.yaml --fuzz-seconds 20
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path
from typing import Any

from agent_graph.benchmark import load_benchmark
from agent_graph.context import Context
from agent_graph.runner import RunOptions, run_benchmark


def run_mode(benchmarks: list[Path], mode: str, root: Path, args: argparse.Namespace) -> dict[str, Any]:
    os.environ["LOGICFUZZ_CACHE_DIR"] = str(root / "cache")  # an empty bank for this mode
    records: list[dict[str, Any]] = []
    for bench in benchmarks:
        names = [f.name for f in load_benchmark(bench).functions][: args.per_benchmark]
        ctx = Context(model=args.model, fuzz_seconds=args.fuzz_seconds,
                      max_iterations=args.max_iterations, memory_mode=mode)
        summary = run_benchmark(RunOptions(bench, names, root / "runs" / bench.stem, ctx, jobs=1))
        records += summary["results"]
    ok = [r for r in records if not r.get("error")]
    used = [m for r in ok for m in (r.get("memory_used") or {}).get("experience", [])]
    return {
        "targets": len(records),
        "running": sum(bool(r.get("runs")) for r in ok),
        "fix_rounds": sum(r.get("fix_rounds", 0) for r in ok),
        "model_calls": sum(r.get("model_calls", 0) for r in ok),
        "prompt_tokens": sum(r.get("prompt_tokens", 0) for r in ok),
        "mean_lines": statistics.mean(
            [r["coverage"]["lines"]["percent"] for r in ok if r.get("runs")] or [0]),
        "shown": len(used),
        "cited": sum(bool(m.get("used")) for m in used),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benchmarks", type=Path, nargs="+")
    parser.add_argument("--model", default="offline")
    parser.add_argument("--fuzz-seconds", type=int, default=20)
    parser.add_argument("--max-iterations", type=int, default=3)
    parser.add_argument("--per-benchmark", type=int, default=4, help="first N functions of each")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    root = args.out or Path(tempfile.mkdtemp(prefix="memory-ab-"))
    rows = {mode: run_mode(args.benchmarks, mode, root / mode, args)
            for mode in ("baseline", "retrieve-extract")}
    print(f"# memory A/B: {[b.name for b in args.benchmarks]} model={args.model} "
          f"fuzz={args.fuzz_seconds}s iterations={args.max_iterations} (runs in {root})")
    print("| mode | running | fix rounds | model calls | prompt tokens | mean line cov | "
          "items shown | cited |")
    print("|---|---|---|---|---|---|---|---|")
    for mode, r in rows.items():
        print(f"| {mode} | {r['running']}/{r['targets']} | {r['fix_rounds']} | {r['model_calls']} | "
              f"{r['prompt_tokens']} | {r['mean_lines']:.1f}% | {r['shown']} | {r['cited']} |")


if __name__ == "__main__":
    main()
