"""``logicfuzz export RUN --to DIR``: a run's harnesses worth keeping, for OSS-Fuzz or ClusterFuzzLite.

Exit codes: 0 the export was written; 2 ``RUN`` is not a finished run with a running harness, the
destination is not empty, or a toolchain step failed (the message says which and what to do).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from logicfuzz.export import export_run


def _export(args: argparse.Namespace) -> int:
    result = export_run(Path(args.run_dir), Path(args.to), project=args.project or "",
                        benchmark=Path(args.benchmark) if args.benchmark else None,
                        minimize=not args.no_minimize)
    if args.json:
        print(json.dumps(result.to_dict(), indent=1))
    elif not args.quiet:
        names = ", ".join(h.name for h in result.harnesses)
        print(f"wrote {len(result.harnesses)} of {result.run_harnesses} harnesses ({names}) to {result.to}: "
              f"{result.kept_lines} of the run's {result.run_lines} covered library lines; "
              f"build with {result.to}/build.sh (see its README.md)")
    return 0


def add_export_command(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``export`` to ``logicfuzz``'s subcommands (``subparsers`` from ``add_subparsers``)."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "export", help="write a run's harnesses worth keeping, with build.sh, dictionaries and seed corpora",
        description="Choose a small set of the run's harnesses that keeps its union line coverage (greedy "
                    "set cover over each harness's covered lines) and write each with its dictionary and "
                    "seed corpus, plus a build.sh in OSS-Fuzz / ClusterFuzzLite form and a README.md.")
    p.add_argument("run_dir", metavar="RUN", help="the --out directory of a finished `logicfuzz run`")
    p.add_argument("--to", required=True, metavar="DIR", help="where to write the export (new or empty)")
    p.add_argument("--project", default="", help="which project of a run over several benchmarks")
    p.add_argument("--benchmark", default="", metavar="YAML",
                   help="the run's benchmark YAML, if the path the run recorded is not found from here")
    p.add_argument("--no-minimize", action="store_true",
                   help="ship each corpus as the run left it (no libFuzzer -merge=1)")
    p.add_argument("--quiet", action="store_true", help="print nothing")
    p.add_argument("--json", action="store_true", help="print what was written as JSON")
    p.set_defaults(func=_export)
    return p
