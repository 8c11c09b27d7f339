"""Build recipes detected from a library's source tree, and the benchmark YAML's ``build:``.

The ``build:`` section takes one of these forms::

    build: {sources: [acme.c], headers: [acme.h]}   # explicit: no detection at all
    # (no build section)  or  build: {auto: true}      # detect everything
    build: {system: cmake, configure_args: [-DJANSSON_WITHOUT_TESTS=ON]}   # pick the system
    build: {auto: true, exclude: [src/win32_*.c], defines: [NDEBUG], headers: [include/x.h]}

An explicit recipe (``sources`` given, neither ``auto`` nor ``system``) is used as written
(:class:`fuzzkit.library.BuildRecipe`); if it lists no ``headers``, the public headers are
found as detection finds them. Otherwise the recipe is detected and the fields given
override it: ``sources``, ``include_dirs``, ``headers`` and ``coverage_sources`` replace
the detected lists, while ``defines``, ``cflags``, ``ldflags`` and ``exclude`` are added.
Paths stay relative to the source root (a configured copy has the same layout).

Detectors (``system``), tried in this order for ``auto``:

1. ``sources``: the ``.c`` files at the top and in ``src/``, ``lib/``... compiled directly,
   with ``-D`` macros read from ``configure.ac``/``CMakeLists.txt`` if needed
   (:mod:`fuzzkit.detect_sources`): no configure step, cheapest, and an explicit list.
   Two files defining one symbol (alternative implementations) make it give way.
2. ``cmake``: configure with clang, static, tests off; library targets from CMake's File
   API (:mod:`fuzzkit.detect_cmake`).
3. ``autotools``: ``./configure --disable-shared ...`` (the options its ``--help`` lists)
   with ``CC=clang``, then ``make -n`` (:mod:`fuzzkit.detect_make`); also hand-written
   ``configure`` scripts, and ``autoreconf`` first when only ``configure.ac`` is shipped.
   Files make generates before compiling are made (:mod:`fuzzkit.detect_generate`).
   ``configure_args`` go to ``./configure`` (or to ``cmake`` for the ``cmake`` system).
4. ``make``: a plain Makefile, read through ``make -n CC=clang``; ``configure_args`` are
   extra make arguments (variables such as ``USE_FOO=1``, or targets).

When ``./configure`` or CMake stops on something missing, it is run once more with the option
its ``--help`` (or the CMake cache and ``option()`` list) names for it (:mod:`fuzzkit.detect_options`);
the detection's ``added_args`` and notes say which, and init-benchmark writes it into ``configure_args``.

Configure steps run sandboxed (no network, writes confined) in a private copy of the tree
in the cache, never in the shared source tree: some CMake projects rename files in
their source directory, and autotools writes ``config.h`` next to the sources. The result
is cached per (source tree contents, system, options, clang version) under a file lock, so
concurrent runs configure once. Tests, examples, fuzzers and tools are excluded. For
``auto``, a detector's recipe is kept only once the library builds from it (a guessed
recipe can detect fine and still not compile); otherwise the next detector is tried.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from fuzzkit.detect_make import BUILD_CAUSE
from fuzzkit.detect_recipe import HINT, fingerprint, with_api_headers
from fuzzkit.detect_run import Detection, run_detector
from fuzzkit.detect_tree import walk
from fuzzkit.errors import ToolchainError
from fuzzkit.library import BuildRecipe, LibraryBuild, LinkError, build_library, check_links
from fuzzkit.paths import cache_dir, file_lock
from fuzzkit.source import SourceSpec, fetch_source
from fuzzkit.tools import clang_version

System = Literal["auto", "sources", "cmake", "autotools", "make"]
_ORDER: tuple[System, ...] = ("sources", "cmake", "autotools", "make")
_SCHEME = "6"  # 2: builds; 3: stand-in libraries; 4: no test helper libs; 5: links; 6: system libs


@functools.cache
def _code() -> str:
    """A hash of the detectors' own code, part of the cache key.

    A detection made by an older LogicFuzz (a fix forgotten in ``_SCHEME``) is then not
    reused after an upgrade.
    """
    files = sorted(Path(__file__).parent.glob("detect*.py"))
    return hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()[:12]


class BuildSpec(BaseModel):
    """The benchmark YAML's ``build:`` section (see the module docstring for its forms)."""

    model_config = ConfigDict(extra="forbid")

    auto: bool = False
    system: System | None = None
    configure_args: list[str] = []
    sources: list[str] | None = None
    include_dirs: list[str] | None = None
    headers: list[str] | None = None
    coverage_sources: list[str] | None = None
    defines: list[str] = []
    cflags: list[str] = []
    ldflags: list[str] = []
    exclude: list[str] = []

    def is_explicit(self) -> bool:
        """Whether the section is a complete recipe that skips detection."""
        return self.sources is not None and not self.auto and self.system is None


