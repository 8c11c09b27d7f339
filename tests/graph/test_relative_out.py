"""A run directory given relative to the caller's directory works (tools run elsewhere)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_graph.context import Context
from logicfuzz.runner import RunOptions, run_benchmark

pytestmark = pytest.mark.toolchain


def test_relative_out_dir(kv_benchmark: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    ctx = Context(fuzz_seconds=2, max_iterations=0, memory_mode="baseline")
    summary = run_benchmark(RunOptions(kv_benchmark, ["kv_parse"], Path("rel-run"), ctx, jobs=1))
    record = summary["results"][0]
    assert record["compiles"] and record["runs"], record
    result = json.loads((tmp_path / "rel-run" / "kv" / "kv_parse" / "result.json").read_text())
    assert result["coverage"]["lines"]["covered"] > 0
    assert Path(summary["run_dir"]).is_absolute()
