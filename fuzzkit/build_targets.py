"""The targets a library's own build files declare, read from their text (no configure).

Used to build a library's own fuzz harnesses the way its build does: which other sources a
fuzz target compiles (a shared driver or helper), with which include directories and
definitions, and which in-tree libraries it links. Two forms are read:

- automake ``Makefile.am``: ``X_SOURCES``, ``AM_CPPFLAGS``/``X_CPPFLAGS`` (and ``CFLAGS``/
  ``CXXFLAGS``), ``LDADD``/``X_LDADD``/``X_LIBADD`` naming ``.la``/``.a`` files; conditionals
  are read as if every branch were taken (``+=`` appends, a later ``=`` wins);
- ``CMakeLists.txt``: ``add_executable``/``add_library``, ``target_sources``,
  ``target_include_directories``, ``target_compile_definitions``, ``target_link_libraries``,
  with ``set``/``list(APPEND)`` variables and ``foreach`` loops unrolled.

What a regular expression over the text cannot see (variables set in a parent file,
generator expressions, configure substitutions) is left out, never guessed.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from fuzzkit.detect_tree import read_text

_SKIPPED_PARTS = frozenset({".git", ".pc", "debian"})
_AUTOMAKE_VAR = re.compile(r"\$[({](\w+)[)}]")
_CMAKE_VAR = re.compile(r"\$\{(\w+)\}")
_CMAKE_COMMAND = re.compile(r"\b([A-Za-z_]\w*)\s*\(((?:[^()\"]|\"[^\"]*\"|\((?:[^()]|\([^()]*\))*\))*)\)",
                            re.S)
_CMAKE_KEYWORDS = frozenset("""PRIVATE PUBLIC INTERFACE STATIC SHARED OBJECT MODULE SYSTEM BEFORE AFTER
    EXCLUDE_FROM_ALL WIN32 MACOSX_BUNDLE IMPORTED GLOBAL ALIAS""".split())


@dataclass
class BuildTarget:
    """One program or library a build file declares."""

    name: str
    kind: str  # "program" or "library"
    sources: list[Path] = field(default_factory=list)
    include_dirs: list[Path] = field(default_factory=list)
    defines: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)  # CMake target names, or paths of .la/.a files


def build_files(tree: Path) -> list[Path]:
    """Every ``Makefile.am`` and ``CMakeLists.txt`` of the tree (not Debian's, nor patch copies)."""
    found = []
    for name in ("Makefile.am", "CMakeLists.txt"):
        for path in sorted(tree.rglob(name)):
            rel = path.relative_to(tree).parts
            if not any(p in _SKIPPED_PARTS or p.startswith(".logicfuzz") for p in rel):
                found.append(path)
    return found


def read_targets(path: Path, top: Path) -> list[BuildTarget]:
    """The targets one build file declares (paths absolute)."""
    return automake_targets(path, top) if path.name == "Makefile.am" else cmake_targets(path, top)


# --- automake -------------------------------------------------------------------------------


def canonical(name: str) -> str:
    """Automake's canonical form of a program or library name (``libFLAC++.la`` -> ``libFLAC___la``)."""
    return re.sub(r"[^A-Za-z0-9_@]", "_", name)


def _automake_variables(text: str) -> dict[str, str]:
    joined = re.sub(r"\\\n", " ", text)
    found: dict[str, str] = {}
    for line in joined.splitlines():
        line = line.split("#", 1)[0]
        match = re.match(r"^\s*([A-Za-z_]\w*)\s*(\+?)=\s*(.*)$", line)
        if match:
            name, plus, value = match.groups()
            found[name] = f"{found.get(name, '')} {value}" if plus else value
    return found


def _automake_words(value: str, variables: dict[str, str], builtins: dict[str, str]) -> list[str]:
    for _ in range(6):
        value = _AUTOMAKE_VAR.sub(lambda m: variables.get(m.group(1), builtins.get(m.group(1), "")), value)
    return re.sub(r"@\w+@", " ", value).split()


def automake_targets(path: Path, top: Path) -> list[BuildTarget]:
    """Programs and libraries of one ``Makefile.am``; ``top`` is the tree's top directory."""
    here = path.parent
    variables = _automake_variables(read_text(path))
    up = Path(*([".."] * len(here.relative_to(top).parts))).as_posix() if here != top else "."
    builtins = {"srcdir": ".", "builddir": ".", "top_srcdir": up, "top_builddir": up,
                "abs_top_srcdir": str(top), "abs_top_builddir": str(top), "abs_srcdir": str(here)}
    libraries = {canonical(w) for key, value in variables.items()
                 if key.endswith(("_LIBRARIES", "_LTLIBRARIES"))
                 for w in _automake_words(value, variables, builtins)}

    def words(name: str) -> list[str]:
        return _automake_words(variables.get(name, ""), variables, builtins)

    targets = []
    for key in variables:
        if not key.endswith("_SOURCES") or key.startswith(("EXTRA_", "nodist_", "dist_")):
            continue
        prefix = key[: -len("_SOURCES")]
        target = BuildTarget(prefix, "library" if prefix in libraries or prefix.endswith(("_la", "_a"))
                             else "program")
        target.sources = [(here / w).resolve() for w in words(key)]
        flags = [w for v in ("AM_CPPFLAGS", "AM_CFLAGS", "AM_CXXFLAGS") for w in words(v)]
        flags += [w for v in ("CPPFLAGS", "CFLAGS", "CXXFLAGS") for w in words(f"{prefix}_{v}")]
        _take_flags(_joined_flags(flags), here, target)
        links = words(f"{prefix}_LDADD") or words("LDADD")
        target.links = [str((here / w).resolve()) for w in links + words(f"{prefix}_LIBADD")
                        if w.endswith((".la", ".a")) and not w.startswith("-")]
        targets.append(target)
    return targets


def _joined_flags(words: list[str]) -> list[str]:
    """``-I dir`` written as two words joined into ``-Idir``."""
    out: list[str] = []
    for word in words:
        if out and out[-1] in ("-I", "-D", "-isystem"):
            out[-1] = ("-I" if out[-1] == "-isystem" else out[-1]) + word
        else:
            out.append(word)
    return out


def _take_flags(flags: list[str], here: Path, target: BuildTarget) -> None:
    for flag in flags:
        if flag.startswith("-I") and len(flag) > 2:
            target.include_dirs.append((here / flag[2:]).resolve())
        elif flag.startswith("-D") and len(flag) > 2:
            target.defines.append(flag[2:])


def owning_library(archive: Path, top: Path) -> BuildTarget | None:
    """The automake library target that makes ``archive`` (a ``.la``/``.a`` path), if declared.

    It is declared in the ``Makefile.am`` of the archive's directory or of one above it,
    under the canonical form of its path from there (``sub/libx.la`` -> ``sub_libx_la``).
    """
    for directory in [archive.parent, *archive.parent.parents]:
        makefile = directory / "Makefile.am"
        if makefile.is_file():
            name = canonical(archive.relative_to(directory).as_posix())
            for target in automake_targets(makefile, top):
                if target.name == name:
                    return target
        if directory == top or top not in directory.parents:
            break
    return None


# --- CMake ----------------------------------------------------------------------------------


def _cmake_args(text: str, variables: dict[str, list[str]]) -> list[str]:
    while "$<" in text:  # generator expressions (nested ones too): only known at build time
        text, count = re.subn(r"\$<[^<>]*>", " ", text)
        if not count:
            break
    try:
        words = shlex.split(text, comments=False, posix=True)
    except ValueError:
        words = text.split()
    out: list[str] = []
    for word in words:
        whole = re.fullmatch(r"\$\{(\w+)\}", word)
        if whole:
            out += variables.get(whole.group(1), [])
        else:
            out.append(_CMAKE_VAR.sub(lambda m: " ".join(variables.get(m.group(1), [])), word))
    return [w for w in out if w]


def _cmake_commands(text: str) -> list[tuple[str, str]]:
    text = re.sub(r"(?m)#(?!\[).*$", "", text)
    return [(m.group(1).lower(), m.group(2)) for m in _CMAKE_COMMAND.finditer(text)]


def cmake_targets(path: Path, top: Path) -> list[BuildTarget]:
    """Programs and libraries of one ``CMakeLists.txt`` (variables of parent files unknown)."""
    here = path.parent
    variables: dict[str, list[str]] = {
        "CMAKE_CURRENT_SOURCE_DIR": [str(here)], "CMAKE_CURRENT_LIST_DIR": [str(here)],
        "CMAKE_SOURCE_DIR": [str(top)], "PROJECT_SOURCE_DIR": [str(top)],
        "CMAKE_CURRENT_BINARY_DIR": [str(here)], "CMAKE_BINARY_DIR": [str(top)]}
    targets: dict[str, BuildTarget] = {}
    _cmake_run(_cmake_commands(read_text(path)), variables, targets, here)
    return list(targets.values())


def _cmake_run(commands: list[tuple[str, str]], variables: dict[str, list[str]],
               targets: dict[str, BuildTarget], here: Path) -> None:
    i = 0
    while i < len(commands):
        name, raw = commands[i]
        if name == "foreach":
            depth, j = 1, i + 1
            while j < len(commands) and depth:
                depth += {"foreach": 1, "endforeach": -1}.get(commands[j][0], 0)
                j += 1
            args = _cmake_args(raw, variables)
            for item in _foreach_items(args, variables):
                _cmake_run(commands[i + 1 : j - 1], {**variables, args[0]: [item]}, targets, here)
            i = j
            continue
        _cmake_command(name, _cmake_args(raw, variables), variables, targets, here)
        i += 1


def _foreach_items(args: list[str], variables: dict[str, list[str]]) -> list[str]:
    if len(args) > 1 and args[1] == "IN":
        items: list[str] = []
        mode = ""
        for word in args[2:]:
            if word in ("LISTS", "ITEMS"):
                mode = word
            else:
                items += variables.get(word, []) if mode == "LISTS" else [word]
        return items
    if len(args) > 1 and args[1] == "RANGE":
        return []
    return [w for a in args[1:] for w in a.split(";")]


def _cmake_command(name: str, args: list[str], variables: dict[str, list[str]],
                   targets: dict[str, BuildTarget], here: Path) -> None:
    if not args:
        return
    values = [a for a in args[1:] if a not in _CMAKE_KEYWORDS]
    if name == "set":
        variables[args[0]] = [w for a in args[1:] if a not in ("CACHE", "PARENT_SCOPE") for w in a.split(";")]
    elif name == "list" and len(args) > 2 and args[0] == "APPEND":
        variables[args[1]] = variables.get(args[1], []) + args[2:]
    elif name in ("add_executable", "add_library") and "ALIAS" not in args and "IMPORTED" not in args:
        kind = "program" if name == "add_executable" else "library"
        target = targets.setdefault(args[0], BuildTarget(args[0], kind))
        target.sources += [(here / v).resolve() for v in values]
    elif args[0] in targets:
        target = targets[args[0]]
        if name == "target_sources":
            target.sources += [(here / v).resolve() for v in values]
        elif name == "target_include_directories":
            target.include_dirs += [(here / v).resolve() for v in values]
        elif name == "target_compile_definitions":
            target.defines += [v.removeprefix("-D") for v in values]
        elif name == "target_link_libraries":
            target.links += values
