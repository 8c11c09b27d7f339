"""Files a configured tree lacks until make runs: ``configure`` itself, built headers, sources.

``make -n`` (:mod:`fuzzkit.detect_make`) only prints commands, so anything the build
generates before compiling (automake ``BUILT_SOURCES``: gnulib's replacement headers, a
version header; an amalgamated source) does not exist after it. These helpers ask make for
exactly those files, sandboxed like every configure step, not for the whole build.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from fuzzkit.detect_make import run_step
from fuzzkit.detect_tree import read_text
from fuzzkit.errors import ToolchainError

_PRINT_MAKEFILE = ".logicfuzz-print.mk"
_ENTERING = re.compile(r"^make(?:\[\d+\])?: Entering directory [`'](.*)'$")
_NO_RULE = re.compile(r"No rule to make target [`']([^']+\.(?:la|a))', needed by")


def autoreconf(tree: Path, dest: Path, env: dict[str, str]) -> None:
    """Generate ``configure`` from ``configure.ac``, as distributions do for a git snapshot.

    A tree whose ``configure.ac`` is itself generated (from ``configure.ac.in`` by the
    project's ``autogen.sh``) is set up by that script, told not to configure (the
    ``NOCONFIGURE`` convention); one that configures anyway may fail there, which is fine
    once ``configure`` exists. Where plain ``autoreconf -fi`` fails, the script is tried too.

    Raises:
        ToolchainError: No ``configure.ac`` nor setup script, autoreconf missing or failing.
    """
    script = next((n for n in ("autogen.sh", "bootstrap.sh", "bootstrap") if (tree / n).is_file()), None)
    if not any((tree / n).is_file() for n in ("configure.ac", "configure.in")):
        if script is None:
            raise ToolchainError("no configure script")
        try:
            run_step(["sh", script], tree, dest / "autogen.log", {**env, "NOCONFIGURE": "1"}, script)
        except ToolchainError:
            if not (tree / "configure").is_file():
                raise
        return
    if not shutil.which("autoreconf"):
        raise ToolchainError("no configure script, and autoreconf (autoconf) is not installed")
    try:
        run_step(["autoreconf", "-fi"], tree, dest / "autoreconf.log", env, "autoreconf -fi")
    except ToolchainError as plain:
        # The project's own script knows the steps before autoreconf (a documentation
        # generator's makefile fragment stubbed out when its tool is missing).
        if script is None:
            raise
        try:
            run_step(["sh", script], tree, dest / "autogen.log", {**env, "NOCONFIGURE": "1"}, script)
        except ToolchainError:
            if not (tree / "configure").is_file():
                raise plain from None


def missing_sources(sources: list[Path], extra: list[str], dest: Path, env: dict[str, str],
                    tree: Path | None = None, objects: dict[Path, Path | None] | None = None) -> None:
    """Have make produce the library sources that ``make -n`` listed but the tree lacks.

    Some libraries compile a file the build generates (an amalgamation of all sources, a
    parser made by a generator): ``make -n`` only names it, so make is asked for those files
    alone, with the generated headers they depend on, not for the whole build. A suffix rule
    that writes the source and compiles it in one step (``.tcl.o:``) has no rule for the source
    alone; then make is asked for the objects ``objects`` says those sources compile to.
    """
    missing: dict[Path, list[str]] = {}
    for source in sources:
        if not source.exists():
            missing.setdefault(source.parent, []).append(source.name)
    for directory, names in missing.items():
        log = dest / "make-generate.log"
        try:
            run_step(["make", *extra, *names], directory, log, env, f"make {' '.join(names)}", tree)
        except ToolchainError:
            objs = [(objects or {}).get(directory / name) for name in names]
            if None in objs:
                raise
            targets = [os.path.relpath(o, directory) for o in objs if o]
            run_step(["make", *extra, *targets], directory, log, env, f"make {' '.join(targets)}", tree)


_QUOTED_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+\.h)"', re.M)


def absent_includes(source: Path, flags: list[str]) -> list[str]:
    """The headers ``source`` includes in quotes that neither its directory nor an ``-I`` has yet."""
    text = read_text(source)
    dirs = [source.parent] + [Path(f[2:]) if Path(f[2:]).is_absolute() else source.parent / f[2:]
                              for f in flags if f.startswith("-I") and len(f) > 2]
    return [n for n in dict.fromkeys(_QUOTED_INCLUDE.findall(text))
            if "/" not in n and not any((d / n).exists() for d in dirs)]


def generated_includes(compiles: list[tuple[Path, list[str]]], extra: list[str], dest: Path,
                       env: dict[str, str], tree: Path | None = None) -> None:
    """Have make produce the headers library sources include that no directory has yet.

    A Makefile can generate a header with a program of its own (a table of curve constants
    written by a helper built first) without listing it in ``BUILT_SOURCES``; ``make -n``
    only names the program's steps. Each such header is asked for in its source's directory,
    best effort: a name a conditional ``#include`` guards may have no rule, and the trial build
    decides whether detection worked.
    """
    wanted: dict[Path, list[str]] = {}
    for source, flags in compiles:
        for name in absent_includes(source, flags):
            if name not in wanted.setdefault(source.parent, []):
                wanted[source.parent].append(name)
    for directory, names in wanted.items():
        if not (directory / "Makefile").is_file():
            continue
        try:
            run_step(["make", "-k", *extra, *names], directory, dest / "make-headers.log", env,
                     f"make {' '.join(names[:5])}", tree)
        except ToolchainError:
            pass


def built_sources(directories: set[Path], extra: list[str], dest: Path, env: dict[str, str],
                  tree: Path | None = None) -> None:
    """Make each directory's automake ``BUILT_SOURCES`` (files the build makes before compiling).

    ``tree`` (the project root) is visible to make in a subdirectory: without it, make there
    finds no ``../aclocal.m4`` and tries to regenerate the build system, and the step fails.
    """
    for directory in sorted(directories):
        makefile = directory / "Makefile"
        if not makefile.is_file() or "BUILT_SOURCES" not in makefile.read_text(errors="replace"):
            continue
        # make prints a variable's value through a one-rule makefile read after the real one.
        printer = directory / _PRINT_MAKEFILE
        printer.write_text("logicfuzz-print-built:\n\t@echo LOGICFUZZ-BUILT: $(BUILT_SOURCES)\n")
        try:
            out = run_step(
                ["make", "-s", "-f", "Makefile", "-f", _PRINT_MAKEFILE, "logicfuzz-print-built"],
                directory, dest / "make-print.log", env, "make (listing BUILT_SOURCES)", tree,
            )  # fmt: skip
            lines = [ln.split()[1:] for ln in out.splitlines() if ln.startswith("LOGICFUZZ-BUILT:")]
            names = [n for line in lines for n in line]
            if names:
                run_step(
                    ["make", "-k", *extra, *names], directory, dest / "make-built.log", env,
                    f"make {' '.join(names[:5])}", tree,
                )  # fmt: skip
        except ToolchainError:
            # Best effort: a file the library does not need may fail to generate; the trial
            # build of the recipe is what decides whether detection worked.
            pass
        finally:
            printer.unlink(missing_ok=True)


def stand_in_libraries(dry_run: str, tree: Path) -> bool:
    """Create empty stand-ins for the libraries ``make -n`` found no rule for; any created.

    Only library files (``.la``/``.a``) inside the private tree are stood in for: they are
    prerequisites another directory's real build would have made, and nothing here links.
    """
    cwd, made = tree, False
    for line in dry_run.splitlines():
        entering = _ENTERING.match(line.strip())
        if entering:
            cwd = Path(entering[1])
            continue
        for target in _NO_RULE.findall(line):
            path = (cwd / target).resolve()
            if path.is_relative_to(tree) and not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                path.touch()
                made = True
    return made
