"""A bench's printed table, also written as Markdown headed by how and where it was measured.

`docs/results/` holds one such file per bench (its latest output): the command line, the commit
(`git rev-parse --short HEAD`, marked when the tree has uncommitted changes) and the machine
(`uname -m`, cores) at its top, then exactly what the bench printed. `scripts/results_table.py`
copies the tables of those files into the README.

    with markdown_copy(args.markdown, "memory A/B"):
        print_the_table()
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import platform
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

REPO = Path(__file__).resolve().parents[1]


def markdown_path(value: str) -> Path:
    """``--markdown``'s type: a file path in a writable folder, checked before the bench runs."""
    path = Path(value)
    problem = _unwritable(path)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return path


def add_markdown_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--markdown FILE`` to a bench's arguments."""
    parser.add_argument("--markdown", type=markdown_path, metavar="FILE",
                        help="also write the printed table to FILE as Markdown, headed by the command "
                             "line, the commit and the machine (docs/results/ keeps the latest of each)")


def _git(*args: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def commit() -> str:
    """The short hash of HEAD, marked when the working tree differs from it."""
    head = _git("rev-parse", "--short", "HEAD")
    if not head:
        return "unknown (not a git checkout)"
    dirty = _git("status", "--porcelain", "--untracked-files=no")
    return f"{head} (with uncommitted changes)" if dirty else head


def command_line(argv: list[str]) -> str:
    """The command as a user would type it from the repository root.

    A path of this machine outside the repository (a work directory, a sitting's JSON) is
    written as its last two parts: the file is named, the machine's layout is not.
    """
    script = Path(argv[0]) if argv else Path("bench")
    with contextlib.suppress(ValueError):
        script = script.resolve().relative_to(REPO)
    return shlex.join(["python", str(script), *map(_portable, argv[1:])])


def _portable(arg: str) -> str:
    """``arg`` with an absolute path outside the repository cut to its last two parts."""
    name, eq, value = arg.partition("=") if arg.startswith("--") else ("", "", arg)
    if not value.startswith("/"):
        return arg
    path = Path(value)
    with contextlib.suppress(ValueError):
        return f"{name}{eq}{path.resolve().relative_to(REPO)}"
    return f"{name}{eq}{'/'.join(path.parts[-2:])}"


_ABSOLUTE = re.compile(r"(?<![\w.:/])/(?:[\w.+-]+/)*[\w.+-]+")


def portable_text(text: str) -> str:
    """``text`` with each absolute path outside the repository cut as :func:`command_line` cuts it.

    What a bench prints (a run directory, a log) is this machine's layout; the file that keeps the
    table names the file, not where it was.
    """
    return _ABSOLUTE.sub(lambda m: _portable(m.group(0)), text)


def header(title: str, argv: list[str]) -> str:
    """The lines above a bench's table: title, command, commit, machine, time."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return "\n".join([
        f"# {title}", "",
        f"- command: `{command_line(argv)}`",
        f"- commit: {commit()}",
        f"- machine: {platform.machine()}, {cores} cores",
        f"- written: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} by the command above",
        "", ""])


class _Tee(io.TextIOBase):
    """Writes to the real stdout and keeps a copy."""

    def __init__(self, real: TextIO) -> None:
        self.real, self.copy = real, io.StringIO()

    def write(self, text: str) -> int:  # type: ignore[override]
        self.copy.write(text)
        return self.real.write(text)

    def flush(self) -> None:
        self.real.flush()


def _unwritable(path: Path) -> str:
    """What keeps ``path`` from being written (its folder is made if missing), or ''."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"{path}: cannot create its folder ({exc.strerror}); pass a path in a writable folder"
    if path.is_dir() or not os.access(path.parent, os.W_OK):
        return f"{path}: not a writable file path; pass a file in a writable folder"
    return ""


@contextlib.contextmanager
def markdown_copy(path: Path | None, title: str, *, fenced: bool = False) -> Iterator[None]:
    """Print as usual; when ``path`` is set, also write what was printed there, headed.

    ``--markdown`` checks the path before the bench's work, so a long run never ends on an
    unwritable file; it is checked again here, and written only when the block ends without an
    exception. ``fenced`` wraps output
    that is not a Markdown table (fixed-width text) in a text block.
    """
    if path is None:
        yield
        return
    problem = _unwritable(path)
    if problem:
        raise SystemExit(f"error: --markdown {problem}")
    tee = _Tee(sys.stdout)
    real, sys.stdout = sys.stdout, tee  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout = real
    body = portable_text(tee.copy.getvalue())
    if fenced:
        body = "```text\n" + body + ("" if body.endswith("\n") else "\n") + "```\n"
    path.write_text(header(title, sys.argv) + body, encoding="utf-8")
