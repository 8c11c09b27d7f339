"""What LogicFuzz reported as library bugs in a set of runs, and what a person found reading each.

A run's ``findings/index.json`` lists the distinct crashes it judged library bugs (replayed
alone, minimized; ``logicfuzz findings``). Each is joined with its hand review in
``bench/bugs/findings_reviews.yaml`` (keyed ``"PROJECT SIGNATURE"``: ``true_bug``, ``misuse`` or
``unclear``, and one sentence why). Printed: one row per distinct finding (project and
signature; how many of the runs reported it), then the totals: reported,
reviewed as true library bugs, as the harness's own misuse (false alarms), unclear, and not yet
reviewed; the false-alarm rate is misuse over the reviewed ones. A finding not yet reviewed is
listed so that someone reads it; the rate is never computed over guesses.

A RUN is a ``logicfuzz run --out`` directory or a folder holding such directories at any depth
(``bench/generality.py``'s ``OUT``, whose runs are ``OUT/LIB/run``).

    python bench/findings_review.py results/gen results/flac --markdown docs/results/findings-review.md

Exit codes: 0; 2 when a RUN holds no run directory, or the reviews file does not read.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout first: benchkit
from benchkit.results_markdown import add_markdown_option, markdown_copy  # noqa: E402

REVIEWS = Path(__file__).resolve().parent / "bugs" / "findings_reviews.yaml"
TITLE = "Library-bug verdicts of LogicFuzz runs, each read by a person"
VERDICTS = ("true_bug", "misuse", "unclear")


@dataclass(frozen=True)
class Finding:
    """One distinct library-bug verdict of one run, with its review."""

    project: str
    kind: str
    signature: str
    top_frame: str
    targets: tuple[str, ...]
    replays: bool
    review: str  # one of VERDICTS, or "unreviewed"
    why: str
    runs: int = 1  # how many of the runs read reported it

    @property
    def key(self) -> str:
        """How the reviews file names it."""
        return f"{self.project} {self.signature}"


def run_dirs(root: Path) -> list[Path]:
    """The run directories under ``root`` (itself when it is one), in a stable order."""
    if (root / "run.json").is_file():
        return [root]
    return sorted(p.parent for p in root.rglob("run.json"))


def load_reviews(path: Path | None = None) -> dict[str, dict[str, str]]:
    """``"PROJECT SIGNATURE" -> {review, why}`` (``REVIEWS`` by default); ValueError says what is wrong."""
    path = path or REVIEWS
    if not path.is_file():
        return {}
    data = yaml.safe_load(path.read_text()) or {}
    reviews = data.get("reviews") or {}
    if not isinstance(reviews, dict):
        raise ValueError(f"{path}: `reviews` must be a mapping of \"PROJECT SIGNATURE\" to review and why")
    for key, entry in reviews.items():
        if not isinstance(entry, dict) or entry.get("review") not in VERDICTS or not entry.get("why"):
            raise ValueError(f"{path}: {key!r} needs `review` (one of {', '.join(VERDICTS)}) and `why`")
    return {str(k): {"review": str(v["review"]), "why": " ".join(str(v["why"]).split())}
            for k, v in reviews.items()}


def findings_of(run: Path, reviews: dict[str, dict[str, str]]) -> list[Finding]:
    """The run's library-bug verdicts, each with its review (``unreviewed`` when none is written)."""
    index = run / "findings" / "index.json"
    entries: list[dict[str, Any]] = json.loads(index.read_text()) if index.is_file() else []
    out = []
    for e in entries:
        project, signature = str(e.get("project", "")), str(e.get("signature", ""))
        said = reviews.get(f"{project} {signature}", {})
        out.append(Finding(project, str(e.get("kind", "")), signature, str(e.get("top_frame", "")),
                           tuple(e.get("targets") or ()), bool(e.get("replays")),
                           said.get("review", "unreviewed"), said.get("why", "")))
    return out


def distinct(found: list[Finding]) -> list[Finding]:
    """One row per finding (project and signature), with the number of runs that reported it."""
    first: dict[str, Finding] = {}
    count: dict[str, int] = {}
    for f in found:
        first.setdefault(f.key, f)
        count[f.key] = count.get(f.key, 0) + 1
    return [replace(f, runs=count[key]) for key, f in first.items()]


def totals(found: list[Finding]) -> dict[str, int]:
    """How many findings got each review."""
    return {r: sum(f.review == r for f in found) for r in (*VERDICTS, "unreviewed")}


def print_table(found: list[Finding], runs: int) -> None:
    """The rows, then the totals and the false-alarm rate over the reviewed findings."""
    print("| project | kind | top frame | targets | runs | replays alone | review | why |")
    print("|---|---|---|---|---|---|---|---|")
    for f in found:
        targets = ", ".join(t.split("/")[-1] for t in f.targets)
        print(f"| {f.project} | {f.kind} | `{f.top_frame}` | {targets} | {f.runs} "
              f"| {'yes' if f.replays else 'no'} | {f.review} | {f.why} |")
    n = totals(found)
    reviewed = n["true_bug"] + n["misuse"] + n["unclear"]
    rate = f"{n['misuse']}/{reviewed} ({100 * n['misuse'] / reviewed:.0f}%)" if reviewed else "-"
    print()
    print(f"- runs read: {runs}; distinct library-bug verdicts: {len(found)} "
          f"(reported {sum(f.runs for f in found)} times)")
    print(f"- reviewed: true library bug {n['true_bug']}, harness misuse {n['misuse']}, "
          f"unclear {n['unclear']}; not yet reviewed {n['unreviewed']}")
    print(f"- false alarms (misuse of the reviewed): {rate}")


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, metavar="RUN",
                        help="a `logicfuzz run --out` directory, or a folder holding them")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the rows as JSON")
    add_markdown_option(parser)
    args = parser.parse_args(argv)
    try:
        reviews = load_reviews()
    except (ValueError, yaml.YAMLError) as exc:
        print(f"error: {exc}\nfix the reviews file, then run the bench again", file=sys.stderr)
        return 2
    dirs = []
    for root in args.runs:
        found = run_dirs(root)
        if not found:
            print(f"error: {root} holds no run directory (no run.json below it); name a "
                  "`logicfuzz run --out` directory or a bench's OUT", file=sys.stderr)
            return 2
        dirs += found
    rows = distinct([f for d in dict.fromkeys(dirs) for f in findings_of(d, reviews)])
    with markdown_copy(args.markdown, TITLE):
        print_table(rows, len(set(dirs)))
    if args.json:
        args.json.write_text(json.dumps([{**f.__dict__, "targets": list(f.targets)} for f in rows], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
