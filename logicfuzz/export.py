"""``logicfuzz export RUN --to DIR``: the harnesses worth keeping, in OSS-Fuzz / ClusterFuzzLite form.

From a finished run, each running target's final harness is replayed on its corpus through its
coverage binary to learn which library lines it covers (:mod:`fuzzkit.coverage_lines`). A
greedy set cover picks a small set of harnesses that together cover every line all of them
cover (the run's union line coverage, as its corpora give it). Each chosen harness is written
with the run's dictionary (``NAME.dict``) and its corpus as ``NAME_seed_corpus.zip``: the inputs
that reached new coverage while it was fuzzed, minimized with libFuzzer's ``-merge=1`` when
the minimized set still covers the same lines. A ``build.sh`` builds the library from
``$SRC/<project>`` and every harness into ``$OUT`` (:mod:`fuzzkit.export_build`); a README says
how to run it and ``export.json`` holds the figures.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agent_graph.benchmark import Benchmark, load_benchmark
from fuzzkit.coverage_lines import Line, greedy_cover, harness_lines
from fuzzkit.errors import ToolchainError
from fuzzkit.export_build import build_script, generated_files, source_counterpart
from fuzzkit.library import LibraryBuild
from fuzzkit.runner import merge_corpus
from fuzzkit.source import fetch_source
from fuzzkit.toolchain import toolchain_named
from logicfuzz.export_readme import readme_text
from nodes.prepare import library_for


class ExportError(ValueError):
    """The run cannot be exported as asked; ``hint`` says what to do."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


@dataclass
class Candidate:
    """One target's final harness as the run left it."""

    function: str
    harness: Path
    fuzz_binary: Path
    cov_binary: Path
    corpus: Path
    lines: set[Line] = field(default_factory=set)


@dataclass
class ExportedHarness:
    """A harness in the export and what it brings."""

    name: str
    function: str
    lines: int
    added_lines: int
    seeds: int
    corpus_inputs: int
    minimized: bool
    dictionary: bool


@dataclass
class ExportResult:
    """What ``export_run`` wrote."""

    to: str
    run_dir: str
    project: str
    run_harnesses: int
    run_lines: int
    kept_lines: int
    harnesses: list[ExportedHarness]
    left_out: list[str]
    generated: list[str]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)


def export_run(run_dir: Path, to: Path, project: str = "", benchmark: Path | None = None,
               minimize: bool = True) -> ExportResult:
    """Export the run's harness set that keeps its union line coverage into ``to`` (new or empty).

    Raises:
        ExportError: The run directory, the project or the destination is not usable.
        ToolchainError: Replaying, merging or reading coverage failed.
    """
    run_dir, to = Path(run_dir).resolve(), Path(to).resolve()
    if to.exists() and (not to.is_dir() or any(to.iterdir())):
        raise ExportError(f"--to {to} exists and is not an empty directory",
                          "give a new or empty directory for the export")
    bench = _benchmark(run_dir, project, benchmark)
    candidates = _candidates(run_dir, bench.project)
    lib = library_for(bench)
    with tempfile.TemporaryDirectory(prefix="logicfuzz-export-") as tmp:
        work = Path(tmp)
        for c in candidates:
            c.lines = harness_lines(c.cov_binary, [c.corpus], lib, work / "lines" / c.function)
        chosen = greedy_cover([c.lines for c in candidates])
        to.mkdir(parents=True, exist_ok=True)
        dictionary = _dictionary(run_dir, lib)
        exported = [_write_harness(candidates[i], added, lib, to, work / "merge" / candidates[i].function,
                                   dictionary, minimize) for i, added in chosen]
    generated, subdir = _write_generated(lib, bench, to)
    note = f"Written by `logicfuzz export` from the run {run_dir.name} ({len(exported)} harnesses)."
    script = to / "build.sh"
    script.write_text(build_script(lib, bench.project, [f"{h.name}.c" for h in exported], bool(generated),
                                   note, subdir), encoding="utf-8")
    script.chmod(0o755)
    (to / "project.yaml").write_text("language: c\n", encoding="utf-8")
    picked = {candidates[i].function for i, _ in chosen}
    result = ExportResult(
        to=str(to), run_dir=str(run_dir), project=bench.project, run_harnesses=len(candidates),
        run_lines=len(set().union(*(c.lines for c in candidates))),
        kept_lines=len(set().union(*(candidates[i].lines for i, _ in chosen))), harnesses=exported,
        left_out=[c.function for c in candidates if c.function not in picked], generated=generated)
    (to / "export.json").write_text(json.dumps(result.to_dict(), indent=1), encoding="utf-8")
    (to / "README.md").write_text(readme_text(result), encoding="utf-8")
    return result


