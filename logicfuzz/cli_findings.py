"""``logicfuzz findings RUN_DIR``: the distinct library bugs a run found, one row each.

Exit codes: 0 listed (also when there are none); 2 ``RUN_DIR`` has no readable
``findings/index.json`` (the message says how to write it).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from logicfuzz.findings import load_findings


def findings_table(entries: list[dict[str, Any]], title: str) -> Table:
    """id, kind, top frame, targets and reproducer size of each finding."""
    table = Table(title=title)
    for col in ("id", "kind", "top frame", "targets", "reproducer"):
        table.add_column(col)
    for e in entries:
        size = f"{e.get('reproducer_bytes')} B" + (" (minimized)" if e.get("minimized") else "")
        table.add_row(escape(str(e.get("id"))), escape(str(e.get("kind"))), escape(e.get("top_frame") or "-"),
                      escape(", ".join(e.get("targets") or [])), size)
    return table


def _findings(args: argparse.Namespace) -> int:
    run_dir = Path(args.run_dir)
    entries = load_findings(run_dir)
    if args.json:
        print(json.dumps(entries, indent=1))
        return 0
    out = Console()
    if not out.is_terminal:
        out = Console(width=200)  # a log file or pipe: never squeeze the table
    bugs = [e for e in entries if not e.get("unclear")]
    unclear = [e for e in entries if e.get("unclear")]
    out.print(findings_table(bugs, f"{len(bugs)} finding(s) in {run_dir / 'findings'}"))
    if unclear:
        out.print(findings_table(unclear, f"{len(unclear)} unclear crash(es), not library bugs until read: "
                                          f"{run_dir / 'findings' / 'unclear'}"))
    return 0


def add_findings_command(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``findings`` to ``logicfuzz``'s subcommands (``subparsers`` from ``add_subparsers``)."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "findings", help="list the distinct library bugs a run found",
        description="List RUN_DIR/findings/: one row per distinct library bug (sanitizer kind and top "
                    "library frames), each folder holding its minimized reproducer, stack, harness, "
                    "replay.sh and report.md.")
    p.add_argument("run_dir", metavar="RUN_DIR", help="the --out directory of `logicfuzz run`")
    p.add_argument("--json", action="store_true", help="print the findings as JSON")
    p.set_defaults(func=_findings)
    return p
