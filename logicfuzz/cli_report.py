"""``logicfuzz report RUN_DIR``: write ``report.html`` and ``report.md`` for a finished run.

Exit codes: 0 both files written; 2 ``RUN_DIR`` is not a run directory or a file in it is not
readable JSON (the message names it). :class:`logicfuzz.report.ReportError` is a
``ValueError``, which the main entry point turns into exit code 2.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from logicfuzz.report_write import write_report


def _report(args: argparse.Namespace) -> int:
    html_path, md_path = write_report(Path(args.run_dir))
    if args.json:
        print(json.dumps({"html": str(html_path), "markdown": str(md_path)}))
    elif not args.quiet:
        print(f"wrote {html_path}\nwrote {md_path}")
    return 0


def add_report_command(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``report`` to ``logicfuzz``'s subcommands (``subparsers`` from ``add_subparsers``)."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "report", help="write report.html and report.md for a run directory",
        description="Write RUN_DIR/report.html (self-contained: open it offline) and RUN_DIR/report.md "
                    "from the run's summary.json and result.json files; add baseline.json or "
                    "experience.json to the run directory to compare and chart them.")
    p.add_argument("run_dir", metavar="RUN_DIR", help="the --out directory of `logicfuzz run`")
    p.add_argument("--quiet", action="store_true", help="print nothing")
    p.add_argument("--json", action="store_true", help="print the written paths as JSON")
    p.set_defaults(func=_report)
    return p
