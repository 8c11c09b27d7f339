"""Experience memory A/B: the same sequence of targets with and without the experience memory.

Each arm starts from an empty experience bank it checks (its own directory under ``--out``; a
reused ``--out`` is refused unless ``--restart`` empties the arm first) and runs the functions one
after another, so later targets can retrieve what earlier ones left. Retrieve-only runs each
target over the bank retrieve-extract had before that same target (never a lesson of a later
target) and checks that it never writes; the learning-curve arm runs the sequence twice, its
second pass reading only what its first pass learned (see :mod:`benchkit.memory_ab_arms`).
Prints per arm: targets reaching a
running harness, fix rounds, harness-caused crash rounds (crashes judged harness misuse),
repeated failures (a failure signature — compile-error class, kind and frame of a crash judged
misuse (a library bug found is no failure), input not
reaching the target — already seen on an earlier target of the same library; in brackets, those
an earlier target got past, by a repair or by dropping the improvement that caused it, so a
lesson could have prevented them), model calls,
prompt tokens, mean and union line coverage, how many experience items were shown and used
(an item with an action: its change is in the measured harness; one without: a reply cited it),
how many of the used ones carry an action ("applied"), and every applied item learned on
another library than the one it was used on (cross-library transfer).

    .venv/bin/python bench/memory_ab.py benchmarks/cjson.yaml benchmarks/zlib.yaml --fuzz-seconds 20
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the checkout comes first
from benchkit.memory_ab import measure, print_per_library, transfers  # noqa: E402
from benchkit.memory_ab_arms import MODES, ArmError, plan_of, rows_of, run_arm  # noqa: E402
from benchkit.results_markdown import add_markdown_option, markdown_copy  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (``argv``, else the process's)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benchmarks", type=Path, nargs="+")
    parser.add_argument("--model", default="offline")
    parser.add_argument("--fuzz-seconds", type=int, default=20)
    parser.add_argument("--fuzz-seed", type=int, default=1,
                        help="libFuzzer -seed of every run in every arm (0: random), so the arms differ "
                             "by their harnesses, not by the fuzzer's luck")
    parser.add_argument("--fuzz-runs", type=int, default=0,
                        help="libFuzzer -runs of every run (0: only --fuzz-seconds ends one); with the seed, "
                             "a harness meets the same inputs in both arms however loaded the machine is")
    parser.add_argument("--max-iterations", type=int, default=3)
    parser.add_argument("--per-benchmark", type=int, default=4, help="first N functions of each")
    parser.add_argument("--functions", nargs="*", default=None, help="these functions, in this order")
    parser.add_argument("--modes", nargs="*", choices=MODES, default=list(MODES),
                        help="run these arms (the others are re-measured from --out if present)")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--restart", action="store_true",
                        help="empty the directory (runs and bank) of each arm run that --out already holds")
    add_markdown_option(parser)
    return parser.parse_args(argv)


def print_table(rows: dict[str, dict[str, Any]]) -> None:
    """One line per arm (and per pass of the learning curve)."""
    print("| mode | running | fix rounds | harness crash rounds | fix + crash | repeated failures "
          "(of them, got past before) | model calls | prompt tokens | mean line cov | union line cov | "
          "items shown | used | applied | bank files unchanged |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for mode, r in rows.items():
        bank = r["bank"]
        same = "-" if bank is None else f"{'yes' if bank['identical'] else 'NO'} ({bank['files']} files)"
        print(f"| {mode} | {r['running']}/{r['targets']} | {r['fix_rounds']} | {r['crash_rounds']} | "
              f"{r['fix_rounds'] + r['crash_rounds']} | {r['repeated']} ({r['repeated_known']}) | "
              f"{r['model_calls']} | {r['prompt_tokens']} | {r['mean_lines']:.1f}% | "
              f"{r['union_lines']:.1f}% | {r['shown']} | {r['used']} | {r['applied']} | {same} |")


def main(argv: list[str] | None = None) -> None:
    """Run the requested arms in order, then print every arm ``--out`` holds."""
    args = parse_args(argv)
    root = args.out or Path(tempfile.mkdtemp(prefix="memory-ab-"))
    plan = plan_of(args.benchmarks, args.functions, args.per_benchmark) if args.modes else []
    try:
        for mode in [m for m in MODES if m in args.modes]:  # retrieve-only reads what retrieve-extract left
            run_arm(mode, plan, root, args)
    except ArmError as exc:
        sys.exit(f"memory_ab: {exc}")
    rows = {name: measure(args.benchmarks, name, where, learned)
            for name, (where, learned) in rows_of(root).items()
            if all((where / "runs" / b.stem / "summary.json").is_file() for b in args.benchmarks)}
    settings = (f"model={args.model} fuzz={args.fuzz_seconds}s runs={args.fuzz_runs} seed={args.fuzz_seed} "
                f"iterations={args.max_iterations}"
                if args.modes else "re-measured from the run directories")
    with markdown_copy(args.markdown, "Experience memory A/B"):
        print(f"# memory A/B: {[b.name for b in args.benchmarks]} {settings} (runs in {root})")
        print_table(rows)
        if len(args.benchmarks) > 1 and rows:
            print_per_library(rows)
        lines = transfers(rows, root)
        print("\ncross-library transfer (an item with an action learned on one library, applied on another):")
        print("\n".join(lines) if lines else "- none in this sequence")


if __name__ == "__main__":
    main()
