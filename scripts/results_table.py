"""Copy the results tables of the README (and docs/) from the files in docs/results/.

A results block in a Markdown file is

    <!-- results:NAME -->
    ...generated...
    <!-- /results:NAME -->

and holds the first table of ``docs/results/NAME.md`` (``NAME#2``: its second table; a table is
a Markdown table, or a fenced block when the bench printed fixed-width text), then one line
naming that file, its command and its commit. A bench writes its file with ``--markdown``; no
figure in a block is edited by hand.

    python scripts/results_table.py            # rewrite every block
    python scripts/results_table.py --check    # exit 1 and name each block that differs
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "docs" / "results"
BLOCK = re.compile(r"(<!-- results:(?P<name>[\w.-]+)(?:#(?P<n>\d+))? -->\n)(?P<body>.*?)"
                   r"(<!-- /results:(?P=name)(?:#(?P=n))? -->)", re.S)
FIELD = re.compile(r"^- (command|commit|machine|source): (.*)$", re.M)


class ResultsError(Exception):
    """A block names a results file that is missing or has no such table."""


def default_files() -> list[Path]:
    """The README and every doc outside docs/results/."""
    docs = sorted(p for p in (REPO / "docs").glob("*.md"))
    return [REPO / "README.md", *docs]


def tables(text: str) -> list[str]:
    """Each Markdown table (consecutive ``|`` lines) and each fenced block, in order."""
    found: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("```"):
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), len(lines) - 1)
            found.append("\n".join(lines[i:end + 1]))
            i = end + 1
        elif lines[i].startswith("|"):
            end = i
            while end + 1 < len(lines) and lines[end + 1].startswith("|"):
                end += 1
            found.append("\n".join(lines[i:end + 1]))
            i = end + 1
        else:
            i += 1
    return found


def block_body(name: str, index: int, doc: Path, results: Path = RESULTS) -> str:
    """What the block ``name`` (its ``index``-th table) holds in ``doc``."""
    source = results / f"{name}.md"
    label = f"docs/results/{name}.md"
    if not source.is_file():
        raise ResultsError(f"{doc.name}: block results:{name} names {label}, which "
                           "does not exist; write it with the bench's --markdown option")
    text = source.read_text(encoding="utf-8")
    found = tables(text)
    if len(found) < index:
        raise ResultsError(f"{doc.name}: {label} has {len(found)} table(s), the block "
                           f"asks for table {index}; fix the block's #N or the file")
    fields = dict(FIELD.findall(text))
    link = os.path.relpath(source, doc.parent)
    how = "; ".join(f"{key} {fields[key]}" for key in ("command", "commit") if key in fields)
    return f"{found[index - 1]}\n\nFrom [{label}]({link}): {how}.\n"


def render(doc: Path, results: Path = RESULTS) -> str:
    """The text of ``doc`` with every results block regenerated."""
    text = doc.read_text(encoding="utf-8")

    def fill(match: re.Match[str]) -> str:
        body = block_body(match["name"], int(match["n"] or 1), doc, results)
        return f"{match.group(1)}{body}{match.group(5)}"

    return BLOCK.sub(fill, text)


def stale_blocks(doc: Path, results: Path = RESULTS) -> list[str]:
    """Names of the blocks whose text differs from what their results file gives."""
    text = doc.read_text(encoding="utf-8")
    stale = []
    for match in BLOCK.finditer(text):
        if match["body"] != block_body(match["name"], int(match["n"] or 1), doc, results):
            stale.append(match["name"] + (f"#{match['n']}" if match["n"] else ""))
    return stale


def main(argv: list[str] | None = None) -> int:
    """Rewrite (or with --check, compare) the results blocks of the given files."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, help="Markdown files (default: README.md, docs/*.md)")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a block differs")
    args = parser.parse_args(argv)
    files = [f.resolve() for f in args.files] or default_files()
    try:
        if args.check:
            stale = [f"{doc.name}: results:{name}" for doc in files for name in stale_blocks(doc)]
            for line in stale:
                print(f"{line} differs from its docs/results file; run python scripts/results_table.py",
                      file=sys.stderr)
            return 1 if stale else 0
        for doc in files:
            new = render(doc)
            if new != doc.read_text(encoding="utf-8"):
                doc.write_text(new, encoding="utf-8")
                print(f"updated {doc.relative_to(REPO) if doc.is_relative_to(REPO) else doc}")
    except (ResultsError, OSError) as exc:
        print(f"results_table.py: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
