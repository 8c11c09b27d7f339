"""Hostile code and hostile input: every corpus of ``tests/security/`` measured in one run.

Prints one table (and ``--json`` the details): hostile harnesses tried / escaped (real bwrap
sandbox, real clang and libFuzzer), hostile replies × parse entry points tried / crashed,
secrets caught / missed and false positives on ordinary C and log lines, corrupted memory files
healed / refused / crashed, and CLI misuse probes clean / traceback. These are the README's
figures.

    .venv/bin/python bench/hostile.py            # about 3 minutes
    .venv/bin/python bench/hostile.py --only replies,secrets --json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchkit.results_markdown import add_markdown_option, markdown_copy  # noqa: E402
from benchkit.security import (  # noqa: E402 - the corpora the security tests test
    corrupted_files,
    hostile_harnesses,
    hostile_replies,
    misuse_probes,
    secrets_corpus,
)

CORPORA: dict[str, Callable[[], dict[str, Any]]] = {
    "harnesses": hostile_harnesses.measure,
    "replies": hostile_replies.measure,
    "secrets": secrets_corpus.measure,
    "files": corrupted_files.measure,
    "misuse": misuse_probes.measure,
}


def row(name: str, m: dict[str, Any]) -> tuple[str, str]:
    """(what was tried, what happened) for one corpus."""
    if name == "harnesses":
        return (f"{m['tried']} hostile harnesses",
                f"{m['escaped']} escaped, {m.get('skipped', 0)} skipped")
    if name == "replies":
        return (f"{m['replies']} hostile replies x {m['entry_points']} parse entry points = "
                f"{m['tried']} calls", f"{m['crashed']} crashed")
    if name == "secrets":
        return (f"{m['secrets']} secrets, {m['ordinary_lines']} ordinary C/log lines",
                f"{m['caught']} caught, {len(m['missed'])} missed, "
                f"{len(m['false_positives'])} false positives")
    if name == "files":
        return (f"{m['tried']} corrupted memory-file cases",
                f"{m['healed']} healed, {m['refused']} refused (one line, exit 2), {m['crashed']} crashed")
    return (f"{m['tried']} CLI misuse probes",
            f"{m['clean']} clean (one line, exit 2), {m['traceback']} tracebacks")


def main(argv: list[str] | None = None) -> int:
    """Run the corpora and print the table; exit 1 when anything escaped or crashed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--only", help=f"comma list of {', '.join(CORPORA)}")
    parser.add_argument("--json", action="store_true", help="print every corpus's details as JSON")
    add_markdown_option(parser)
    args = parser.parse_args(argv)
    names = [n for n in (args.only or ",".join(CORPORA)).split(",") if n]
    unknown = [n for n in names if n not in CORPORA]
    if unknown:
        print(f"error: unknown corpus {', '.join(unknown)}; choose from {', '.join(CORPORA)}",
              file=sys.stderr)
        return 2
    results: dict[str, Any] = {}
    with markdown_copy(args.markdown, "Hostile inputs", fenced=True):
        print(f"{'corpus':<10} {'tried':<62} {'result':<48} seconds")
        for name in names:
            started = time.monotonic()
            results[name] = CORPORA[name]()
            tried, outcome = row(name, results[name])
            print(f"{name:<10} {tried:<62} {outcome:<48} {time.monotonic() - started:.0f}", flush=True)
    if args.json:
        print(json.dumps(results, indent=1, default=str))
    bad = sum(int(results[n].get(k) or 0) for n in results for k in ("escaped", "crashed", "traceback"))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
