# ruff: noqa: E501
"""The execution node runs the library's sample files once through the harness.

A fake toolchain at the seam: its fuzzer never reaches the target from an empty corpus, while
its sample files do (a file reader behind a format check). Coverage figures stay the fuzzer's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from agent_graph.context import Context
from fuzzkit.coverage import CoverageCount, CoverageReport
from fuzzkit.crash import CrashReport
from fuzzkit.runner import FuzzRun, FuzzStats
from fuzzkit.toolchain import register_toolchain
from nodes.execution import execution_node


class SeedsReachTarget:
    """Fuzzing reaches nothing; the seed files reach the target (or crash, when told to)."""

    def __init__(self, seed_crash: bool = False) -> None:
        self.seed_crash = seed_crash
        self.seed_runs = 0
        self.dicts: list[str] = []

    def run_fuzzer(self, binary: Path, out: Path, dict_path: str = "", **_: Any) -> FuzzRun:
        self.dicts.append(dict_path)
        return FuzzRun(0, 1.0, False, False, [], str(out / "corpus"), str(out / "fuzz.log"), FuzzStats(execs=9))

    def run_inputs(self, binary: Path, inputs: Path, out: Path, **_: Any) -> FuzzRun:
        self.seed_runs += 1
        crash = CrashReport(kind="leak", summary="leak", signature="leak@rd_open") if self.seed_crash else None
        return FuzzRun(1 if crash else 0, 0.2, False, crash is not None, [str(inputs / "a")] if crash else [],
                       str(out / "corpus"), str(out / "fuzz.log"), FuzzStats(), crash=crash)

    def measure_coverage(self, cov_binary: Path, inputs: list[Path], lib: Any, out: Path) -> CoverageReport:
        seeds = any(p.name == "seeds" for p in inputs)
        return CoverageReport(lines=CoverageCount(40 if seeds else 5, 100),
                              function_hits={"rd_read": 3} if seeds else {"rd_open": 9})


def _state(tmp_path: Path) -> dict[str, Any]:
    (tmp_path / "seeds").mkdir(parents=True)
    lib = {"key": "k", "root": str(tmp_path), "fuzz_archive": "a", "cov_archive": "b", "include_dirs": [],
           "headers": [], "coverage_files": [], "defines": [], "log_path": "l"}
    return {"work_dir": str(tmp_path / "t"), "harness_version": 1, "library": lib,
            "build": {"fuzz_binary": "h", "cov_binary": "hc"}, "seed_dir": str(tmp_path / "seeds"),
            "dict_path": str(tmp_path / "fuzz.dict"),
            "target": {"name": "rd_read", "return_type": "int", "params": []}, "api": []}


def _run(tmp_path: Path, tools: SeedsReachTarget, seeds: bool = True, dictionary: bool = True) -> dict[str, Any]:
    register_toolchain("seeds-fake", lambda: tools)  # type: ignore[arg-type,return-value]
    ctx = Context(toolchain="seeds-fake", seeds=seeds, dictionary=dictionary)
    return execution_node(_state(tmp_path), Runtime(context=ctx))


def test_a_target_only_the_sample_files_reach_counts_as_reached(tmp_path: Path) -> None:
    tools = SeedsReachTarget()
    run = _run(tmp_path, tools)["run"]
    assert tools.seed_runs == 1
    assert run["usable"] and run["target_hits"] == 0 and run["seed_target_hits"] == 3
    assert run["coverage"]["lines"]["covered"] == 5  # the fuzzer's own, not the samples'


def test_without_seeds_the_target_is_not_reached(tmp_path: Path) -> None:
    tools = SeedsReachTarget()
    run = _run(tmp_path, tools, seeds=False)["run"]
    assert tools.seed_runs == 0 and not run["usable"] and "never called rd_read" in run["problem"]


def test_a_crash_on_a_sample_file_is_a_crash_of_the_run(tmp_path: Path) -> None:
    update = _run(tmp_path, SeedsReachTarget(seed_crash=True))
    assert update["run"]["crashed"] and update["crash"]["signature"] == "leak@rd_open"


def test_the_fuzzer_gets_the_prepared_dictionary_unless_told_not_to(tmp_path: Path) -> None:
    tools = SeedsReachTarget()
    _run(tmp_path / "a", tools)
    _run(tmp_path / "b", tools, dictionary=False)
    assert tools.dicts == [str(tmp_path / "a" / "fuzz.dict"), ""]


def test_a_sample_file_crashing_inside_the_target_shows_the_target_reached(tmp_path: Path) -> None:
    """A crash the library's own sample file set off inside the target: the harness reached it."""
    tools = SeedsReachTarget(seed_crash=True)
    inner = CrashReport(kind="SEGV", summary="SEGV", signature="SEGV@put_tile<get_strip", entry_function="rd_read")
    tools.run_inputs = lambda *a, **k: FuzzRun(1, 0.2, False, True, [str(tmp_path / "a")], "c", "l",  # type: ignore[method-assign]
                                               FuzzStats(), crash=inner)
    run = _run(tmp_path, tools)["run"]
    assert run["crashed"] and run["target_hits"] == 0 and run["seed_target_hits"] == 1
    other = SeedsReachTarget(seed_crash=True)  # a crash in rd_open, before the target
    assert _run(tmp_path / "b", other)["run"]["seed_target_hits"] == 0
