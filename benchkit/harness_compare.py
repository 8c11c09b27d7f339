"""Shared steps of the harness comparisons in ``bench/``: build, fuzz at a CPU budget, measure.

``coverage_vs_upstream.py`` and ``generality.py`` compare two sets of harnesses for one library
(LogicFuzz's final harnesses and the fuzz harnesses the library ships) by the union coverage of
the library's own sources. To be fair the sides get the same total fuzzing CPU: a budget of
CPU-seconds per side, split evenly over that side's harnesses (:func:`split_budget`), each
fuzzed from an empty corpus. Dictionaries (:func:`side_dictionaries`), by default each side
the one it comes with: LogicFuzz's harnesses the dictionary ``logicfuzz run`` fuzzes them with
(the string literals of the library's sources), each upstream harness the dictionary the
library ships beside it (OSS-Fuzz's ``name.dict``), if any. ``same`` gives every harness of
both sides LogicFuzz's dictionary (the harnesses alone compared), ``none`` none at all.

Harnesses of one side may be fuzzed several at a time; the accounting is per harness
(seconds x harnesses x libFuzzer jobs), so parallelism changes the wall time, not the budget.
"""

from __future__ import annotations

import json
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fuzzkit.coverage import CoverageReport
from fuzzkit.coverage_lines import covered_lines as lines_in_profile
from fuzzkit.coverage_union import union_coverage
from fuzzkit.detect_tree import harness_helpers
from fuzzkit.dictionary import shipped_dictionary
from fuzzkit.errors import ToolchainError
from fuzzkit.harness import HarnessBuild, build_harness
from fuzzkit.harness_variants import harness_variants
from fuzzkit.library import LibraryBuild
from fuzzkit.runner import FuzzRun, run_fuzzer
from fuzzkit.upstream_build import defining_sources, harness_plans, undefined_symbols


def load_bench(path: Path) -> dict[str, Any]:
    """A benchmark YAML as a dict (it must have a ``source`` section)."""
    data = yaml.safe_load(Path(path).read_text())
    if not isinstance(data, dict) or "source" not in data:
        raise ToolchainError(f"{path}: not a benchmark YAML with a `source` section")
    return data


def upstream_sources(bench: dict[str, Any], root: Path) -> list[Path]:
    """The shipped fuzz harnesses listed in ``upstream_harnesses`` (possibly none)."""
    shipped = [root / p for p in bench.get("upstream_harnesses") or []]
    missing = [str(p) for p in shipped if not p.is_file()]
    if missing:
        raise ToolchainError(f"upstream harnesses not in the source: {missing}")
    return shipped


@dataclass
class BuiltSide:
    """The harnesses of one side that built, and why the others did not."""

    builds: list[HarnessBuild] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)
    sources: list[Path] = field(default_factory=list)  # the harness source of each build


DICT_MODES = ("own", "same", "none")


def side_dictionaries(side: BuiltSide, kind: str, mode: str, library_dict: str) -> list[Path | None]:
    """The dictionary each harness of ``side`` is fuzzed with under ``mode`` (see the module).

    ``kind`` is ``logicfuzz`` for LogicFuzz's side, anything else for the library's own (or a
    naive baseline, which ships none); ``library_dict`` is ``Fuzzkit().fuzz_dictionary(lib)``.
    """
    if mode == "none":
        return [None] * len(side.builds)
    if mode == "same" or kind == "logicfuzz":
        return [Path(library_dict) if library_dict else None] * len(side.builds)
    return [shipped_dictionary(source) for source in side.sources]


def _helpers(harness: Path, lib: LibraryBuild) -> list[Path]:
    """Helper sources beside an upstream harness, unless it sits among the library's sources.

    A harness kept in the library's own source directory would otherwise take every file
    there, fragments meant to be ``#include``d among them, as helpers.
    """
    # The library may be built in a configured copy of the tree: compare the directories' tails.
    library_dirs = {Path(s).parent.parts[-2:] for s in lib.sources}
    return [] if harness.parent.parts[-2:] in library_dirs else harness_helpers(harness)


