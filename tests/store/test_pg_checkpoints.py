"""A run checkpointed in PostgreSQL, killed mid-run, resumes; a bad store URL stops in one line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, **kw: object) -> list[str]:
    return [sys.executable, "-m", "logicfuzz.cli", *args]


def _checkpoints(url: str) -> list[tuple[str, int, str]]:
    with psycopg.connect(url) as db:
        if not db.execute("SELECT to_regclass('checkpoints')").fetchone()[0]:
            return []
        return [(r[0], int(r[1]), r[2]) for r in db.execute(
            "SELECT thread_id, (metadata->>'step')::int, metadata->>'source' FROM checkpoints "
            "WHERE checkpoint_ns = '' ORDER BY checkpoint_id")]


@pytest.mark.toolchain
def test_run_killed_mid_way_resumes_from_postgres(pg_url: str, kv_benchmark: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = cli("run", str(kv_benchmark), "--fuzz-seconds", "1", "--max-iterations", "1",
               "--memory-mode", "baseline", "--out", str(out), "--quiet", "--jobs", "1",
               "--store", pg_url)
    first = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while len(_checkpoints(pg_url)) < 6 and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert first.poll() is None, "the run ended before it could be killed mid-way"
        os.killpg(first.pid, signal.SIGKILL)
    finally:
        first.wait(timeout=60)
    before = _checkpoints(pg_url)
    assert before and not (out / "kv" / "kv_parse" / "result.json").exists()
    assert not (out / "kv" / "kv_parse" / "checkpoints.sqlite").exists()  # nothing went to SQLite

    second = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert second.returncode == 0, second.stderr[-3000:]
    result = json.loads((out / "kv" / "kv_parse" / "result.json").read_text())
    assert result["compiles"] and result["termination_reason"]
    after = _checkpoints(pg_url)
    assert after[: len(before)] == before  # the killed run's checkpoints are kept and continued
    assert len(after) > len(before)
    assert [s for _, _, s in after].count("input") == 1  # resumed: the target was not started again
    assert {t for t, _, _ in after} == {before[0][0]}
    assert before[0][0].startswith(str((out / "kv" / "kv_parse").resolve()))


@pytest.mark.parametrize("url, says", [
    ("postgresql://nobody@127.0.0.1:1/none", "cannot use PostgreSQL store"),
    ("mysql://u@h/db", "is not a PostgreSQL URL"),
    ("postgresql://u:secret@127.0.0.1:notaport/db", "port that is not a number"),
])
def test_bad_store_url_is_one_line_and_exit_two(url: str, says: str, kv_benchmark: Path,
                                               tmp_path: Path) -> None:
    for args in (["run", str(kv_benchmark), "--out", str(tmp_path / "r"), "--store", url],
                 ["memory", "stats", "--store", url]):
        proc = subprocess.run(cli(*args), cwd=ROOT, capture_output=True, text=True, timeout=120,
                              env={**os.environ, "COLUMNS": "400"})
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and says in lines[0] and "Traceback" not in proc.stderr, proc.stderr
        assert "secret" not in proc.stderr
    assert not (tmp_path / "r").exists()
