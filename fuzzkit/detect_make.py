"""The ``autotools`` and ``make`` detectors: configure once, then read ``make -n``.

There is no ``bear`` here to record real compiler calls, and automake's ``*_SOURCES``
variables hide conditionals and generated lists, so the library's files are read from what
make would run: ``make -n -w -k`` prints every compile, archive and link command without
running them (recursive ``$(MAKE)`` calls still run, so subdirectories are seen). Compile
commands give each source with its ``-D``/``-I`` flags and object; archive (``ar``) and
library link commands (``-o lib*.a``/``.la``/``.so``, ``-shared``) say which objects make
up the library. Objects that only go into programs (tools, tests, examples) are left out.
If no library command can be read, every compiled file that does not define ``main`` is
taken. Both steps run sandboxed in a private copy of the tree (:mod:`fuzzkit.detect`).
"""

from __future__ import annotations

import fnmatch
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from fuzzkit.detect_sources import is_program
from fuzzkit.detect_tree import read_text, skipped
from fuzzkit.errors import ToolchainError
from fuzzkit.sandbox import Limits, run_sandboxed
from fuzzkit.sandbox_env import step_env
from fuzzkit.tools import tool

_COMPILER = re.compile(r"^(?:.*-)?(?:clang|gcc|cc|c\+\+|g\+\+|clang\+\+)(?:-[\d.]+)?$")
_ARCHIVER = re.compile(r"^(?:.*-)?(?:llvm-)?ar(?:-[\d.]+)?$")
_LIBRARY_OUT = re.compile(r"(^lib.*\.(a|la)$)|\.so(\.\d+)*$|\.dylib$")
_ENTERING = re.compile(r"^make(?:\[\d+\])?: Entering directory [`'](.*)'$")
_SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".S")  # .S: preprocessed assembly
_KEPT_FLAGS = re.compile(r"^(-pthread|-f(?:no-)?(?:signed-char|unsigned-char|strict-aliasing))$")


# A build tool's own statement of what stopped it (CMake puts its text on the lines after).
BUILD_CAUSE = re.compile(r"CMake Error|Could NOT find|configure: error:|\berror:|"
                         r"Package '[^']+'.* not found", re.I)


def build_failure(output: str, keep: int = 15) -> str:
    """A failed build step's last ``keep`` lines, after its first error where that came earlier."""
    lines = output.strip().splitlines()
    tail = lines[-keep:]
    first = next((i for i, line in enumerate(lines) if BUILD_CAUSE.search(line)), len(lines))
    if first < len(lines) - keep:
        tail = [*lines[first:first + 4], "...", *tail]
    return "\n".join(tail)


def run_step(cmd: list[str], cwd: Path, log: Path, env: dict[str, str], what: str,
             tree: Path | None = None, append: bool = False) -> str:
    """Run a configure/make step sandboxed (no network, writes only under ``cwd``); its output.

    ``tree``: the project's whole tree, for a step run in one of its subdirectories (make
    there reads ``../Makefile``, ``../config.h`` and ``../aclocal.m4``, and may write beside
    them); it is then what the step sees and may write, instead of ``cwd`` alone.
    ``append``: add to ``log`` (a second try) instead of replacing it; the output returned
    and shown on failure is still this run's alone.

    Raises:
        ToolchainError: The step failed or took over 15 minutes.
    """
    start = log.stat().st_size if append and log.is_file() else 0
    result = run_sandboxed(
        cmd, cwd=cwd, log_path=log, wall_timeout=900, env=env,
        limits=Limits(cpu_seconds=1800, processes=512, file_size_mb=2048),
        writable=[tree] if tree is not None else (), append=append,
    )  # fmt: skip
    output = log.read_bytes()[start:].decode(errors="replace")
    if result.exit_code != 0 or result.timed_out:
        raise ToolchainError(f"{what} failed (exit {result.exit_code}):\n{build_failure(output)}")
    return output


def build_env() -> dict[str, str]:
    """The environment configure steps see: our clang, no optimization, C locale, no secrets."""
    return step_env({"CC": tool("clang"), "CXX": tool("clang++"), "CFLAGS": "-g -O0", "LC_ALL": "C"})


# Hand-written assembly is neither instrumented by the sanitizers nor counted by coverage, and
# the recipe compiles C only: the portable C versions are the ones to fuzz.
_WANTED = ("--disable-shared", "--enable-static", "--static", "--disable-dependency-tracking",
           "--disable-assembler", "--disable-asm", "--disable-assembly")


