"""The compile definitions a library's own build system gives one of its fuzz harnesses.

Some shipped harnesses build only with definitions their build system sets, sometimes one
build per value (``#ifndef FUZZ_VARIANT`` / ``#error``, and a CMake loop adding one fuzzer
executable per value). Rather than guess, configure the project with its fuzzer option on and
read CMake's File API (``codemodel-v2``): every target that compiles the harness is one
variant, with that target's definitions. Nothing here knows a particular library.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from fuzzkit.detect_cmake import BUILD_DIR, cmake_configure
from fuzzkit.errors import ToolchainError

_OPTION = re.compile(r"\bif\s*\(\s*(?:NOT\s+)?([A-Za-z][A-Za-z0-9_]*FUZZ[A-Za-z0-9_]*)\s*\)", re.I)
_PROJECT = re.compile(r"^\s*project\s*\(", re.I | re.M)


def cmake_root(harness: Path) -> Path | None:
    """The outermost directory above ``harness`` whose CMakeLists.txt declares a project."""
    found = None
    for parent in Path(harness).resolve().parents:
        lists = parent / "CMakeLists.txt"
        if lists.is_file() and _PROJECT.search(lists.read_text(errors="replace")):
            found = parent
    return found


def fuzz_options(root: Path) -> list[str]:
    """CMake switches named for fuzzing that the project tests (``if(PROJ_BUILD_FUZZERS)``).

    Switches naming a build (``BUILD``/``ENABLE``) come first.
    """
    names: list[str] = []
    for path in [root / "CMakeLists.txt", *sorted(root.rglob("*.cmake"))]:
        if path.is_file() and BUILD_DIR not in path.parts:
            names += _OPTION.findall(path.read_text(errors="replace"))
    unique = list(dict.fromkeys(names))
    return sorted(unique, key=lambda n: not re.search(r"BUILD|ENABLE", n, re.I))


def harness_variants(harness: Path, scratch: Path) -> list[tuple[str, list[str]]]:
    """(target name, ``-D`` flags) of every target of the build system that compiles ``harness``.

    The project is copied into ``scratch`` and configured with one fuzzing switch on at a
    time until a configuration has such targets. Empty when there is no CMake project, no
    switch, or no configuration compiles the harness.
    """
    root = cmake_root(harness)
    if root is None:
        return []
    relative = Path(harness).resolve().relative_to(root)
    for option in fuzz_options(root):
        tree = scratch / f"tree-{option}"
        if not tree.exists():
            shutil.copytree(root, tree, ignore=shutil.ignore_patterns(".git", BUILD_DIR))
        try:
            build = cmake_configure(tree, [f"-D{option}=ON"])
        except ToolchainError:
            continue
        found = _targets_compiling(build, tree, relative)
        if found:
            return found
    return []


def _targets_compiling(build: Path, tree: Path, relative: Path) -> list[tuple[str, list[str]]]:
    reply = build / ".cmake" / "api" / "v1" / "reply"
    indexes = sorted(reply.glob("index-*.json"))
    if not indexes:
        return []
    index = _load(reply / indexes[-1].name)
    codemodel = _load(reply / index["reply"]["codemodel-v2"]["jsonFile"])
    out = []
    for entry in codemodel["configurations"][0]["targets"]:
        target = _load(reply / entry["jsonFile"])
        groups = target.get("compileGroups", [])
        for source in target.get("sources", []):
            path = Path(tree, source["path"]).resolve()
            if path != (tree / relative).resolve() or source.get("compileGroupIndex") is None:
                continue
            group = groups[source["compileGroupIndex"]]
            out.append((target["name"], [f"-D{d['define']}" for d in group.get("defines", [])]))
    return out


def _load(path: Path) -> Any:
    return json.loads(path.read_text())
