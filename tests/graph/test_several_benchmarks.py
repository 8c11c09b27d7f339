"""One run of two benchmarks on the local pool: every target's steps stream to the caller as logged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from agent_graph.context import Context
from fuzzkit.inputs import InputError
from logicfuzz.runner import RunOptions, run_benchmark

pytestmark = pytest.mark.toolchain


def _copy(kv_benchmark: Path, tmp_path: Path, project: str) -> Path:
    data = yaml.safe_load(kv_benchmark.read_text())
    path = tmp_path / f"{project}.yaml"
    path.write_text(yaml.safe_dump({**data, "project": project}))
    return path


def test_two_benchmarks_in_one_run(kv_benchmark: Path, tmp_path: Path) -> None:
    other = _copy(kv_benchmark, tmp_path, "kvtwo")
    steps: list[tuple[str, str]] = []
    ctx = Context(fuzz_seconds=1, max_iterations=0, memory_mode="baseline")
    summary = run_benchmark(RunOptions([kv_benchmark, other], ["kv_parse"], tmp_path / "run", ctx, jobs=2),
                            lambda name, step, record: steps.append((name, step)))
    assert [s["project"] for s in summary["benchmarks"]] == ["kv", "kvtwo"]
    assert summary["running"] == 2 and len(summary["results"]) == 2
    for project in ("kv", "kvtwo"):
        mine = [step for name, step in steps if name == f"{project}/kv_parse"]
        assert mine[0].startswith("started (pid ") and mine[-1] == "done"
        assert mine.index("build.done") < mine.index("execution.done") < mine.index("done")
        assert json.loads((tmp_path / "run" / project / "summary.json").read_text())["running"] == 1
        assert (tmp_path / "run" / project / "kv_parse" / "result.json").is_file()
    assert json.loads((tmp_path / "run" / "run.json").read_text())["benchmarks"] == [str(kv_benchmark),
                                                                                    str(other)]


def test_two_benchmarks_of_one_project_are_refused(kv_benchmark: Path, tmp_path: Path) -> None:
    twin = _copy(kv_benchmark, tmp_path, "kv")
    with pytest.raises(InputError, match="are both project 'kv'"):
        run_benchmark(RunOptions([kv_benchmark, twin], [], tmp_path / "run", Context(), jobs=1))
    with pytest.raises(InputError, match="--functions nope: none of the benchmarks defines it"):
        run_benchmark(RunOptions([kv_benchmark, _copy(kv_benchmark, tmp_path, "kvtwo")], ["nope"],
                                 tmp_path / "run", Context(), jobs=1))
    assert not (tmp_path / "run").exists()