def configure_args(help_text: str, extra: list[str]) -> list[str]:
    """Options for ``./configure``: static only, when ``./configure --help`` lists them.

    The script's own text is no guide: every libtool-generated script mentions ``--static``
    (a libtool link flag) while autoconf rejects it as an option.

    Args:
        help_text: What ``./configure --help`` printed.
        extra: The user's ``configure_args``, passed through as given.
    """
    listed = set(re.findall(r"(?<![\w-])(--[a-z][\w-]*)", help_text))

    # autoconf prints `--enable-FEATURE` forms for some options and the `--disable-` form
    # for others; either spelling means the script understands the switch.
    def known(opt: str) -> bool:
        other = {"enable": "disable", "disable": "enable"}
        flip = re.sub(r"^--(enable|disable)-", lambda m: f"--{other[m[1]]}-", opt)
        return opt in listed or flip in listed

    return [opt for opt in _WANTED if known(opt)] + extra


_AM_MAKEFLAGS = re.compile(r"^AM_MAKEFLAGS\s*=(.*)$", re.M)


def make_overrides(tree: Path) -> list[str]:
    """Variables on make's command line for reading an automake build.

    A ``Makefile.am`` with ``AM_MAKEFLAGS = --no-print-directory`` has every sub-make keep
    quiet about the directory it works in, so ``make -n -w`` cannot tell which directory a
    compile command's relative source path is in; the same flags without that one are passed.
    """
    found = _AM_MAKEFLAGS.search(read_text(tree / "Makefile"))
    if not found or "--no-print-directory" not in found[1].split():
        return []
    kept = [flag for flag in found[1].split() if flag != "--no-print-directory"]
    return ["AM_MAKEFLAGS=" + " ".join([*kept, "-w"])]


@dataclass
class _Compile:
    source: Path
    flags: list[str]
    obj: Path | None = None  # the object it writes, where make -n named one


@dataclass
class _Commands:
    compiles: dict[Path, _Compile] = field(default_factory=dict)
    members: list[tuple[Path, str]] = field(default_factory=list)  # (dir, object or glob)
    direct: list[_Compile] = field(default_factory=list)  # sources linked straight into a library


def _split(line: str) -> list[list[str]]:
    try:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()")
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        return []
    segments: list[list[str]] = []
    current: list[str] = []
    for token in tokens:
        if token and set(token) <= set(";&|()"):
            segments.append(current)
            current = []
        else:
            current.append(token)
    return [s for s in [*segments, current] if s]


def _unwrap(tokens: list[str]) -> list[str]:
    """Drop env assignments and wrappers (libtool ``--mode=...``, ccache) before the tool."""
    for i, token in enumerate(tokens):
        if token.startswith("--mode="):
            rest = [t for t in tokens[i + 1 :] if not t.startswith("--")]
            return _unwrap(rest)
    # (`$(LIBTOOL) --mode=compile --tag=CC gcc` with LIBTOOL unset reads `mode=compile --tag=CC gcc`)
    while tokens and (re.fullmatch(r"\w+=.*|--\w[\w-]*(=.*)?", tokens[0])
                      or Path(tokens[0]).name in ("ccache", "env")):
        tokens = tokens[1:]
    if tokens and Path(tokens[0]).name in ("sh", "bash", "dash"):
        # `bash build-aux/shave cc /usr/bin/clang -c ...`: a script that quiets the compiler it runs
        lead = [i for i, t in enumerate(tokens[:5]) if not t.startswith("-")]
        compilers = [i for i in lead if _COMPILER.match(Path(tokens[i]).name)]
        if compilers:
            return tokens[compilers[-1]:]
    return tokens


