"""Running one build detector (``sources``, ``cmake``, ``autotools``, ``make``) on a source tree.

See :mod:`fuzzkit.detect` for the order the detectors are tried in, the cache, and the
check that a detected recipe builds and links.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fuzzkit import detect_cmake, detect_generate, detect_make
from fuzzkit.detect_links import cmake_link_flags, make_link_flags
from fuzzkit.detect_options import Retry, autoconf_retry, cmake_retry, with_retry
from fuzzkit.detect_recipe import from_compiles, with_api_headers
from fuzzkit.detect_sources import detect_sources
from fuzzkit.detect_tree import project_dir
from fuzzkit.errors import ToolchainError
from fuzzkit.library import BuildRecipe


@dataclass
class Detection:
    """What detection found: the build system used, the recipe, and notes for the user.

    ``added_args``: configure options detection added to the caller's (the one its configure
    step needed for a missing component, :mod:`fuzzkit.detect_options`).
    """

    system: str
    recipe: BuildRecipe
    notes: list[str] = field(default_factory=list)
    added_args: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"system": self.system, "recipe": self.recipe.model_dump(), "notes": self.notes,
                "added_args": self.added_args}

    def retried(self, retry: Retry | None, what: str) -> Detection:
        """This detection, noting the option ``what`` needed on a second try (if it did)."""
        if retry is None:
            return self
        note = (f"{what} stopped on a missing {retry.missing} ({retry.cause}); it passed with "
                f"{retry.option}, which {retry.source} lists")
        return Detection(self.system, self.recipe, [*self.notes, note], [*self.added_args, retry.option])


def _prefixed(recipe: BuildRecipe, prefix: str) -> BuildRecipe:
    """Paths relative to a project subdirectory made relative to the source root."""

    def fix(paths: list[str]) -> list[str]:
        return [p if Path(p).is_absolute() else (Path(prefix) / p).as_posix() for p in paths]

    return recipe.model_copy(
        update={k: fix(getattr(recipe, k)) for k in ("sources", "include_dirs", "headers")}
    )


def _copy_filter(dest: Path) -> Any:
    """Skip ``.git`` and the cache itself when it lies inside the tree being copied."""
    inside = dest.resolve()

    def ignore(directory: str, names: list[str]) -> set[str]:
        skip = {n for n in names if n == ".git"}
        return skip | {n for n in names if inside.is_relative_to(Path(directory, n).resolve())}

    return ignore


def run_detector(system: str, src_root: Path, dest: Path, args: list[str]) -> Detection:
    """Run one detector on a private copy of the project in ``dest`` (``sources`` reads in place).

    Raises:
        ToolchainError: the detector does not apply or its configure step failed.
    """
    project = project_dir(src_root)
    if system == "sources":
        recipe, notes = detect_sources(project)
        recipe = with_api_headers(project, recipe, [])
        prefix = project.relative_to(src_root).as_posix()
        return Detection(system, _prefixed(recipe, prefix) if prefix != "." else recipe, notes)
    src_root = project
    tree = dest / project.name
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(src_root, tree, symlinks=True, ignore=_copy_filter(dest))
    if system == "cmake":
        if not (tree / "CMakeLists.txt").is_file():
            raise ToolchainError("no CMakeLists.txt")
        build = tree / detect_cmake.BUILD_DIR
        retry = with_retry(lambda extra, append: detect_cmake.cmake_configure(tree, [*args, *extra], append),
                           tree.parent / "configure.log", "cmake configure",
                           lambda output: cmake_retry(output, tree, build, [*detect_cmake.FIXED_ARGS, *args]))
        targets = detect_cmake.library_targets(build)
        compiles = detect_cmake.cmake_compiles(tree, targets)
        detect_cmake.generate_sources(tree, build, targets, compiles)
        recipe = from_compiles(tree, compiles, build)
        found = Detection(system, recipe.model_copy(update={"ldflags": cmake_link_flags(build)}))
        return found.retried(retry, "cmake configure")
    env = detect_make.build_env()
    retry = _configure(tree, dest, env, args) if system == "autotools" else None
    makefiles = ("Makefile", "makefile", "GNUmakefile")
    if system != "autotools" and not any((tree / n).is_file() for n in makefiles):
        raise ToolchainError("no Makefile")
    # For a plain Makefile, configure_args are make arguments (variables or targets).
    extra = detect_make.make_overrides(tree) if system == "autotools" else [f"CC={env['CC']}", *args]
    make = ["make", "-n", "-w", "-k", *extra]
    dry_run = _dry_run(make, tree, dest / "make-n.log", env)
    commands = detect_make.parse_make_dry_run(dry_run, tree.resolve())
    entries = detect_make.library_compiles(commands, tree.resolve())
    detect_generate.built_sources({e.source.parent for e in entries}, extra, dest, env, tree)
    detect_generate.missing_sources([e.source for e in entries], extra, dest, env, tree,
                                    {e.source: e.obj for e in entries})
    detect_generate.generated_includes([(e.source, e.flags) for e in entries], extra, dest, env, tree)
    recipe = from_compiles(tree, [(e.source, e.flags) for e in entries], None)
    found = Detection(system, recipe.model_copy(update={"ldflags": make_link_flags(tree)}))
    return found.retried(retry, "./configure")


def _configure(tree: Path, dest: Path, env: dict[str, str], args: list[str]) -> Retry | None:
    """Run ``./configure`` with the options its ``--help`` lists; once more with one naming what it missed.

    Returns:
        The retry the script needed (:mod:`fuzzkit.detect_options`), or None.
    """
    if not (tree / "configure").is_file():
        detect_generate.autoreconf(tree, dest, env)
    help_log = dest / "configure-help.log"
    try:
        usage = detect_make.run_step(["sh", "./configure", "--help"], tree, help_log, env, "--help")
    except ToolchainError:
        # A hand-written script may exit non-zero after printing its usage.
        usage = help_log.read_text(errors="replace") if help_log.is_file() else ""
    options = detect_make.configure_args(usage, args)
    log = dest / "configure.log"

    def step(extra: list[str], append: bool) -> str:
        return detect_make.run_step(["sh", "./configure", *options, *extra], tree, log, env, "./configure",
                                    append=append)

    return with_retry(step, log, "./configure", lambda output: autoconf_retry(output, usage, options))


def _dry_run(make: list[str], tree: Path, log: Path, env: dict[str, str]) -> str:
    """``make -n`` output, standing in for libraries only a real build would have made.

    A library linking a convenience library of another directory (``../lib/libsub.la``)
    makes ``make -n`` stop before printing its link command, since the file does not exist;
    an empty stand-in lets the dry run go on. With -k, a failing part that is not the library
    (documentation needing a missing tool) still leaves the library's commands in the output.
    """
    for attempt in range(2):
        try:
            return detect_make.run_step(make, tree, log, env, "make -n")
        except ToolchainError as failed:
            text = log.read_text(errors="replace") if log.is_file() else ""
            if attempt == 0 and detect_generate.stand_in_libraries(text, tree.resolve()):
                continue
            if not detect_make.parse_make_dry_run(text, tree.resolve()).compiles:
                raise failed
            return text
    return ""
