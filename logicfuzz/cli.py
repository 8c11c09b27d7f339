"""``logicfuzz`` command line.

Exit codes: 0 the run finished (see the table for each target's outcome); 1 some target failed
with an error; 2 bad input (benchmark, options) or a toolchain problem; 3 model configuration.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from agent_graph.benchmark import BenchmarkError
from agent_graph.context import MEMORY_MODES, Context
from agents.llm import ModelConfigError, get_chat_model
from fuzzkit.errors import ToolchainError
from fuzzkit.inputs import InputError, check_function_name
from fuzzkit.paths import cache_dir
from logicfuzz.cli_export import add_export_command
from logicfuzz.cli_findings import add_findings_command
from logicfuzz.cli_init import add_init_benchmark_command
from logicfuzz.cli_memory import add_memory_commands
from logicfuzz.cli_progress import RunProgress
from logicfuzz.cli_report import add_report_command
from logicfuzz.executor_open import EXECUTORS
from logicfuzz.executor_ray import preflight
from logicfuzz.results import crash_cell
from logicfuzz.runner import RunOptions, planned_targets, run_benchmark
from long_term_memory.shared_store import connect
from nodes.experience import config_of, preflight_bank

console = Console(stderr=True, soft_wrap=True)


def _pct(entry: dict[str, Any] | None) -> str:
    return f"{entry['percent']:.1f}%" if entry else "-"


def summary_table(summary: dict[str, Any]) -> Table:
    """One row per target."""
    table = Table(title=f"LogicFuzz: {summary['project']} ({summary['run_dir']})")
    for col in ("function", "archetype", "builds", "runs", "crash", "lines", "branches",
                "iters", "fixes", "calls", "stop reason"):
        table.add_column(col)
    for r in summary["results"]:
        if r.get("error"):
            table.add_row(r["function"], "", "", "", "", "", "", "", "", "", f"error: {escape(r['error'])}")
            continue
        cov = r.get("coverage") or {}
        table.add_row(
            r["function"], r.get("archetype") or "", "yes" if r["compiles"] else "no",
            "yes" if r["runs"] else "no", escape(crash_cell(r)), _pct(cov.get("lines")),
            _pct(cov.get("branches")), str(r["iterations"]), str(r["fix_rounds"]),
            str(r["model_calls"]) + (f" ({sum(r['fallbacks'].values())} fallback)"
                                     if r.get("fallbacks") else ""),
            r.get("termination_reason", "")[:40],
        )
    table.caption = escape(_caption(summary))
    return table


def _caption(summary: dict[str, Any]) -> str:
    """Library bugs, repaired misuse crashes and where the findings are."""
    found = summary.get("findings") or []
    bugs = [f for f in found if f.get("id") and not f.get("unclear")]
    text = (f"crashing (library bugs): {summary.get('crashing', 0)}; harness-misuse crashes repaired: "
            f"{summary.get('crashes_repaired', 0)}; findings: {len(bugs)}")
    if len(bugs) < len(found):
        text += f" (+{len(found) - len(bugs)} unclear or not written)"
    return text + (f": logicfuzz findings {summary['run_dir']}" if found else "")


def _run_inputs(args: argparse.Namespace) -> list[str]:
    """The requested function names, once every option is known to be usable (else InputError)."""
    if args.jobs is not None and args.jobs < 1:
        raise InputError(f"--jobs {args.jobs} is below 1; give at least 1 (or leave it out: one per core)")
    if args.fuzz_seconds < 1:
        raise InputError(f"--fuzz-seconds {args.fuzz_seconds} is below 1; give the seconds per fuzzing run")
    if args.fuzz_seed < 0:
        raise InputError(f"--fuzz-seed {args.fuzz_seed} is negative; give a seed (0: random)")
    if args.fuzz_runs < 0:
        raise InputError(f"--fuzz-runs {args.fuzz_runs} is negative; give a count of inputs (0: no limit)")
    if args.max_iterations < 0:
        raise InputError(f"--max-iterations {args.max_iterations} is negative; give 0 or more")
    if args.out is not None and not args.out.strip():
        raise InputError("--out is empty; give a directory for the run (or leave it out)")
    if args.ray_address and args.executor != "ray":
        raise InputError("--ray-address needs --executor ray; add it (or drop --ray-address)")
    if args.executor == "ray":  # Ray missing or its cluster unreachable stops here, before any work

        preflight(args.ray_address or os.environ.get("RAY_ADDRESS", ""))
    names = [f.strip() for part in args.functions or [] for f in part.split(",")]
    for name in names:
        check_function_name(name, "--functions")
    cache_dir()  # a cache path that is a file or unwritable stops here, before any work
    return names


def _run(args: argparse.Namespace) -> int:
    functions = _run_inputs(args)
    ctx = Context(model=args.model, fuzz_seconds=args.fuzz_seconds, fuzz_seed=args.fuzz_seed,
                  fuzz_runs=args.fuzz_runs, memory_mode=args.memory_mode,
                  max_iterations=args.max_iterations, debug=args.debug, base_url=args.base_url,
                  api_key_env=args.api_key_env, memory_config=args.memory_config,
                  fallback="" if args.no_fallback else args.fallback, store=args.store,
                  rate_limit_rpm=args.rate_limit_rpm, rate_limit_tpm=args.rate_limit_tpm,
                  seeds=not args.no_seeds, dictionary=not args.no_dict,
                  usage=not args.no_usage)
    if ctx.store:  # a bad or unreachable database stops here, in one line, before any work
        connect(ctx.store).close()
    get_chat_model(ctx)  # a missing key or unknown provider stops here, before any work

    config_of(ctx)  # so does a bad experience-memory config file
    preflight_bank(ctx)  # and a damaged experience bank that needs `logicfuzz memory repair`
    benchmarks = [Path(b) for b in args.benchmark]
    options = RunOptions(benchmarks if len(benchmarks) > 1 else benchmarks[0], functions,
                         Path(args.out) if args.out else None, ctx, jobs=args.jobs or 0,
                         executor=args.executor, ray_address=args.ray_address)
    plan = planned_targets(options)  # unknown names or clashing projects stop here
    names = [f"{b.project}/{n}" if len(plan) > 1 else n for b, names in plan for n in names]
    with RunProgress(console, names, ctx.max_iterations, args.quiet) as progress:
        summary = run_benchmark(options, progress)
    if args.json:
        print(json.dumps(summary, indent=1))
    elif not args.quiet:
        out = Console()
        if not out.is_terminal:
            out = Console(width=200)  # a log file or pipe: never squeeze the table
        for each in summary.get("benchmarks") or [summary]:
            out.print(summary_table(each))
    return 1 if summary["failed"] else 0


def parser() -> argparse.ArgumentParser:
    """The argument parser."""
    p = argparse.ArgumentParser(prog="logicfuzz", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the pipeline on a benchmark YAML")
    run.add_argument("benchmark", nargs="+", help="benchmark YAML(s), e.g. under benchmarks/")
    run.add_argument("--functions", action="append", help="only these functions (comma list)")
    run.add_argument("--model", default="offline", help="offline | openai:<model>")
    run.add_argument("--fuzz-seconds", type=int, default=60, help="libFuzzer budget per run")
    run.add_argument("--fuzz-seed", type=int, default=0,
                     help="libFuzzer -seed of every fuzzing run (default 0: a random one per run)")
    run.add_argument("--fuzz-runs", type=int, default=0,
                     help="libFuzzer -runs: stop each fuzzing run after this many inputs (default 0: "
                          "only --fuzz-seconds ends it)")
    run.add_argument("--max-iterations", type=int, default=5, help="optimization iterations")
    run.add_argument("--no-seeds", action="store_true",
                     help="do not run the library's own sample files through each harness")
    run.add_argument("--no-usage", action="store_true",
                     help="do not read how the library's own tests, examples and tools use its API")
    run.add_argument("--no-dict", action="store_true",
                     help="fuzz without the dictionary of the library's own string literals")
    run.add_argument("--memory-mode", default="", choices=MEMORY_MODES,
                     help="experience memory mode (default: the memory config file's, "
                          "else retrieve-extract)")
    run.add_argument("--out", help="run directory (default: a new one under results/)")
    run.add_argument("--jobs", type=int, default=None, help="targets in parallel (default: cores)")
    run.add_argument("--debug", action="store_true", help="log full prompts and replies")
    run.add_argument("--quiet", action="store_true", help="no progress, no table")
    run.add_argument("--json", action="store_true", help="print the summary as JSON")
    run.add_argument("--base-url", default="", help="OpenAI-compatible endpoint (default: OPENAI_BASE_URL)")
    run.add_argument("--api-key-env", default="OPENAI_API_KEY", help="env var holding the API key")
    run.add_argument("--fallback", default="offline", metavar="MODEL",
                     help="model that does a step the run's model failed (default: offline)")
    run.add_argument("--no-fallback", action="store_true",
                     help="no fallback: measure the model alone (failures become outcomes)")
    run.set_defaults(func=_run)
    run.add_argument("--memory-config", default="", help="experience-memory config file (YAML/TOML)")
    run.add_argument("--store", default="", metavar="URL",
                     help="postgresql://USER@HOST:PORT/DB: checkpoints, experience bank and rate "
                          "limit shared by all workers (default: local files)")
    run.add_argument("--rate-limit-rpm", type=int, default=0, metavar="N",
                     help="model requests per minute per endpoint, across all workers (0: none)")
    run.add_argument("--rate-limit-tpm", type=int, default=0, metavar="N",
                     help="model tokens per minute per endpoint, across all workers (0: none)")
    run.add_argument("--executor", default="local", choices=EXECUTORS,
                     help="where targets run: local worker processes, or Ray tasks (pip install '.[ray]')")
    run.add_argument("--ray-address", default="", metavar="HOST:PORT",
                     help="Ray cluster for --executor ray (default: RAY_ADDRESS, else a local Ray)")
    add_report_command(sub)
    add_findings_command(sub)
    add_memory_commands(sub)
    add_init_benchmark_command(sub)
    add_export_command(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``logicfuzz`` console script."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    args = parser().parse_args(argv)
    try:
        return int(args.func(args))
    except (BenchmarkError, ToolchainError, ValueError) as exc:
        hint = getattr(exc, "hint", "")
        message = getattr(exc, "message", None) or str(exc)  # a ToolchainError's str repeats its hint
        # Messages quote user input (names, paths): never read as console markup.
        shown = f"[red]error:[/] {escape(message)}"
        console.print(shown + (f"\n[yellow]hint:[/] {escape(hint)}" if hint else ""))
        return 2
    except ModelConfigError as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}")
        return 3


if __name__ == "__main__":
    sys.exit(main())
