"""Many processes opening one new experience bank and writing to it at once: how many opens fail.

Each round makes a fresh bank directory and starts ``--writers`` processes that open it and add
``--writes`` records each (the worker of ``tests/integration/test_experience_concurrency.py``).
Prints every failure's last line and the count. Before 9a1f6ec about 1 open in 160 failed with
"database is locked" taken for a damaged lifecycle store.

    .venv/bin/python bench/bank_open_stress.py --rounds 40 --writers 8 --writes 30
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--writes", type=int, default=30)
    add_markdown_option(parser)
    args = parser.parse_args()
    with markdown_copy(args.markdown, "Opening one new bank from many writers at once", fenced=True):
        return stress(args)


def stress(args: argparse.Namespace) -> int:
    """Rounds of writers opening one new bank at once; the failed opens."""
    failures = 0
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="logicfuzz-bank-stress-") as directory:
            procs = [subprocess.Popen([sys.executable, "-c", WORKER, directory, str(w), str(args.writes)],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
                     for w in range(args.writers)]
            for proc in procs:
                _, err = proc.communicate()
                if proc.returncode:
                    failures += 1
                    print((err.strip().splitlines() or ["(no output)"])[-1][:300])
    print(f"failed opens: {failures} of {args.rounds * args.writers}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
