"""History compression: prompt tokens per model call and outcomes, three arms side by side.

Runs the same benchmark functions three times in one invocation: the full history (no
compression, ``code_memory=False``), old turns dropped past the threshold (keeping the last
``--keep-last`` messages, ``history_summary=False``), and old turns replaced by the
code-memory summary (seed 004, the default). Prints, per arm, prompt tokens per model call
(median, p95, total, from each target's ``events.jsonl`` ``model.call`` records) and the
outcome (targets compiling and running, line coverage), so the summary's own value shows.

    .venv/bin/python bench/context_bench.py benchmarks/cjson.yaml \
        --functions cJSON_Parse,cJSON_Print --fuzz-seconds 20 --max-iterations 5 \
        --markdown docs/results/context-bench.md
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from agent_graph.context import Context
from logicfuzz.runner import RunOptions, run_benchmark

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout first: benchkit and the product
from benchkit.results_markdown import add_markdown_option, markdown_copy  # noqa: E402


def calls_of(run_dir: Path) -> list[int]:
    tokens = []
    for events in sorted(run_dir.rglob("events.jsonl")):
        for line in events.read_text().splitlines():
            event = json.loads(line)
            if event["type"] == "model.call":
                tokens.append(int(event["data"]["prompt_tokens"]))
    return tokens


def p95(values: list[int]) -> float:
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]) if ordered else 0.0


ARMS: dict[str, dict[str, Any]] = {"full history": {"code_memory": False},
        "old turns dropped": {"code_memory": True, "history_summary": False},
        "code-memory summary": {"code_memory": True, "history_summary": True}}


def measure(bench: Path, functions: list[str], out: Path, args: argparse.Namespace,
            arm: dict[str, Any]) -> dict[str, Any]:
    ctx = Context(model=args.model, fuzz_seconds=args.fuzz_seconds, max_iterations=args.max_iterations,
                  history_compress_tokens=args.threshold, history_keep_last=args.keep_last,
                  plateau_iterations=args.max_iterations, memory_mode="baseline", **arm)
    summary = run_benchmark(RunOptions(bench, functions, out, ctx, jobs=args.jobs))
    tokens = calls_of(out)
    lines = [r["coverage"]["lines"]["percent"] for r in summary["results"] if r.get("runs")]
    return {"calls": len(tokens), "median": statistics.median(tokens) if tokens else 0,
            "p95": p95(tokens), "total": sum(tokens), "compiling": summary["compiling"],
            "running": summary["running"], "targets": summary["targets"],
            "mean_lines": statistics.mean(lines) if lines else 0.0}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The bench's arguments (``--markdown`` is checked here, before any arm runs)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("benchmark", type=Path)
    parser.add_argument("--functions", default="")
    parser.add_argument("--model", default="offline")
    parser.add_argument("--fuzz-seconds", type=int, default=20)
    parser.add_argument("--max-iterations", type=int, default=5)
    parser.add_argument("--threshold", type=int, default=4000, help="history_compress_tokens")
    parser.add_argument("--keep-last", type=int, default=4)
    parser.add_argument("--jobs", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None)
    add_markdown_option(parser)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Run the three arms, print one Markdown table."""
    args = parse_args(argv)
    functions = [f for f in args.functions.split(",") if f]
    root = args.out or Path(tempfile.mkdtemp(prefix="context-bench-"))
    rows = {name: measure(args.benchmark, functions, root / f"arm{n}", args, arm)
            for n, (name, arm) in enumerate(ARMS.items())}
    report(args, functions, rows, root)


def title(benchmark: Path) -> str:
    """The Markdown file's title: the arms and the library (the YAML's ``project``)."""
    project = ""
    with contextlib.suppress(OSError, yaml.YAMLError, AttributeError):
        project = str(yaml.safe_load(benchmark.read_text()).get("project") or "")
    return f"History compression: three arms on {project or benchmark.stem}"


def report(args: argparse.Namespace, functions: list[str], rows: dict[str, dict[str, Any]],
           root: Path) -> None:
    """Print the table; with ``--markdown``, write it there too under :func:`title`."""
    with markdown_copy(args.markdown, title(args.benchmark)):
        print_table(args, functions, rows, root)


def print_table(args: argparse.Namespace, functions: list[str], rows: dict[str, dict[str, Any]],
                root: Path) -> None:
    """One row per arm."""
    base = rows["full history"]["total"] or 1
    print(f"context bench: {args.benchmark} {functions or 'all'} model={args.model} "
          f"fuzz={args.fuzz_seconds}s iterations={args.max_iterations} (runs in {root})\n")
    print("| arm | calls | prompt tokens/call median | p95 | total | total vs full | "
          "compiling | running | mean line cov |")
    print("|---|---|---|---|---|---|---|---|---|")
    for mode, r in rows.items():
        print(f"| {mode} | {r['calls']} | {r['median']:.0f} | {r['p95']:.0f} | {r['total']} | "
              f"{r['total'] / base:.2f}x | {r['compiling']}/{r['targets']} | {r['running']}/{r['targets']} "
              f"| {r['mean_lines']:.1f}% |")


if __name__ == "__main__":
    main()