_MISSING = re.compile(r"Could NOT find|No package '[^']+' found|Package '[^']+'.* not found|"
                      r"configure: error: .*(?:not found|missing|required|cannot find)", re.I)
DEPENDENCY_HINT = ("a build dependency is missing: install the -dev package the error names, or, for a "
                   "Debian source package, all of them with `apt-get build-dep PACKAGE`; then run again")


def _first_lines(message: str, keep: int = 3) -> str:
    """A failed detector's reason, short enough to list beside the others.

    The first line says what failed; then the build tool's own error, where one is printed
    (the ``Could NOT find ...`` of a CMake error block), else its last words.
    """
    lines = message.strip().splitlines()
    cause = next((i for i, line in enumerate(lines[1:], 1) if BUILD_CAUSE.search(line)), None)
    if cause is not None:
        start = cause + 1 if lines[cause].lstrip().startswith("CMake Error at") else cause
        shown = [lines[0], "...", *lines[start:start + keep]]
    else:
        shown = lines if len(lines) <= keep + 1 else [lines[0], "...", *lines[-keep:]]
    return "\n    ".join(shown)


def _size(base: Path, sources: list[str]) -> int:
    """Bytes of source (a file count would weigh an amalgamation like a one-line stub)."""
    return sum((base / s).stat().st_size if (base / s).is_file() else 1 for s in sources)


def _linking(root: Path, found: Detection, work: Path, cache: Path | None) -> Detection:
    """``found`` once its library links; a few files needing an absent library are left out.

    An optional part (an image codec's PNG writer, a tool helper) may need a library this
    machine lacks; when such files are a small minority of the source (by size), the rest is the
    library. A source list that misses the files defining its own helpers fails instead.
    """
    current = found
    for _ in range(4):  # what uses a left-out file's symbols goes too
        try:
            check_links(build_library(root, current.recipe, cache=cache), work)
            return current
        except LinkError as exc:
            sources = current.recipe.sources
            drop = [s for s in sources if any(Path(s).as_posix().endswith(d) for d in exc.sources)]
            base = Path(found.recipe.root or root)
            left_out = [s for s in found.recipe.sources if s not in sources or s in drop]
            if not drop or _size(base, left_out) * 3 > _size(base, found.recipe.sources):
                raise
            kept = current.recipe.model_copy(update={"sources": [s for s in sources if s not in drop]})
            note = f"left out {', '.join(drop)}: they need symbols nothing here provides ({exc.message})"
            current = Detection(current.system, kept, [*current.notes, note], current.added_args)
    check_links(build_library(root, current.recipe, cache=cache), work)
    return current


