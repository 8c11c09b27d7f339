"""Turning a build recipe's globs and header names into absolute files."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

from fuzzkit.errors import ToolchainError


def resolve_globs(root: Path, patterns: list[str], exclude: list[str], what: str) -> list[Path]:
    """Files under ``root`` matching any pattern and no exclude glob, sorted, deduplicated.

    Exclude globs are matched against the path relative to ``root`` (``*`` also crosses
    ``/``, so ``test*`` excludes ``test.c`` and ``tests/x.c``).

    Raises:
        ToolchainError: A pattern matches no file, or all files are excluded.
    """
    found: set[Path] = set()
    for pattern in patterns:
        if Path(pattern).is_absolute() or ".." in Path(pattern).parts:
            raise ToolchainError(
                f"`{what}` pattern {pattern!r} must be relative to the source root",
                "write recipe paths relative to the library's source directory",
            )
        matches = [p for p in root.glob(pattern) if p.is_file()]
        if not matches:
            raise ToolchainError(
                f"`{what}` pattern {pattern!r} matches no file under {root}",
                f"fix the glob in the benchmark YAML's `build:` section (files there: {_sample(root)})",
            )
        found.update(p.resolve() for p in matches)
    kept = sorted(
        p
        for p in found
        if not any(fnmatch.fnmatch(p.relative_to(root.resolve()).as_posix(), x) for x in exclude)
    )
    if patterns and not kept:
        raise ToolchainError(f"every `{what}` file is excluded by {exclude}", "narrow the `exclude` globs")
    return kept


def resolve_headers(root: Path, headers: list[str], include_dirs: list[str]) -> list[Path]:
    """Absolute paths of public headers, looked up in the root, then in each include dir.

    Raises:
        ToolchainError: A header is in none of those places.
    """
    resolved: list[Path] = []
    for name in headers:
        for base in (root, *map(Path, include_dirs)):
            candidate = (base / name).resolve()
            if candidate.is_file():
                resolved.append(candidate)
                break
        else:
            raise ToolchainError(
                f"header {name!r} is neither under {root} nor in the include dirs",
                "list public headers relative to the source root (e.g. include/acme.h)",
            )
    return resolved


# A quoted #include of a file that is not a header: a source compiled as part of another
# (`#include "impl.c"`), whose code the coverage report must count as the library's.
_INCLUDED_SOURCE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.MULTILINE)
_HEADER_SUFFIXES = {".h", ".hh", ".hpp", ".hxx"}


def included_sources(root: Path, sources: list[Path], include_dirs: list[str]) -> list[Path]:
    """Files under ``root`` that the sources ``#include`` but that are not headers, transitively.

    A library may compile one file that includes another implementation file (an encoding's
    tokenizer included once per encoding, a JIT matcher included by its compiler); llvm-cov
    reports that code under the included file's name, so coverage must list it too (even
    when the recipe excludes it from compiling on its own).
    """
    base = root.resolve()
    seen = set(sources)
    found: list[Path] = []
    todo = list(sources)
    while todo:
        src = todo.pop()
        try:
            text = src.read_text(errors="replace")
        except OSError:
            continue
        for name in _INCLUDED_SOURCE.findall(text):
            if Path(name).suffix.lower() in _HEADER_SUFFIXES:
                continue
            for d in (src.parent, *map(Path, include_dirs)):
                cand = (d / name).resolve()
                if cand.is_file():
                    break
            else:
                continue
            if cand in seen or not cand.is_relative_to(base):
                continue
            seen.add(cand)
            found.append(cand)
            todo.append(cand)
    return sorted(found)


def _sample(root: Path, limit: int = 12) -> str:
    names = sorted(p.name for p in root.iterdir())[:limit]
    return ", ".join(names) + (", ..." if len(names) == limit else "")
