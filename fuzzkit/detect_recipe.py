"""Turning what a detector found into a :class:`~fuzzkit.library.BuildRecipe`."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from fuzzkit.detect_include_order import include_order
from fuzzkit.detect_tree import INCLUDE, PRIVATE_NAME, public_headers, read_text
from fuzzkit.errors import ToolchainError
from fuzzkit.headers import parse_header
from fuzzkit.library import BuildRecipe

HINT = (
    "write the benchmark YAML's `build:` section by hand, e.g. `build: {sources: [src/*.c], "
    "include_dirs: [include], defines: [HAVE_CONFIG_H], headers: [include/foo.h]}`, or pick a "
    "system with `build: {system: cmake}` and pass options with `configure_args`"
)


def fingerprint(root: Path) -> str:
    """A digest of the tree's file names, sizes and times (changes when any file does)."""
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        for name in sorted(filenames):
            path = Path(dirpath, name)
            try:
                stat = path.lstat()
            except OSError:
                continue
            digest.update(f"{path.relative_to(root)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def with_api_headers(tree: Path, recipe: BuildRecipe, extra_roots: list[Path]) -> BuildRecipe:
    """Keep public headers declaring functions the sources define; add their include dirs."""
    candidates = [tree / h for h in recipe.headers] or public_headers(
        tree, extra_roots, [tree / d for d in recipe.include_dirs])
    incs = [str((tree / d).resolve()) for d in recipe.include_dirs]
    incs = list(dict.fromkeys([*incs, *(str(h.parent) for h in candidates)]))
    code = "\n".join(read_text(p) for g in recipe.sources for p in tree.glob(g))
    defined = set(re.findall(r"\b(\w+)\s*\(", code))
    # A header of an optional part that is not built (a utilities header without its .c) is
    # left out, or harnesses would call functions the library does not have.
    useful, parsed = [], []
    for header in candidates:
        try:
            names = declared_names(header, incs, recipe.defines)
        except ToolchainError:
            continue  # a platform-only or private header: one of them must not sink detection
        parsed.append(header)
        if names & defined:
            useful.append(header)
    chosen = useful or parsed or candidates
    if not chosen:
        raise ToolchainError(f"no public header found under {tree}", HINT)
    chosen = include_order([*umbrellas(chosen), *chosen], incs, recipe.defines)
    include_dirs = list(recipe.include_dirs)
    for header in chosen:
        rel = _rel(tree, header.parent)
        if rel not in include_dirs and str(header.parent) not in include_dirs:
            include_dirs.append(rel)
    return recipe.model_copy(
        update={"headers": [_rel(tree, h) for h in chosen], "include_dirs": include_dirs}
    )


def umbrellas(chosen: list[Path]) -> list[Path]:
    """Headers beside ``chosen`` that include two or more of them (an umbrella).

    A library whose parts need each other's types (``lib_hash.h`` uses ``lib_cipher.h``'s) is
    meant to be included through its umbrella (``lib.h``); without it the parts do not compile.
    """
    names = {h.name for h in chosen}

    def parts_of(header: Path) -> set[str]:
        return names & {Path(i).name for i in INCLUDE.findall(read_text(header))} - {header.name}

    if any(len(parts_of(h)) >= 2 for h in chosen):
        return []  # the library's own umbrella is among them; the others (`common.h`) are internals
    beside = sorted({h for d in {c.parent for c in chosen} for h in d.glob("*.h")} - set(chosen))
    found = {h: n for h in beside if not PRIVATE_NAME.search(h.stem) and (n := len(parts_of(h))) >= 2}
    # The one including the most parts: internals (`common.h`) include a few parts each too.
    most = max(found.values(), default=0)
    return [h for h, n in found.items() if n == most]


# `#define foo_parse PREFIX_SUFFIX(foo_parse_)`: the header renames a function with a macro
# (per code-unit width or ABI), so the sources spell the short name and define the long one.
_RENAMED = re.compile(r"^\s*#\s*define\s+(\w+)\s+\w+\s*\(\s*\w+\s*\)\s*$", re.M)


def declared_names(header: Path, include_dirs: list[str], defines: list[str]) -> set[str]:
    """Functions ``header`` declares, under their compiled names and their macro-renamed ones.

    Raises:
        ToolchainError: The header cannot be parsed.
    """
    names = {d.name for d in parse_header(header, include_dirs, defines)}
    return names | set(_RENAMED.findall(read_text(header))) if names else names


def _rel(tree: Path, path: Path) -> str:
    path = path.resolve()
    return (
        path.relative_to(tree.resolve()).as_posix() or "."
        if path.is_relative_to(tree.resolve())
        else str(path)
    )


def from_compiles(tree: Path, compiles: list[tuple[Path, list[str]]], build_dir: Path | None) -> BuildRecipe:
    """A recipe for a configured ``tree`` from (source, ``-D``/``-I``/other flags) pairs."""
    defines: dict[str, str] = {}
    incs: list[str] = ["."]
    cflags: list[str] = []
    for _, flags in compiles:
        it = iter(flags)
        for flag in it:
            if flag.startswith("-D"):
                defines.setdefault(flag[2:].split("=")[0], flag[2:])
            elif flag.startswith("-I"):
                rel = _rel(tree, Path(flag[2:]))
                incs += [rel] if rel not in incs else []
            elif flag == "-include":
                cflags += ["-include", next(it, "")]
            elif flag not in cflags:
                cflags.append(flag)
    outside = [str(s) for s, _ in compiles if not s.resolve().is_relative_to(tree.resolve())]
    if outside:
        raise ToolchainError(f"library sources outside the source tree: {outside[:3]}", HINT)
    recipe = BuildRecipe(
        sources=[_rel(tree, s) for s, _ in compiles], include_dirs=incs, defines=list(defines.values()),
        cflags=cflags, root=str(tree),
    )  # fmt: skip
    return with_api_headers(tree, recipe, [build_dir] if build_dir else [])