def detect_build(
    src_root: Path, system: System = "auto", configure_args: list[str] | tuple[str, ...] = (),
    cache: Path | None = None,
) -> Detection:  # fmt: skip
    """Detect how to build the library in ``src_root`` (cached; see the module docstring).

    Raises:
        ToolchainError: No detector worked; the message lists why each one failed.
    """
    root = Path(src_root).resolve()
    args = list(configure_args)
    base = (cache or cache_dir()) / "detect"
    dest = base / cache_name(root, system, args)
    with file_lock(base / f"{dest.name}.lock"):
        marker = dest / "detection.json"
        if marker.is_file():
            data = json.loads(marker.read_text())
            return Detection(data["system"], BuildRecipe(**data["recipe"]), data["notes"],
                             data.get("added_args", []))
        shutil.rmtree(dest, ignore_errors=True)  # a half-finished detection by a dead process
        dest.mkdir(parents=True)
        reasons: list[str] = []
        for candidate in _order(root) if system == "auto" else (system,):
            try:
                found = run_detector(candidate, root, dest, args)
                # A detector can be fooled (guessed macros, a file meant to be #included, an
                # optional part needing an absent library): only a recipe that builds and links
                # is kept, else the next detector gets its turn (for `auto`). The build is
                # cached, so the caller's own build of it costs nothing.
                found = _linking(root, found, dest / "link-check", cache)
            except ToolchainError as exc:
                reasons.append(f"{candidate}: {_first_lines(exc.message)}")
                continue
            marker.write_text(json.dumps(found.to_dict(), indent=1))
            return found
        shutil.rmtree(dest, ignore_errors=True)
    missing = any(_MISSING.search(reason) for reason in reasons)
    raise ToolchainError(f"cannot work out how to build {root}:\n  " + "\n  ".join(reasons),
                         f"{DEPENDENCY_HINT}; or {HINT}" if missing else HINT)


_GENERATED = (".y", ".l", ".yy", ".ll")  # parser and scanner sources a build step turns into C


def _order(root: Path) -> tuple[System, ...]:
    """The detectors to try: the plain sources last when a build system generates some of them.

    A grammar (``parser.y``) becomes C only in the build system's own step; the plain sources
    build without it, and the functions it defines would be missing from the library.
    """
    systems = ("CMakeLists.txt", "configure.ac", "configure.in", "configure", "Makefile", "meson.build")
    generated = next(walk(root, _GENERATED), None) is not None  # outside tests, docs, examples
    if generated and any((root / n).is_file() for n in systems):
        return (*_ORDER[1:], _ORDER[0])
    return _ORDER


def cache_name(root: Path, system: str, args: list[str]) -> str:
    """The detection cache entry of a source tree: its files, the options and the detectors' code."""
    key = hashlib.sha256(
        json.dumps([_SCHEME, _code(), system, args, clang_version(), str(root), fingerprint(root)]).encode()
    ).hexdigest()[:16]
    return f"{root.name[:40]}-{system}-{key}"


def detect_recipe(
    src_root: Path, system: System = "auto", configure_args: list[str] | tuple[str, ...] = (),
    cache: Path | None = None,
) -> BuildRecipe:  # fmt: skip
    """The detected :class:`BuildRecipe` for ``src_root`` (see :func:`detect_build`)."""
    return detect_build(src_root, system, configure_args, cache).recipe


def resolve_recipe(
    src_root: Path, build: BuildSpec | dict[str, Any] | None, cache: Path | None = None
) -> BuildRecipe:
    """The recipe for a benchmark's ``build:`` section: explicit, detected, or detected+overridden."""
    spec = build if isinstance(build, BuildSpec) else BuildSpec.model_validate(build or {"auto": True})
    given = spec.model_dump(exclude={"auto", "system", "configure_args"}, exclude_none=True)
    if spec.is_explicit():
        recipe = BuildRecipe(**given)
        return recipe if recipe.headers else with_api_headers(Path(src_root).resolve(), recipe, [])
    recipe = detect_recipe(src_root, spec.system or "auto", spec.configure_args, cache)
    update: dict[str, Any] = {}
    for name in ("sources", "include_dirs", "headers", "coverage_sources"):
        if getattr(spec, name) is not None:
            update[name] = getattr(spec, name)
    for name in ("defines", "cflags", "ldflags", "exclude"):
        update[name] = [*getattr(recipe, name), *getattr(spec, name)]
    return recipe.model_copy(update=update)


def prepare_library(
    source: SourceSpec | dict[str, Any], build: BuildSpec | dict[str, Any] | None = None,
    cache: Path | None = None, jobs: int = 2,
) -> LibraryBuild:  # fmt: skip
    """Fetch, detect (or read) the recipe, and build a benchmark's library; all cached."""
    spec = source if isinstance(source, SourceSpec) else SourceSpec.model_validate(source)
    root = fetch_source(spec, cache)
    return build_library(root, resolve_recipe(root, build, cache), cache=cache, jobs=jobs)