def build_side(kind: str, sources: list[Path], lib: LibraryBuild, work: Path) -> BuiltSide:
    """Build every harness with LogicFuzz's flags (fuzz and coverage flavours).

    Upstream harnesses are built as the library's build files build them
    (:func:`upstream_builds`), once per build target when several compile one harness with
    different definitions; C++ ones are compiled with clang++ by :func:`build_harness`. A
    harness that does not build is recorded in ``failures`` (first compiler errors), not raised.
    """
    side = BuiltSide()
    for i, source in enumerate(sources):
        if kind == "upstream":
            label = source.name
            builds, failed = upstream_builds(source, lib, work / f"build{i}")
        else:
            label = f"{source.parent.name}/{source.name}"
            failed = build_harness(source, lib, work / f"build{i}")
            builds = [("", failed)] if _built(failed) else []
        if not builds:
            errors = "; ".join(d.render() for d in failed.errors[:3])
            side.failures[label] = errors or failed.log.strip()[-300:]
        for name, build in builds:
            side.builds.append(build)
            side.names.append(f"{label}[{name}]" if name else label)
            side.sources.append(source)
    return side


def _built(build: HarnessBuild) -> bool:
    return bool(build.ok and build.fuzz_binary and build.cov_binary)


def _in_tree(source: Path, tree: Path) -> Path | None:
    """``source``'s copy in ``tree`` (the tree LogicFuzz's build compiled), found by its path's tail."""
    parts = source.resolve().parts
    for start in range(1, len(parts)):
        candidate = tree.joinpath(*parts[start:])
        if candidate.is_file():
            return candidate
    return None


def upstream_builds(source: Path, lib: LibraryBuild, work: Path
                    ) -> tuple[list[tuple[str, HarnessBuild]], HarnessBuild]:
    """One of the library's own harnesses built as its build files build it, linking ``lib``.

    First as each build target that compiles it (:func:`harness_plans`: the target's other
    sources, include directories and definitions, companion in-tree libraries), named after
    the target when there are several; then, if no target declares it or none builds, with
    the helper sources beside it that it calls (:func:`_helpers`), and last once per target
    of its CMake project (:func:`_variant_builds`). Each build adds, when the link names
    undefined symbols, the library-side sources defining them (:func:`_linking_companions`).
    Returns the (variant name, build) pairs that built and the last build tried.
    """
    tree = Path(lib.root)
    inside = _in_tree(source, tree)
    plans = harness_plans(inside, tree, lib.sources) if inside else []
    built, last = [], None
    for k, plan in enumerate(plans):
        last, _ = _linking_companions(source, lib, work / f"target{k}", plan.helpers, plan.flags)
        if _built(last):
            built.append((plan.target if len(plans) > 1 else "", last))
    if built:
        return built, built[-1][1]
    helpers = _helpers(source, lib)
    last, helpers = _linking_companions(source, lib, work / "beside", helpers, [])
    if _built(last):
        return [("", last)], last
    return _variant_builds(source, lib, work / "variants", helpers), last


def _linking_companions(source: Path, lib: LibraryBuild, work: Path, helpers: list[Path],
                        flags: list[str], rounds: int = 3) -> tuple[HarnessBuild, list[Path]]:
    """Build; while the link names undefined symbols some library-side source defines, add it."""
    directories = [Path(s).parent for s in lib.sources]
    helpers = list(helpers)
    for _ in range(rounds):
        build = build_harness(source, lib, work, extra_flags=tuple(flags), extra_sources=helpers)
        missing = [] if build.ok else undefined_symbols(build.log)
        exclude = {Path(s).resolve() for s in lib.sources} | {h.resolve() for h in helpers}
        found = defining_sources(missing, directories, exclude) if missing else []
        if not found:
            break
        helpers += found
    return build, helpers


def _variant_builds(source: Path, lib: LibraryBuild, work: Path,
                    helpers: list[Path]) -> list[tuple[str, HarnessBuild]]:
    """The builds of a harness with the definitions each of its build-system targets sets.

    A harness that needs ``-DVARIANT=...`` (its ``#error`` says so) is built once per target
    the library's own CMake project makes from it (read from a configured copy, where the
    text of the build files did not say); the variants that build are returned.
    """
    try:
        variants = harness_variants(source, work / "cmake")
    except (ToolchainError, OSError):
        return []
    out = []
    for k, (name, flags) in enumerate(variants):
        build = build_harness(source, lib, work / f"v{k}", extra_flags=tuple(flags), extra_sources=helpers)
        if _built(build):
            out.append((name, build))
    return out


