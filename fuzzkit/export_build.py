"""An OSS-Fuzz / ClusterFuzzLite ``build.sh`` for a library build and a set of harnesses.

The script expects the library's source at ``$SRC/<project>`` and uses only the variables
those builders set: it compiles the recipe's sources with ``$CC $CFLAGS`` (``$CXX
$CXXFLAGS`` for C++) and the same ``-I``/``-D`` flags the run used, archives them, and links
each harness with ``$LIB_FUZZING_ENGINE`` into ``$OUT``, copying ``NAME.dict`` and
``NAME_seed_corpus.zip`` beside it. Paths of the build are written relative to the source
root, so the script works wherever the source is.

A detected build (CMake, configure) may compile a configured copy of the tree holding files
the source does not ship (``config.h``). :func:`generated_files` finds them (among the
sources, the public headers and the C files and headers directly in each include directory)
so the export can carry them; the script then builds from a copy of the source with them
laid over it.
"""

from __future__ import annotations

import filecmp
import re
import shlex
from collections.abc import Sequence
from pathlib import Path

from fuzzkit.detect_tree import project_dir
from fuzzkit.errors import ToolchainError
from fuzzkit.library import LibraryBuild

CXX_SUFFIXES = (".cc", ".cpp", ".cxx")
# What a source may #include from an include directory (a configure step leaves logs and
# Makefiles there too, which the build never reads).
_INCLUDED_SUFFIXES = {".h", ".hh", ".hpp", ".hxx", ".inc", ".inl", ".def", ".c", *CXX_SUFFIXES}
_SYSTEM_LIB = re.compile(r"^/(?:usr/)?lib\S*/lib(?P<name>[\w+.-]+?)\.(?:so(?:\.[\d.]+)?|a)$")
_HINT = ("export from a run whose library builds from its own source tree (a `build:` recipe "
         "with paths relative to the source root)")


def source_counterpart(lib: LibraryBuild, source_root: Path) -> Path:
    """The directory of the fetched source that the build's root is (a configured copy is of it).

    Detection configures a copy of the project's directory: the source root, or its one
    subdirectory holding the build files (:func:`fuzzkit.detect_tree.project_dir`).
    """
    source_root = Path(source_root).resolve()
    return source_root if Path(lib.root).resolve() == source_root else project_dir(source_root)


def generated_files(lib: LibraryBuild, source_root: Path) -> list[str]:
    """Paths (relative to the build root) of files the build reads that the source lacks or changes.

    ``source_root`` is the build root's counterpart in the source (:func:`source_counterpart`).
    Empty when the build compiles the source tree itself.
    """
    root, source_root = Path(lib.root).resolve(), Path(source_root).resolve()
    if root == source_root:
        return []
    candidates = [Path(p) for p in [*lib.sources, *lib.headers]]
    for directory in map(Path, lib.include_dirs):
        if directory.is_dir() and directory.resolve().is_relative_to(root):
            candidates += [p for p in directory.iterdir() if p.is_file() and p.suffix in _INCLUDED_SUFFIXES]
    found = []
    for path in dict.fromkeys(p.resolve() for p in candidates):
        if not path.is_relative_to(root):
            continue
        rel = path.relative_to(root)
        shipped = source_root / rel
        if not shipped.is_file() or not filecmp.cmp(path, shipped, shallow=False):
            found.append(str(rel))
    return sorted(found)


def _word(value: str, root: Path) -> str:
    """``value`` as one shell word, the build root (when it occurs) written as ``$LIB_SRC``."""
    before, sep, after = value.partition(str(root))
    if not sep:
        return shlex.quote(value)
    tail = after.lstrip("/")
    return (shlex.quote(before) if before else "") + '"$LIB_SRC"' + (shlex.quote("/" + tail) if tail else "")


def _relative(path: str, root: Path, what: str) -> str:
    resolved = Path(path).resolve()
    if not resolved.is_relative_to(root):
        raise ToolchainError(f"the build's {what} {path} is outside the library's source tree {root}", _HINT)
    return str(resolved.relative_to(root))


def compile_flags(lib: LibraryBuild) -> list[str]:
    """The ``-I``/``-D``/recipe flags of the build, as shell words relative to ``$LIB_SRC``.

    Raises:
        ToolchainError: An include directory lies outside the build root (and outside ``/usr``).
    """
    root = Path(lib.root).resolve()
    flags = []
    for directory in lib.include_dirs:
        if Path(directory).resolve().is_relative_to("/usr"):
            flags.append(shlex.quote(f"-I{directory}"))
            continue
        rel = _relative(directory, root, "include directory")
        flags.append('-I"$LIB_SRC"' + (shlex.quote("/" + rel) if rel != "." else ""))
    flags += [shlex.quote(f"-D{d}") for d in lib.defines]
    return flags + [_word(f, root) for f in lib.cflags]


