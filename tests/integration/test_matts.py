"""MaTTS through the runner: N attempts per target, best one reported, one contrastive lesson."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_graph.context import Context
from logicfuzz.runner import RunOptions, run_benchmark

pytestmark = pytest.mark.toolchain


def test_parallel_matts_runs_n_attempts_and_extracts_contrastively(kv_benchmark: Path,
                                                                     tmp_path: Path) -> None:
    config = tmp_path / "memory.yaml"
    config.write_text(f"matts:\n  enabled: true\n  n: 2\nbank:\n  directory: {tmp_path / 'bank'}\n")
    ctx = Context(model="offline", fuzz_seconds=1, max_iterations=0, memory_config=str(config))
    summary = run_benchmark(RunOptions(kv_benchmark, ["kv_parse"], tmp_path / "run", ctx, jobs=1))
    record = summary["results"][0]
    assert record.get("error") is None, record
    assert record["matts"]["attempts"] == 2 and record["runs"]
    assert record["coverage"]["lines"]["percent"] == max(record["matts"]["lines"])
    target = tmp_path / "run" / "kv" / "kv_parse"
    assert (target / "attempt-0" / "events.jsonl").is_file()
    assert (target / "attempt-1" / "events.jsonl").is_file()
    events = [json.loads(line) for line in (tmp_path / "run" / "run.events.jsonl").read_text().splitlines()]
    kinds = [e["type"] for e in events]
    assert kinds.count("memory.candidate.write") == 1  # one lesson for the N attempts
    assert "experience_extractor" in record["usage"]
