"""Command line of ``bench/generality.py``: libraries, reused runs, budgets, checked before any work."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchkit.results_markdown import add_markdown_option

REPO = Path(__file__).resolve().parents[1]


class UsageError(Exception):
    """Bad command line: the message says what was wrong and what to do (exit 2)."""


ARMS = ("usage", "no-usage")  # the run flags of each arm: ARM_FLAGS in generality.py


def arms_of(text: str) -> list[str]:
    """The ``--arms`` list, each checked."""
    arms = [a.strip() for a in text.split(",") if a.strip()]
    unknown = [a for a in arms if a not in ARMS]
    if unknown or not arms:
        raise UsageError(f"--arms {','.join(unknown) or '(empty)'}: each arm is one of {', '.join(ARMS)}")
    return arms


@dataclass
class Library:
    """One library to measure, as named on the command line."""

    key: str
    name: str
    yaml: Path | None = None
    functions: list[str] = field(default_factory=list)
    run_dir: Path | None = None


def _is_apt_source(name: str) -> bool:
    """Whether apt knows a source package (or a binary one mapping to it) by this name."""
    try:
        out = subprocess.run(["apt-cache", "showsrc", name], capture_output=True, text=True,
                             check=False, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "Package:" in out


DEVSET = REPO / "bench" / "devset.txt"
_FUNCTION_LIST = re.compile(r"\s*[A-Za-z_]\w*\s*(,\s*[A-Za-z_]\w*\s*)*,?\s*")


def list_file(path: Path) -> list[str]:
    """The libraries a list file names: one a line, ``#`` comments and blank lines left out."""
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise UsageError(f"cannot read the library list {path}: {exc.strerror or exc}; "
                         "give an existing file (one library a line), e.g. @bench/devset.txt") from None
    return [w for line in lines for w in line.split("#", 1)[0].split()]


def expand_lists(argv: list[str]) -> list[str]:
    """``@FILE`` arguments replaced by the libraries the file lists; ``--devset`` by the development set."""
    out: list[str] = []
    for arg in argv:
        if arg == "--devset":
            out += list_file(DEVSET)
        elif arg.startswith("@") and len(arg) > 1:
            out += list_file(Path(arg[1:]))
        else:
            out.append(arg)
    return out


def library_of(spec: str) -> Library:
    """``NAME``, ``NAME=VERSION``, ``PATH.yaml``, each optionally ``:fn1,fn2``, as a :class:`Library`."""
    target, _, funcs = spec.rpartition(":")
    if not target or not _FUNCTION_LIST.fullmatch(funcs):  # a Debian version may hold an epoch `1:`
        target, funcs = spec, ""
    functions = [f.strip() for f in funcs.split(",") if f.strip()]
    if not target:
        raise UsageError(f"library {spec!r} has no name: give a Debian source package or a benchmark YAML")
    if "/" in target or target.endswith((".yaml", ".yml")):
        path = Path(target)
        if not path.is_file():
            raise UsageError(f"benchmark YAML {target} does not exist: "
                             "give an existing file or a package name")
        return Library(key=path.stem, name=target, yaml=path.resolve(), functions=functions)
    package = target.partition("=")[0]  # NAME=VERSION pins an upload; the key is the name
    if not _is_apt_source(package):
        raise UsageError(f"unknown library {package!r}: apt knows no source package of that name "
                         "(check `apt-cache showsrc NAME`, or give a benchmark YAML path)")
    return Library(key=package, name=target, functions=functions)


def attach_runs(libraries: list[Library], runs: list[str]) -> None:
    """Give each ``--logicfuzz-run [LIB=]DIR`` to its library (LIB= needed with several libraries)."""
    for given in runs:
        key, sep, directory = given.rpartition("=")
        path = Path(directory)
        if not path.is_dir():
            raise UsageError(f"--logicfuzz-run {given}: no directory {directory} "
                             "(pass the directory given to `logicfuzz run --out`)")
        if not sep and len(libraries) != 1:
            raise UsageError(f"--logicfuzz-run {given}: with {len(libraries)} libraries say which one "
                             "it is, as LIB=DIR")
        match = [lib for lib in libraries if not sep or key in (lib.key, lib.name)]
        if not match:
            raise UsageError(f"--logicfuzz-run {given}: {key!r} is not one of the libraries given "
                             f"({', '.join(lib.key for lib in libraries)})")
        match[0].run_dir = path.resolve()


