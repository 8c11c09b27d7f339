"""How to build one of a library's own fuzz harnesses the way the library's build does.

The library is always the build LogicFuzz made (:class:`fuzzkit.library.LibraryBuild`); what
the library's build files add for a fuzz target (:mod:`fuzzkit.build_targets`) is:

- the other sources the target compiles, such as a driver or helper shared by several
  harnesses (a file defining ``main``, a stand-alone driver replacing libFuzzer's, is left
  out, and so is another harness);
- its include directories and definitions (``-I$(top_srcdir)/fuzz`` for ``<fuzz/util.h>``);
- the in-tree libraries it links that LogicFuzz's build does not hold, compiled from their
  sources with their own include directories: a C++ wrapper library, a test-support library.
  A linked library with any source in LogicFuzz's build is that build, never compiled twice.

A harness no build file declares (one built by a script) may still need such a companion:
:func:`defining_sources` finds the library-side sources that define the symbols a failed
link names (``undefined reference to 'acme_stream_open(...)'``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from fuzzkit.build_targets import BuildTarget, build_files, owning_library, read_targets
from fuzzkit.detect_tree import read_text

_SOURCES = (".c", ".cc", ".cpp", ".cxx")
_MAIN = re.compile(r"\bmain\s*\([^;{)]*\)\s*\{")
_FUZZ_ENTRY = re.compile(r"LLVMFuzzerTestOneInput\s*\([^;{)]*\)\s*\{")
_UNDEFINED = re.compile(r"undefined reference to [`'‘]([^'’]+)['’]")


@dataclass
class HarnessPlan:
    """What a harness's build target adds to LogicFuzz's own harness build."""

    target: str
    helpers: list[Path] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)


def _compilable(path: Path) -> bool:
    """A source to compile into a harness: not a header, not a ``main``, not another harness."""
    if path.suffix not in _SOURCES or not path.is_file():
        return False
    text = read_text(path)
    return not _MAIN.search(text) and not _FUZZ_ENTRY.search(text)


def _in_library(target: BuildTarget, library_sources: set[Path]) -> bool:
    return any(s in library_sources for s in target.sources)


def harness_plans(harness: Path, tree: Path, library_sources: list[str]) -> list[HarnessPlan]:
    """The plan of each program target of ``tree``'s build files that compiles ``harness``.

    Several targets may compile one harness, each with its own definitions (one per input
    encoding); none is an empty list.

    Args:
        harness: The harness, as a path inside ``tree``.
        tree: The library's source tree (the one LogicFuzz's build compiled).
        library_sources: The sources of LogicFuzz's library build.
    """
    harness = harness.resolve()
    declared = [t for f in build_files(tree) for t in read_targets(f, tree)]
    by_name = {t.name: t for t in declared if t.kind == "library"}
    in_library = {Path(s).resolve() for s in library_sources}
    plans = []
    for program in (t for t in declared if t.kind == "program" and harness in t.sources):
        plan = HarnessPlan(program.name)
        _add(plan, program, harness)
        seen: set[str] = set()
        pending = list(program.links)
        while pending:
            link = pending.pop(0)
            if link in seen:
                continue
            seen.add(link)
            archive = link.endswith((".la", ".a"))
            library = by_name.get(link) or (owning_library(Path(link), tree) if archive else None)
            if library is None or _in_library(library, in_library):
                continue
            _add(plan, library, harness)
            pending += library.links
        plans.append(plan)
    return plans


def _add(plan: HarnessPlan, target: BuildTarget, harness: Path) -> None:
    for source in target.sources:
        if source != harness and source not in plan.helpers and _compilable(source):
            plan.helpers.append(source)
    for directory in target.include_dirs:
        flag = f"-I{directory}"
        if directory.is_dir() and flag not in plan.flags:
            plan.flags.append(flag)
    for define in target.defines:
        if f"-D{define}" not in plan.flags:
            plan.flags.append(f"-D{define}")


def undefined_symbols(log: str) -> list[str]:
    """The symbols a failed link names as undefined (C++ ones demangled, as the linker prints them)."""
    return list(dict.fromkeys(_UNDEFINED.findall(log)))


def _definition_pattern(symbol: str) -> re.Pattern[str]:
    """A definition of ``symbol`` in source text: ``name(...) {`` (C++: ``Class::name(...)``)."""
    name = symbol.split("(", 1)[0].strip()
    parts = [p for p in name.split("::") if p]
    if not parts:
        return re.compile(r"(?!)")
    qualified = r"\s*::\s*".join(re.escape(p) for p in parts[-2:])
    return re.compile(rf"(?<![\w:]){qualified}\s*\([^;{{}}]*\)\s*(?:const\s*)?(?:noexcept\s*)?[{{:]")


def defining_sources(symbols: list[str], directories: list[Path], exclude: set[Path]) -> list[Path]:
    """Sources in ``directories`` (not below them) defining one of ``symbols``, minus ``exclude``.

    ``directories`` are the library's own source directories: a companion there (a C++
    wrapper beside the C sources) is library code the harness's build script links.
    """
    patterns = [_definition_pattern(s) for s in symbols]
    found = []
    for directory in dict.fromkeys(directories):
        for path in sorted(directory.glob("*")):
            if path.resolve() in exclude or not _compilable(path):
                continue
            text = read_text(path)
            if any(p.search(text) for p in patterns):
                found.append(path.resolve())
    return found
