"""The ``cmake`` detector: configure once, then read the library targets from CMake's File API.

``compile_commands.json`` lists every compile command but not which target it belongs to
or whether that target is a library or a test program; CMake's File API (``codemodel-v2``,
CMake 3.14+) does: each target has a type (``STATIC_LIBRARY``, ``EXECUTABLE``...), its
sources, and per-language compile groups with defines and include directories. So the
library is the union of the C sources of every library target whose name is not a test,
example or fuzzer, with their defines and include directories (generated headers such as
``config.h`` live in the build directory, which is inside the private copy of the tree).
Headers that CMake generates only at build time (``add_custom_command``) are not produced.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from fuzzkit.detect_make import build_env, run_step
from fuzzkit.detect_tree import SKIP_DIRS
from fuzzkit.errors import ToolchainError
from fuzzkit.tools import tool

BUILD_DIR = ".logicfuzz-build"
_LIBRARY_TYPES = {"STATIC_LIBRARY", "SHARED_LIBRARY", "OBJECT_LIBRARY", "MODULE_LIBRARY"}
# Static, tests off, compile commands out: set on every configure, never a retry's choice.
FIXED_ARGS = ("-DBUILD_SHARED_LIBS=OFF", "-DCMAKE_BUILD_TYPE=Debug", "-DBUILD_TESTING=OFF",
              "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON")
_SKIP_TARGET = re.compile(r"(^|[_-])(tests?|examples?|fuzz\w*|bench\w*|demo|samples?)([_-]|$)", re.I)


def cmake_configure(tree: Path, extra: list[str], append: bool = False) -> Path:
    """Run CMake's configure step in ``tree`` (a private copy) and return the build dir.

    ``append``: add to the configure log (a second try, in the same build dir) instead of replacing it.

    Raises:
        ToolchainError: cmake is missing or the configure step fails.
    """
    build = tree / BUILD_DIR
    query = build / ".cmake" / "api" / "v1" / "query"
    query.mkdir(parents=True, exist_ok=True)
    (query / "codemodel-v2").touch()
    cmd = [
        "cmake", "-S", ".", "-B", BUILD_DIR, "-G", "Unix Makefiles",
        f"-DCMAKE_C_COMPILER={tool('clang')}", f"-DCMAKE_CXX_COMPILER={tool('clang++')}",
        *FIXED_ARGS, *extra,
    ]  # fmt: skip
    try:
        run_step(cmd, tree, tree.parent / "configure.log", build_env(), "cmake configure", append=append)
    except FileNotFoundError as exc:
        raise ToolchainError(
            "cmake is not installed", "install cmake, or write the `build:` section"
        ) from exc
    return build


def _load(reply: Path, name: str) -> Any:
    return json.loads((reply / name).read_text())


def library_targets(build: Path) -> list[dict[str, Any]]:
    """The File API objects of the library targets that are not tests, examples or fuzzers."""
    reply = build / ".cmake" / "api" / "v1" / "reply"
    indexes = sorted(reply.glob("index-*.json"))
    if not indexes:
        raise ToolchainError("CMake wrote no File API reply (CMake 3.14 or newer is needed)")
    codemodel = _load(reply, _load(reply, indexes[-1].name)["reply"]["codemodel-v2"]["jsonFile"])
    targets = []
    for entry in codemodel["configurations"][0]["targets"]:
        target = _load(reply, entry["jsonFile"])
        if target["type"] not in _LIBRARY_TYPES or _SKIP_TARGET.search(target["name"]):
            continue
        source_dir = Path(target.get("paths", {}).get("source", "."))
        if any(part.lower() in SKIP_DIRS for part in source_dir.parts):
            continue
        targets.append(target)
    if not targets:
        raise ToolchainError("the CMake project defines no library target")
    return targets


def cmake_compiles(tree: Path, targets: list[dict[str, Any]]) -> list[tuple[Path, list[str]]]:
    """(source, flags) for every C source of ``targets``; flags are ``-D``/``-I`` only."""
    found: dict[Path, list[str]] = {}
    for target in targets:
        groups = target.get("compileGroups", [])
        for source in target.get("sources", []):
            index = source.get("compileGroupIndex")
            # ASM: hand-written assembly the C sources call (a decoder's fast loop).
            if index is None or groups[index].get("language") not in ("C", "ASM"):
                continue
            group = groups[index]
            flags = [f"-D{d['define']}" for d in group.get("defines", [])]
            flags += [f"-I{Path(tree, i['path']).resolve()}" for i in group.get("includes", [])]
            found.setdefault(Path(tree, source["path"]).resolve(), flags)
    if not found:
        raise ToolchainError("the CMake library targets have no C sources")
    return sorted(found.items())


def generate_sources(tree: Path, build: Path, targets: list[dict[str, Any]],
                     compiles: list[tuple[Path, list[str]]]) -> None:
    """Have CMake make the sources its own steps generate (a parser from a grammar), if any.

    The File API lists a generated source before it exists; the library targets that have one
    are built, which runs their generating commands first.

    Raises:
        ToolchainError: The build of those targets failed (a generator missing, say).
    """
    missing = {str(source) for source, _ in compiles if not source.exists()}
    names = [t["name"] for t in targets
             if any(str(Path(tree, s["path"]).resolve()) in missing for s in t.get("sources", []))]
    if names:
        cmd = ["cmake", "--build", str(build), "-j", "2", "--target", *names]
        log = tree.parent / "cmake-generate.log"
        run_step(cmd, tree, log, build_env(), "cmake --build (generated sources)")