def link_flags(lib: LibraryBuild) -> list[str]:
    """The build's link flags as shell words: a system library file becomes ``-lNAME``; then ``-lm``."""
    root = Path(lib.root).resolve()
    words = []
    for flag in lib.ldflags:
        system = _SYSTEM_LIB.match(flag)
        words.append(shlex.quote(f"-l{system['name']}") if system else _word(flag, root))
    return [*dict.fromkeys(words), "-lm"]


def build_script(lib: LibraryBuild, project: str, harnesses: Sequence[str], generated: bool,
                 note: str = "", subdir: str = ".") -> str:
    """The ``build.sh`` text for ``harnesses`` (file names beside the script, e.g. ``x_fuzzer.c``).

    ``generated``: the export carries a ``generated/`` folder to lay over a copy of the source.
    ``note``: comment lines saying where the script comes from. ``subdir``: the build root's
    place in ``$SRC/<project>`` (a project kept in a subdirectory of its source).

    Raises:
        ToolchainError: A source or include directory lies outside the build root.
    """
    root = Path(lib.root).resolve()
    sources = [_relative(s, root, "source") for s in lib.sources]
    cxx = any(s.endswith(CXX_SUFFIXES) for s in [*sources, *harnesses])
    lines = ["#!/bin/bash -eu", "set -eu  # also when run as `bash build.sh`",
             *(f"# {n}" for n in note.splitlines()),
             f"# Expects the library's source at $SRC/{project}; builds each harness into $OUT.",
             ': "${SRC:?set SRC to the directory holding ' + project + '/}"',
             ': "${OUT:?set OUT to the directory for the fuzzers}"',
             ': "${CC:?set CC (clang)}" "${CFLAGS?set CFLAGS}"',
             ': "${LIB_FUZZING_ENGINE:?set LIB_FUZZING_ENGINE (-fsanitize=fuzzer for libFuzzer)}"',
             ': "${CXX:=clang++}" "${CXXFLAGS:=$CFLAGS}" "${AR:=ar}"',
             'HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"',
             'if [ -z "${WORK:-}" ]; then WORK="$(mktemp -d)"; fi',
             f'BUILD="$WORK/logicfuzz-{project}"',
             'rm -rf "$BUILD" && mkdir -p "$BUILD/obj" "$OUT"',
             f'LIB_SRC="$SRC/{project}"' + (f"/{shlex.quote(subdir)}" if subdir != "." else "")]
    if generated:
        lines += ["# Files the library's configure step generated, laid over a copy of the source.",
                  'mkdir -p "$BUILD/src" && cp -a "$LIB_SRC/." "$BUILD/src/"',
                  'cp -a "$HERE/generated/." "$BUILD/src/"', 'LIB_SRC="$BUILD/src"']
    lines += ["FLAGS=(", *(f"  {f}" for f in compile_flags(lib)), ")",
              "LIBS=(" + " ".join(link_flags(lib)) + ")",
              "SOURCES=(", *(f"  {shlex.quote(s)}" for s in sources), ")"]
    lines += _BODY.format(project=project, link="$CXX $CXXFLAGS" if cxx else "$CC $CFLAGS",
                          harnesses=" ".join(shlex.quote(h) for h in harnesses)).splitlines()
    return "\n".join(lines) + "\n"


_BODY = """\
objects=()
for src in "${{SOURCES[@]}}"; do
  obj="$BUILD/obj/${{src//\\//__}}.o"
  case "$src" in
    *.cc|*.cpp|*.cxx) $CXX $CXXFLAGS "${{FLAGS[@]}}" -c "$LIB_SRC/$src" -o "$obj" ;;
    *) $CC $CFLAGS "${{FLAGS[@]}}" -c "$LIB_SRC/$src" -o "$obj" ;;
  esac
  objects+=("$obj")
done
"$AR" rcs "$BUILD/lib{project}.a" "${{objects[@]}}"
for harness in {harnesses}; do
  name="${{harness%.*}}"
  case "$harness" in
    *.cc|*.cpp|*.cxx) $CXX $CXXFLAGS "${{FLAGS[@]}}" -c "$HERE/$harness" -o "$BUILD/$name.o" ;;
    *) $CC $CFLAGS "${{FLAGS[@]}}" -c "$HERE/$harness" -o "$BUILD/$name.o" ;;
  esac
  {link} "$BUILD/$name.o" -o "$OUT/$name" $LIB_FUZZING_ENGINE "$BUILD/lib{project}.a" "${{LIBS[@]}}"
  if [ -f "$HERE/$name.dict" ]; then cp "$HERE/$name.dict" "$OUT/"; fi
  if [ -f "$HERE/${{name}}_seed_corpus.zip" ]; then cp "$HERE/${{name}}_seed_corpus.zip" "$OUT/"; fi
done
"""