def _benchmark(run_dir: Path, project: str, override: Path | None) -> Benchmark:
    """The benchmark of ``project`` in the run (the only one when ``project`` is empty)."""
    run_json = run_dir / "run.json"
    if not run_json.is_file():
        raise ExportError(f"{run_dir} is not a run directory (no run.json)",
                          "give the --out directory of a finished `logicfuzz run`")
    if override is not None:
        paths = [Path(override)]
    else:  # absolute since run.json has benchmark_files; older runs recorded them as given
        recorded = json.loads(run_json.read_text())
        paths = [Path(p) for p in recorded.get("benchmark_files") or recorded.get("benchmarks") or []]
        missing = [str(p) for p in paths if not p.is_file()]
        if missing:
            raise ExportError(f"the run's benchmark {missing[0]} is not found from here",
                              "give its YAML with --benchmark, or export from where the run started")
    benches = [load_benchmark(p) for p in paths]
    names = [b.project for b in benches]
    if project:
        if project not in names:
            raise ExportError(f"--project {project}: the run has {', '.join(names) or 'no project'}",
                              "give one of the run's projects")
        return benches[names.index(project)]
    if len(benches) != 1:
        raise ExportError(f"the run has several projects ({', '.join(names)})", "choose one with --project")
    return benches[0]


def _candidates(run_dir: Path, project: str) -> list[Candidate]:
    """Every target of ``project`` whose final harness runs, with its binaries and corpus."""
    found = []
    for result_file in sorted((run_dir / project).glob("*/result.json")):
        record = json.loads(result_file.read_text())
        art = record.get("artifacts") or {}
        cov = Path(art.get("cov_binary") or "")
        corpus = Path(art.get("corpus_dir") or "")
        harness = result_file.parent / "harness.c"
        fuzz = cov.with_suffix("")
        if record.get("runs") and cov.is_file() and fuzz.is_file() and corpus.is_dir() and harness.is_file():
            found.append(Candidate(record["function"], harness, fuzz, cov, corpus))
    if not found:
        raise ExportError(f"no target of {project} in {run_dir} has a running harness with its binaries "
                          "and corpus", "export a run in which at least one harness built and ran")
    return found


def _dictionary(run_dir: Path, lib: LibraryBuild) -> Path | None:
    """The dictionary the run fuzzed with (none if it ran with ``--no-dict``)."""
    context = json.loads((run_dir / "run.json").read_text()).get("context") or {}
    if context.get("dictionary") is False:
        return None
    found = toolchain_named("").fuzz_dictionary(lib)
    return Path(found) if found else None


def _write_harness(c: Candidate, added: int, lib: LibraryBuild, to: Path, work: Path,
                   dictionary: Path | None, minimize: bool) -> ExportedHarness:
    """``NAME.c``, ``NAME.dict`` and ``NAME_seed_corpus.zip`` of one chosen harness."""
    name = f"{c.function}_fuzzer"
    shutil.copyfile(c.harness, to / f"{name}.c")
    if dictionary is not None:
        shutil.copyfile(dictionary, to / f"{name}.dict")
    corpus_inputs = sorted(f for f in c.corpus.iterdir() if f.is_file())
    seeds, minimized = corpus_inputs, False
    if minimize and corpus_inputs:
        merged = merge_corpus(c.fuzz_binary, [c.corpus], work)
        # libFuzzer keeps its own features (edges, counters); keep its choice only if no line is lost.
        if harness_lines(c.cov_binary, [merged], lib, work / "lines") >= c.lines:
            seeds, minimized = sorted(f for f in merged.iterdir() if f.is_file()), True
    if seeds:  # an empty corpus (nothing beyond the empty input was new) ships no zip
        with zipfile.ZipFile(to / f"{name}_seed_corpus.zip", "w", zipfile.ZIP_DEFLATED) as archive:
            for path in seeds:
                archive.write(path, path.name)
    return ExportedHarness(name, c.function, len(c.lines), added, len(seeds), len(corpus_inputs), minimized,
                           dictionary is not None)


def _write_generated(lib: LibraryBuild, bench: Benchmark, to: Path) -> tuple[list[str], str]:
    """Copy the files the build generated (absent from the source) into ``to/generated``.

    Returns them and the build root's place in the source (``.``, or the project's subdirectory).
    """
    try:
        source_root = fetch_source(bench.source)
    except ToolchainError as exc:
        raise ExportError(f"the source of {bench.project} is not available: {exc.message}", exc.hint) from exc
    counterpart = source_counterpart(lib, source_root)
    generated = generated_files(lib, counterpart)
    for rel in generated:
        dest = to / "generated" / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(Path(lib.root) / rel, dest)
    return generated, counterpart.relative_to(source_root.resolve()).as_posix()
