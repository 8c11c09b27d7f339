"""End to end: the offline pipeline on real cJSON from Debian's source archive."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.toolchain]

REPO = Path(__file__).resolve().parents[2]


def logicfuzz(*args: str) -> subprocess.CompletedProcess[str]:
    cli = Path(sys.executable).with_name("logicfuzz")
    return subprocess.run([str(cli), *args], cwd=REPO, capture_output=True, text=True, timeout=900)


def test_offline_pipeline_on_cjson_parse(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = logicfuzz("run", "benchmarks/cjson.yaml", "--functions", "cJSON_Parse",
                     "--fuzz-seconds", "5", "--max-iterations", "2", "--out", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr[-4000:]
    target = out / "cjson" / "cJSON_Parse"
    result = json.loads((target / "result.json").read_text())
    assert result["compiles"] and result["runs"]
    assert result["target_hits"] > 0
    lines = result["coverage"]["lines"]
    assert 0 < lines["covered"] < lines["count"]
    assert lines["percent"] == pytest.approx(100 * lines["covered"] / lines["count"], abs=0.01)
    # The figures are the measured ones written beside the harness, not a summary's guess.
    assert json.loads((target / "coverage.json").read_text())["lines"] == lines
    assert "cJSON_Parse" in (target / "harness.c").read_text()
    assert "LLVMFuzzerTestOneInput" in (target / "harness.c").read_text()
    assert (target / "fuzz.log").stat().st_size > 0
    assert result["model_calls"] >= 3 and result["prompt_tokens"] > 0
    assert result["archetype"] == "stateless_parser"
    assert result["termination_reason"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["running"] == 1
    union = summary["union_coverage"]
    assert union["harnesses"] == 1 and union["lines"]["count"] == lines["count"]
    assert abs(union["lines"]["covered"] - lines["covered"]) <= lines["count"] * 0.02

    again = logicfuzz("run", "benchmarks/cjson.yaml", "--functions", "cJSON_Parse", "--out", str(out),
                      "--json")
    assert again.returncode == 0, again.stderr[-2000:]
    rerun = json.loads(again.stdout)["results"][0]
    assert rerun.pop("skipped") is True and rerun == result  # finished targets are not redone


def test_bad_benchmark_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("project: x\nfunctions: [{name: f}]\n")
    proc = logicfuzz("run", str(bad), "--out", str(tmp_path / "o"))
    assert proc.returncode == 2
    assert "no source section" in proc.stderr
    assert "logicfuzz init-benchmark" in proc.stderr or "source:" in proc.stderr
    missing = logicfuzz("run", "benchmarks/cjson.yaml", "--functions", "no_such_fn",
                        "--out", str(tmp_path / "o2"))
    assert missing.returncode == 2 and "no function 'no_such_fn'" in missing.stderr