def logicfuzz_harnesses(run_dir: Path, project: str) -> list[Path]:
    """The final harness of every target of a run that reached a running harness."""
    found = []
    for target in sorted((run_dir / project).glob("*/result.json")):
        record = json.loads(target.read_text())
        harness = target.parent / "harness.c"
        if record.get("runs") and harness.is_file():
            found.append(harness)
    return found


def split_budget(budget: int, count: int) -> int:
    """Seconds each of ``count`` harnesses gets from ``budget`` CPU-seconds (at least 1).

    libFuzzer takes whole seconds, so the remainder of the division is not spent: a side
    never gets more than its budget, and at most ``count - 1`` seconds less.
    """
    return max(1, budget // max(1, count))


def side_budget(counts: list[int], unit: int, budget: int | None = None) -> int:
    """Total CPU-seconds per side: ``budget`` if given, else ``unit`` x the larger harness count."""
    return budget if budget else unit * max([1, *counts])


@dataclass
class SideRun:
    """One side fuzzed once: its union coverage and where the merged profile is."""

    report: CoverageReport
    profdata: Path
    cov_binaries: list[Path]
    seconds_each: int
    harnesses: int
    jobs: int
    dictionaries: list[str] = field(default_factory=list)
    runs: list[FuzzRun] = field(default_factory=list)  # each harness's run, in the order of ``builds``

    def budget(self) -> dict[str, Any]:
        """The CPU actually given: seconds per harness, harnesses, jobs, and their product."""
        return {"per_harness_seconds": self.seconds_each, "harnesses": self.harnesses, "jobs": self.jobs,
                "total_cpu_seconds": self.seconds_each * self.harnesses * self.jobs,
                "dictionaries": self.dictionaries}


def fuzz_side(builds: list[HarnessBuild], lib: LibraryBuild, seconds_each: int, jobs: int, parallel: int,
              work: Path, dicts: list[Path | None] | None = None, writable_tmp: bool = False) -> SideRun:
    """Fuzz each harness ``seconds_each`` from an empty corpus (with ``dicts[i]``, if any);
    measure what they cover together. ``writable_tmp``: the library's own harnesses, which may
    write their input to ``/tmp`` (generated ones never may).
    """
    extra = [f"-fork={jobs}"] if jobs > 1 else []
    dicts = dicts or [None] * len(builds)

    def one(i: int) -> FuzzRun:
        build = builds[i]
        run = run_fuzzer(Path(str(build.fuzz_binary)), work / f"fuzz{i}", seconds=seconds_each,
                         dict_path=dicts[i], extra_args=extra, writable_tmp=writable_tmp)
        print(f"    {Path(str(build.fuzz_binary)).name}#{i} {seconds_each} s: {run.stats.execs} execs, "
              f"cov {run.stats.cov}, {'crash ' + run.crash.kind if run.crash else 'no crash'}",
              file=sys.stderr)
        return run

    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        runs = list(pool.map(one, range(len(builds))))
    pairs = [(Path(str(b.cov_binary)), run.replay_inputs()) for b, run in zip(builds, runs, strict=True)]
    report = union_coverage(pairs, lib, work / "union", writable_tmp=writable_tmp)
    return SideRun(report, work / "union" / "union.profdata", [p[0] for p in pairs], seconds_each,
                   len(builds), max(1, jobs), [d.name if d else "" for d in dicts], runs)


def covered_lines(run: SideRun, lib: LibraryBuild) -> set[tuple[str, int]]:
    """(file, line) of every library line the side executed (``llvm-cov export -format=lcov``)."""
    return lines_in_profile(run.profdata, run.cov_binaries, lib)


def line_diff(logicfuzz: set[tuple[str, int]], upstream: set[tuple[str, int]], library_lines: int
              ) -> dict[str, Any]:
    """oss-fuzz-gen's line-coverage diff: library lines LogicFuzz covers that upstream does not.

    ``share_of_logicfuzz`` is |L_lf - L_up| / |L_lf|; ``share_of_library`` divides the same
    count by the library's line count (llvm-cov's, as in the coverage percentages).
    """
    only = len(logicfuzz - upstream)
    return {"only_logicfuzz": only, "only_upstream": len(upstream - logicfuzz),
            "share_of_logicfuzz": round(100.0 * only / len(logicfuzz), 2) if logicfuzz else 0.0,
            "share_of_library": round(100.0 * only / library_lines, 2) if library_lines else 0.0}
