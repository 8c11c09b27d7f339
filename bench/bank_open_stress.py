"""Many processes opening one new experience bank and writing to it at once: how many opens fail.

Each round makes a fresh bank directory and starts ``--writers`` processes that open it and add
``--writes`` records each (the worker of ``tests/integration/test_experience_concurrency.py``).
Prints the count as a table and every failure's last line below it. Before 9a1f6ec about 1 open
in 160 failed with "database is locked" taken for a damaged lifecycle store.

    .venv/bin/python bench/bank_open_stress.py --rounds 40 --writers 8 --writes 30 \\
        --markdown docs/results/bank-open-stress.md
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchkit.bank_writer import WORKER  # noqa: E402
from benchkit.results_markdown import add_markdown_option, markdown_copy  # noqa: E402

TITLE = "Opening one new bank from many writers at once"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The bench's arguments (``--markdown`` is checked here, before any round)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--writes", type=int, default=30)
    add_markdown_option(parser)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run the rounds, print the table; 1 when an open failed."""
    args = parse_args(argv)
    failures = stress(args)
    report(failures, args)
    return 1 if failures else 0


def stress(args: argparse.Namespace) -> list[str]:
    """Rounds of writers opening one new bank at once; the last line of each failed open."""
    failures = []
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="logicfuzz-bank-stress-") as directory:
            procs = [subprocess.Popen([sys.executable, "-c", WORKER, directory, str(w), str(args.writes)],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
                     for w in range(args.writers)]
            for proc in procs:
                _, err = proc.communicate()
                if proc.returncode:
                    failures.append((err.strip().splitlines() or ["(no output)"])[-1][:300])
    return failures


def report(failures: list[str], args: argparse.Namespace) -> None:
    """The table (and ``--markdown``'s copy): opens tried and failed, then each failure's last line."""
    with markdown_copy(args.markdown, TITLE):
        print("| rounds | writers | writes each | failed opens |\n|---|---|---|---|")
        print(f"| {args.rounds} | {args.writers} | {args.writes} | "
              f"{len(failures)} of {args.rounds * args.writers} |")
        if failures:
            print("\nlast line of each failed open:\n")
            print("\n".join("- `" + line.replace("`", "'") + "`" for line in failures))


if __name__ == "__main__":
    raise SystemExit(main())