def _run_options(p: argparse.ArgumentParser) -> None:
    """What to measure: the libraries, reused runs, the arms."""
    p.add_argument("libraries", nargs="*", metavar="LIB[:fn1,fn2]",
                   help="Debian source package (NAME or NAME=VERSION) or benchmark YAML, optionally "
                        "with the functions to use; @FILE reads them from a list file, one a line")
    p.add_argument("--devset", action="store_true",
                   help="measure the development set too (the libraries of bench/devset.txt)")
    p.add_argument("--logicfuzz-run", action="append", default=[], metavar="[LIB=]DIR",
                   help="reuse this `logicfuzz run --out` directory for LIB instead of running again")


class ArgumentParser(argparse.ArgumentParser):
    """An argument parser whose errors raise :class:`UsageError` (the bench says them and exits 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message} (see --help)")


def at_least_one(args: argparse.Namespace, names: tuple[str, ...]) -> None:
    """Raise :class:`UsageError` naming the first of ``names`` given below 1."""
    for name in names:
        if getattr(args, name) < 1:
            raise UsageError(f"--{name.replace('_', '-')} must be at least 1")


def logicfuzz_run_options(p: argparse.ArgumentParser) -> None:
    """The options passed through to ``logicfuzz run`` (read by ``generality.logicfuzz_run``)."""
    p.add_argument("--fuzz-seconds", type=int, default=30, help="logicfuzz run --fuzz-seconds (default 30)")
    p.add_argument("--max-iterations", type=int, default=3, help="logicfuzz run --max-iterations (default 3)")
    p.add_argument("--jobs", type=int, help="logicfuzz run --jobs (default: its own)")
    p.add_argument("--shared-bank", action="store_true",
                   help="let logicfuzz run use the machine's experience bank (default: an empty bank "
                        "of its own per library under OUT, as a new user has)")
    p.add_argument("--run-arg", action="append", default=[], metavar="ARG",
                   help="one more argument for logicfuzz run (repeat; e.g. --run-arg=--model=offline)")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parsed and checked arguments; ``libraries`` holds :class:`Library` items.

    Raises:
        UsageError: Unknown library, missing run directory or JSON file, bad number.
    """
    p = ArgumentParser(prog="generality.py", description="LogicFuzz vs each library's own fuzz harnesses "
                "at equal fuzzing CPU.")
    _run_options(p)
    logicfuzz_run_options(p)
    p.add_argument("--seconds", type=int, default=60,
                   help="CPU-seconds per harness of the side with more harnesses (default 60)")
    p.add_argument("--budget", type=int, help="total fuzzing CPU-seconds per side (overrides --seconds)")
    p.add_argument("--repeats", type=int, default=1, help="fuzzing repeats per side; medians (default 1)")
    p.add_argument("--dict", choices=("own", "same", "none"), default="own",
                   help="dictionaries in the comparison: own (each side its own: LogicFuzz's from the "
                        "library's string literals, upstream's shipped beside each harness), same "
                        "(LogicFuzz's for both sides), none")
    p.add_argument("--parallel", type=int, default=os.cpu_count() or 1,
                   help="harnesses of one side fuzzed at once (wall time only; default: cores)")
    p.add_argument("--arms", default="usage", metavar="ARM[,ARM]",
                   help="LogicFuzz arms, side by side on the same functions: usage (the default engine) and "
                        "no-usage (logicfuzz run --no-usage: without the library's own tests and examples)")
    p.add_argument("--out", type=Path, help="work directory (default results/generality-<time>)")
    p.add_argument("--json", type=Path, help="results file (default OUT/generality.json)")
    p.add_argument("--merge", nargs="+", type=Path, default=[], metavar="JSON",
                   help="join the rows of earlier sittings' generality.json files into the table")
    add_markdown_option(p)
    args = p.parse_args(expand_lists(sys.argv[1:] if argv is None else list(argv)))
    at_least_one(args, ("fuzz_seconds", "max_iterations", "seconds", "repeats", "parallel"))
    if args.budget is not None and args.budget < 1:
        raise UsageError("--budget must be at least 1 CPU-second")
    if not args.libraries and not args.merge:
        raise UsageError("no library given: name Debian source packages or benchmark YAMLs, "
                         "or --merge JSON files")
    for merged in args.merge:
        try:
            json.loads(merged.read_text())["rows"]
        except (OSError, ValueError, KeyError, TypeError):
            raise UsageError(f"--merge {merged}: not a generality.json file") from None
    args.libraries = [library_of(s) for s in args.libraries]
    keys = [lib.key for lib in args.libraries]
    if len(set(keys)) != len(keys):
        raise UsageError(f"a library is named twice ({', '.join(keys)}): give each once")
    attach_runs(args.libraries, args.logicfuzz_run)
    args.arms = arms_of(args.arms)
    args.out = (args.out or REPO / "results" / time.strftime("generality-%Y%m%d-%H%M%S")).resolve()
    args.json = (args.json or args.out / "generality.json").resolve()
    return args
