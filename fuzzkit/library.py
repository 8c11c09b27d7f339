"""Building a C library twice (ASan+libFuzzer and coverage flavours) into cached archives."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import uuid
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from fuzzkit.diagnostics import first_errors, parse_compiler_output
from fuzzkit.errors import ToolchainError
from fuzzkit.paths import cache_dir, file_lock
from fuzzkit.recipe_files import included_sources, resolve_globs, resolve_headers
from fuzzkit.tools import clang_version, tool

FUZZ_FLAGS = ["-g", "-O1", "-fno-omit-frame-pointer", "-fsanitize=address,fuzzer-no-link"]
COV_FLAGS = ["-g", "-O0", "-fprofile-instr-generate", "-fcoverage-mapping"]
# Bump when the build layout or flags change so old cache entries are not reused.
_SCHEME = "1"
_RECIPE_HINT = (
    "fix the recipe in the benchmark YAML's `build:` section (sources/exclude globs, "
    "include_dirs, defines, cflags) so every listed file compiles on its own"
)


class BuildRecipe(BaseModel):
    """How to compile a library from its source root (the benchmark YAML's ``build:``).

    Paths and globs are relative to the source root; ``**`` matches directories.
    ``cflags`` are added to both flavours after the flavour's own flags. ``root`` is set by
    detection (:mod:`fuzzkit.detect`) when the build uses a configured copy of the source
    tree (an absolute path in the cache); it is never written in a benchmark YAML.
    """

    model_config = ConfigDict(extra="forbid")

    sources: list[str]
    include_dirs: list[str] = ["."]
    defines: list[str] = []
    headers: list[str] = []
    cflags: list[str] = []
    ldflags: list[str] = []
    coverage_sources: list[str] | None = None
    exclude: list[str] = []
    root: str | None = None


@dataclass
class LibraryBuild:
    """A finished library build; every path is absolute."""

    key: str
    root: str
    fuzz_archive: str
    cov_archive: str
    include_dirs: list[str]
    headers: list[str]
    coverage_files: list[str]
    defines: list[str]
    log_path: str
    sources: list[str] = field(default_factory=list)
    cflags: list[str] = field(default_factory=list)
    ldflags: list[str] = field(default_factory=list)
    seconds: float = 0.0
    build_id: str = ""

    def compile_flags(self) -> list[str]:
        """``-I``/``-D`` flags (and recipe cflags) a harness needs to use this library."""
        flags = [f"-I{d}" for d in self.include_dirs]
        return flags + [f"-D{d}" for d in self.defines] + list(self.cflags)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LibraryBuild:
        """Inverse of :meth:`to_dict`."""
        return cls(**data)


def build_library(
    src_root: Path, recipe: BuildRecipe, cache: Path | None = None, jobs: int = 2
) -> LibraryBuild:
    """Compile the recipe's sources in both flavours, or return the cached build.

    Concurrent callers with the same inputs share one build: the first one builds into a
    temporary directory and renames it into place under a file lock, the others wait and
    read it.

    Raises:
        ToolchainError: A glob matches nothing, a header is missing, or a file fails to compile.
    """
    build = plan_build(src_root, recipe, cache)
    final = Path(build.fuzz_archive).parent
    builds, key, root = final.parent, build.key, Path(build.root)
    with file_lock(builds / f"{key}.lock"):
        if (final / "build.json").is_file():
            cached = LibraryBuild.from_dict(json.loads((final / "build.json").read_text()))
            # What coverage counts does not change the objects: take this plan's list, so a
            # build cached before a change to it reports the same files as a fresh one.
            cached.coverage_files = build.coverage_files
            return cached
        build.build_id = uuid.uuid4().hex
        sources = [Path(s) for s in build.sources]
        builds.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=builds))
        try:
            start = time.monotonic()
            _compile_all(root, build, sources, tmp, jobs)
            build.seconds = round(time.monotonic() - start, 3)
            (tmp / "build.json").write_text(json.dumps(build.to_dict(), indent=1))
            if final.exists():
                shutil.rmtree(final)  # an interrupted build's leftovers without build.json
            os.rename(tmp, final)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return build


def plan_build(src_root: Path, recipe: BuildRecipe, cache: Path | None = None) -> LibraryBuild:
    """Resolve the recipe's files and cache key without compiling anything.

    The returned description has the paths the build will have; ``build_id`` stays empty
    until :func:`build_library` actually builds it.

    Raises:
        ToolchainError: The root is missing, a glob matches nothing or a header is missing.
    """
    root = Path(recipe.root or src_root).resolve()
    if not root.is_dir():
        raise ToolchainError(f"source root {root} is not a directory", _RECIPE_HINT)
    sources = resolve_globs(root, recipe.sources, recipe.exclude, "sources")
    cov_globs = recipe.coverage_sources if recipe.coverage_sources is not None else recipe.sources
    coverage = resolve_globs(root, cov_globs, recipe.exclude, "coverage_sources")
    include_dirs = [str((root / d).resolve()) for d in recipe.include_dirs]
    coverage = [p for p in coverage if p.suffix != ".S"]  # assembly has no source coverage
    if recipe.coverage_sources is None:
        coverage += included_sources(root, coverage, include_dirs)
    headers = resolve_headers(root, recipe.headers, include_dirs)
    key = _build_key(root, recipe, sources, headers, include_dirs)
    final = (cache or cache_dir()) / "builds" / key
    return LibraryBuild(
        key=key,
        root=str(root),
        fuzz_archive=str(final / "libfuzz.a"),
        cov_archive=str(final / "libcov.a"),
        include_dirs=include_dirs,
        headers=[str(h) for h in headers],
        coverage_files=[str(p) for p in coverage],
        defines=list(recipe.defines),
        log_path=str(final / "build.log"),
        sources=[str(p) for p in sources],
        cflags=list(recipe.cflags),
        ldflags=list(recipe.ldflags),
    )


def _build_key(
    root: Path, recipe: BuildRecipe, sources: list[Path], headers: list[Path], incs: list[str]
) -> str:
    digest = hashlib.sha256()
    digest.update(json.dumps([_SCHEME, str(root), clang_version(), recipe.model_dump()]).encode())
    # Private headers next to the sources and in include dirs change what compiles too.
    nearby = {h for d in {*map(str, (p.parent for p in sources)), *incs} for h in Path(d).glob("*.h")}
    for path in sorted({*sources, *headers, *nearby}):
        digest.update(str(path).encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    name = "".join(c if c.isalnum() or c in "._-" else "_" for c in root.name)[:40]
    return f"{name}-{digest.hexdigest()[:16]}"


def _compile_all(root: Path, build: LibraryBuild, sources: list[Path], tmp: Path, jobs: int) -> None:
    flavours = {"fuzz": FUZZ_FLAGS, "cov": COV_FLAGS}
    common = build.compile_flags()
    objects: dict[str, list[Path]] = {name: [] for name in flavours}
    tasks = []
    for name, flags in flavours.items():
        (tmp / name).mkdir()
        for src in sources:
            obj = tmp / name / (str(src.relative_to(root)).replace("/", "__") + ".o")
            objects[name].append(obj)
            compiler = tool("clang++") if src.suffix in (".cc", ".cpp", ".cxx") else tool("clang")
            tasks.append((src, name, [compiler, *flags, *common, "-c", str(src), "-o", str(obj)]))
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(_compile_one, root, *task) for task in tasks]
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        failed = [f for f in done if f.exception() is not None]
        if failed:
            pool.shutdown(cancel_futures=True)
            raise failed[0].exception()  # type: ignore[misc]
        logs = [f.result() for f in futures]
    (tmp / "build.log").write_text("\n".join(logs))
    for name, objs in objects.items():
        archive = tmp / f"lib{name}.a"
        proc = subprocess.run(
            [tool("llvm-ar"), "rcs", str(archive), *map(str, objs)], capture_output=True, text=True
        )
        if proc.returncode != 0:
            raise ToolchainError(f"llvm-ar failed for {archive.name}: {proc.stderr.strip()}")
        shutil.rmtree(tmp / name)


def _compile_one(root: Path, src: Path, flavour: str, cmd: list[str]) -> str:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired as exc:
        raise ToolchainError(
            f"compiling {src.relative_to(root)} ({flavour} flavour) took over 600 s", _RECIPE_HINT
        ) from exc
    log = f"$ {' '.join(cmd)}\n{proc.stderr}"
    if proc.returncode != 0:
        errors = first_errors(parse_compiler_output(proc.stderr))
        shown = "\n".join(d.render() for d in errors) or proc.stderr.strip()[-2000:]
        raise ToolchainError(
            f"compiling {src.relative_to(root)} ({flavour} flavour) failed:\n{shown}", _RECIPE_HINT
        )
    return log


class LinkError(ToolchainError):
    """The library does not link on its own; ``sources`` are the files that need the missing symbols."""

    def __init__(self, message: str, hint: str, sources: set[str]) -> None:
        super().__init__(message, hint)
        self.sources = sources


def check_links(lib: LibraryBuild, work: Path) -> None:
    """Link the whole coverage archive into an empty program: every symbol must resolve.

    A guessed source list can compile file by file and still miss the files that define
    helpers the others call, or take in an optional part that needs a library this machine
    does not have; every harness link would then fail with "undefined reference".

    Raises:
        LinkError: Names the first unresolved symbols and the sources that use them.
    """
    work.mkdir(parents=True, exist_ok=True)
    main = work / "link_check.c"
    main.write_text("int main(void) { return 0; }\n")
    cmd = [tool("clang"), "-fprofile-instr-generate", str(main), "-Wl,--whole-archive", lib.cov_archive,
           "-Wl,--no-whole-archive", *lib.ldflags, "-lm", "-lpthread", "-ldl", "-o", str(work / "link_check")]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=300)
    if out.returncode == 0:
        return
    missing = list(dict.fromkeys(re.findall(r"undefined reference to [`'](\w+)'", out.stderr)))
    twice = list(dict.fromkeys(re.findall(r"multiple definition of [`'](\w+)'", out.stderr)))
    if twice and not missing:  # two implementations of one function (one a test's stand-in?)
        raise LinkError(f"the built library does not link on its own (defined twice: {', '.join(twice[:5])})",
                        "the source list takes in two files defining the same function; name the "
                        "library's own in `build: {sources: [...]}`", set())
    # Else the linker's first error (a library not found), not clang's summary line.
    errors = [ln.strip()[:300] for ln in out.stderr.splitlines() if "error" in ln.lower()]
    what = ", ".join(missing[:5]) if missing else next(
        (e for e in errors if not e.startswith("clang")), (errors or ["no output"])[0])
    raise LinkError(f"the built library does not link on its own (unresolved: {what})",
                    "the source list misses files; name them in `build: {sources: [...]}`",
                    _sources_using(lib, set(missing)))


def _sources_using(lib: LibraryBuild, symbols: set[str]) -> set[str]:
    """Source paths (relative to the build root) whose objects reference ``symbols``."""
    if not symbols:
        return set()
    listing = subprocess.run([tool("llvm-nm"), "-A", "--undefined-only", lib.cov_archive],
                             capture_output=True, text=True, check=False).stdout
    found = set()
    for line in listing.splitlines():
        parts = line.rsplit(None, 2)
        if len(parts) == 3 and parts[2] in symbols:
            obj = parts[0].rstrip(":").rsplit(":", 1)[-1]
            found.add(obj.removesuffix(".o").replace("__", "/"))
    return found
