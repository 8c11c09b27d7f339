"""Targets as Ray tasks on a real two-node cluster: same outcomes as the local pool; a killed worker's
target is retried and resumes from its checkpoint, finishing once."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.ray_cluster import RayCluster, missing

pytestmark = pytest.mark.toolchain
ROOT = Path(__file__).resolve().parents[2]
OUTCOME = ("compiles", "runs", "crashes", "archetype", "fix_rounds", "harness_versions")


def logicfuzz(cluster: RayCluster | None, *args: str) -> subprocess.Popen[str]:
    env = {**(cluster.env if cluster else os.environ), "COLUMNS": "400"}
    extra = ["--executor", "ray", "--ray-address", cluster.address] if cluster else []
    return subprocess.Popen([sys.executable, "-m", "logicfuzz.cli", "run", *args, *extra], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finished(proc: subprocess.Popen[str]) -> tuple[int, str]:
    _, err = proc.communicate(timeout=1200)
    return proc.returncode, err


@pytest.mark.e2e
def test_cjson_on_ray_gives_the_local_pool_outcomes(ray_cluster: RayCluster, tmp_path: Path) -> None:
    args = ["benchmarks/cjson.yaml", "--functions", "cJSON_Parse,cJSON_ParseWithLength",
            "--fuzz-seconds", "3", "--max-iterations", "1", "--memory-mode", "baseline", "--jobs", "2"]
    local = logicfuzz(None, *args, "--out", str(tmp_path / "local"))  # both at once: fixed fuzz budgets
    on_ray = logicfuzz(ray_cluster, *args, "--out", str(tmp_path / "ray"))
    code, err = finished(local)
    assert code == 0, err[-3000:]
    code, err = finished(on_ray)
    assert code == 0, err[-3000:]
    for name in ("cJSON_Parse", "cJSON_ParseWithLength"):
        assert re.search(rf"{name}: started \(pid \d+", err)  # steps streamed from the task
        assert re.search(rf"{name}: build\.done", err)
        both = [json.loads((tmp_path / side / "cjson" / name / "result.json").read_text())
                for side in ("local", "ray")]
        assert {k: both[0][k] for k in OUTCOME} == {k: both[1][k] for k in OUTCOME}
        assert both[1]["compiles"] and both[1]["runs"]
        target = tmp_path / "ray" / "cjson" / name
        assert (target / "checkpoints.sqlite").is_file() and (target / "events.jsonl").is_file()
        types = [json.loads(line)["type"] for line in (target / "events.jsonl").read_text().splitlines()]
        assert types.count("target.prepared") == 1 and types[-1] == "run.finalized"
    summary = json.loads((tmp_path / "ray" / "summary.json").read_text())
    assert summary["running"] == 2 and summary["union_coverage"]["harnesses"] == 2


def _sources(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [json.loads(m)["source"] for (m,) in conn.execute(
            "SELECT metadata FROM checkpoints WHERE checkpoint_ns = '' ORDER BY checkpoint_id")]


def test_worker_killed_mid_target_is_retried_from_its_checkpoint(ray_cluster: RayCluster, kv_benchmark: Path,
                                                                 tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = logicfuzz(ray_cluster, str(kv_benchmark), "--functions", "kv_parse", "--fuzz-seconds", "4",
                     "--max-iterations", "1", "--memory-mode", "baseline", "--out", str(out))
    assert proc.stderr is not None
    worker, killed_at = 0, 0
    seen: list[str] = []
    deadline = time.monotonic() + 600
    for line in proc.stderr:  # the driver prints each step as the task reports it
        seen.append(line)
        started = re.search(r"kv_parse: started \(pid (\d+)", line)
        if started and not worker:
            worker = int(started.group(1))
        if "kv_parse: build.done" in line and not killed_at:
            assert worker and ray_cluster.owns(worker), seen
            os.kill(worker, signal.SIGKILL)  # the worker process dies mid-target (it fuzzes next)
            killed_at = len(_sources(out / "kv" / "kv_parse" / "checkpoints.sqlite"))
        assert time.monotonic() < deadline, seen
    assert proc.wait(timeout=60) == 0, "".join(seen)[-3000:]
    assert killed_at, "".join(seen)[-3000:]
    assert sum("kv_parse: started" in line for line in seen) == 2  # the retry
    target = out / "kv" / "kv_parse"
    result = json.loads((target / "result.json").read_text())
    assert result["compiles"] and result["runs"] and result["termination_reason"]
    sources = _sources(target / "checkpoints.sqlite")
    assert sources.count("input") == 1 and len(sources) > killed_at  # resumed, not started again
    types = [json.loads(line)["type"] for line in (target / "events.jsonl").read_text().splitlines()]
    assert types.count("target.prepared") == 1 and types.count("run.finalized") == 1


def test_unreachable_ray_address_is_one_line_and_exit_two(kv_benchmark: Path, tmp_path: Path) -> None:
    if missing():
        pytest.skip(missing())
    for extra, env in ((["--ray-address", "127.0.0.1:1"], {}), ([], {"RAY_ADDRESS": "127.0.0.1:1"})):
        cmd = [sys.executable, "-m", "logicfuzz.cli", "run", str(kv_benchmark), "--executor", "ray",
               *extra, "--out", str(tmp_path / "r")]
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120,
                              env={**os.environ, **env, "COLUMNS": "400"})
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "cannot reach the Ray cluster at 127.0.0.1:1" in lines[0], proc.stderr
    assert not (tmp_path / "r").exists()