def _parse_compiler(args: list[str], cwd: Path, out: _Commands) -> None:
    flags, sources, inputs, output, compile_only = [], [], [], None, False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-o", "-I", "-D", "-include", "-isystem", "-MF", "-MT", "-MQ") and i + 1 < len(args):
            if arg == "-o":
                output = args[i + 1]
            elif arg in ("-I", "-isystem"):
                flags.append("-I" + str((cwd / args[i + 1]).resolve()))
            elif arg in ("-D", "-include"):
                flags += [arg, args[i + 1]] if arg == "-include" else ["-D" + args[i + 1]]
            i += 2
            continue
        if arg == "-c":
            compile_only = True
        elif arg.startswith("-I"):
            flags.append("-I" + str((cwd / arg[2:]).resolve()))
        elif arg.startswith("-D") or _KEPT_FLAGS.match(arg):
            flags.append(arg)
        elif arg.endswith(_SOURCE_SUFFIXES) and not arg.startswith("-"):
            sources.append((cwd / arg).resolve())
        elif arg.endswith((".o", ".lo", ".a", ".la")) and not arg.startswith("-"):
            inputs.append(arg)
        i += 1
    if compile_only:
        for source in sources:
            obj = output if output and len(sources) == 1 else Path(source.name).with_suffix(".o").as_posix()
            written = (cwd / obj).resolve()
            out.compiles[written] = _Compile(source, flags, written)
    elif output and (_LIBRARY_OUT.search(Path(output).name) or "-shared" in args):
        out.direct += [_Compile(s, flags) for s in sources]
        out.members += [(cwd, name) for name in inputs]


def parse_make_dry_run(text: str, top: Path) -> _Commands:
    """Compile and library commands in ``make -n -w`` output; paths are absolute."""
    out = _Commands()
    cwd = top
    for line in text.replace("\\\n", " ").splitlines():
        entering = _ENTERING.match(line.strip())
        if entering:
            cwd = Path(entering[1])
            continue
        local = cwd
        for segment in _split(line):
            tokens = _unwrap(segment)
            if not tokens:
                continue
            name = Path(tokens[0]).name
            if name == "cd" and len(tokens) > 1:
                local = (local / tokens[1]).resolve()
            elif _COMPILER.match(name):
                _parse_compiler(tokens[1:], local, out)
            elif _ARCHIVER.match(name) and len(tokens) > 2:
                archive_at = 2 if not tokens[1].endswith((".a", ".la")) else 1
                out.members += [(local, m) for m in tokens[archive_at + 1 :] if not m.startswith("-")]
    return out


_TEST_DIRS = frozenset("test tests testing testsuite unittest unittests t fuzz fuzzing".split())


def _in_test_dir(source: Path, tree: Path) -> bool:
    if not source.is_relative_to(tree):
        return False
    return any(part.lower() in _TEST_DIRS for part in source.relative_to(tree).parts[:-1])


def _member_entries(commands: _Commands, directory: Path, member: str) -> list[_Compile]:
    """The compiles whose object is archived as ``member`` (a path or a glob, from ``directory``).

    A compile without ``-o`` writes its object into the current directory, and some Makefiles
    then move it beside its source (``cc -c src/a.c; mv a.o src/a.o``), which ``make -n``
    shows but this reader does not follow: a member matching no object by path is taken to
    be the one compile whose object has the member's file name, when exactly one has it.
    """
    pattern = str((directory / member).resolve()) if not Path(member).is_absolute() else member
    wanted = Path(pattern).with_suffix(".lo")
    found = [e for obj, e in commands.compiles.items()
             if obj.with_suffix(".lo") == wanted or fnmatch.fnmatch(str(obj), pattern)]
    if found or any(c in member for c in "*?["):
        return found
    named = [e for obj, e in commands.compiles.items() if obj.with_suffix(".lo").name == wanted.name]
    return named if len(named) == 1 else []


def library_compiles(commands: _Commands, tree: Path) -> list[_Compile]:
    """The compile entries of the library's own sources (see the module docstring)."""
    chosen: dict[Path, _Compile] = {}
    for directory, member in commands.members:
        for entry in _member_entries(commands, directory, member):
            chosen.setdefault(entry.source, entry)
    for entry in commands.direct:
        chosen.setdefault(entry.source, entry)
    # A test suite's helper library (`noinst_LIBRARIES` in tests/) is archived too.
    chosen = {s: e for s, e in chosen.items() if not _in_test_dir(s, tree)}
    if not chosen:
        for entry in commands.compiles.values():
            rel = entry.source.relative_to(tree) if entry.source.is_relative_to(tree) else None
            if rel is not None and not skipped(rel) and not is_program(entry.source, entry.flags, tree):
                chosen.setdefault(entry.source, entry)
    if not chosen:
        raise ToolchainError("`make -n` showed no compile command for a library source")
    return [chosen[s] for s in sorted(chosen)]
