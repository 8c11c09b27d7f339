"""A bank moved files → PostgreSQL → files keeps its JSONL bytes, vectors and lifecycle exactly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from long_term_memory.experience import (
    EventLog,
    ExperienceBank,
    ExperienceConfig,
    HashingEmbedder,
    MemoryItem,
    MemoryRecord,
)
from long_term_memory.experience.models import GatekeeperDecision, HitRef, ValidationPlan

ROOT = Path(__file__).resolve().parents[2]


class Refuse:
    """An embedder that fails the test if anything is encoded again."""

    name, dim = "hashing-256", 256

    def encode(self, texts: list[str]) -> np.ndarray:
        raise AssertionError(f"re-encoded {len(texts)} texts")


def memory(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "logicfuzz.cli", "memory", *args, "--config", str(config)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


def _file_bank(directory: Path, cfg: ExperienceConfig, events: EventLog) -> list[str]:
    with ExperienceBank.open("fuzz-c", directory, cfg, HashingEmbedder(256)) as bank:
        added = []
        for n in range(6):
            items = [MemoryItem(title=f"lesson {n} — ünïcode", description=f"when case {n} happens",
                                content=f"do step {n} then check the status code of call {n} carefully")]
            if n == 5:  # repeats lesson 0 word for word: merged, support grows
                items = [MemoryItem(title="lesson 0 — ünïcode", description="when case 0 happens",
                                    content="do step 0 then check the status code of call 0 carefully")]
            result = bank.add_record(MemoryRecord(
                memory_id=f"rec-{n}", task_id=f"p/f{n}", task_type="fuzz-c", query=f"project p; f{n}",
                is_success=bool(n % 2), kind="success" if n % 2 else "failure", memory_items=items))
            added += result.added
        for n, item in enumerate(added[:3]):
            bank.apply(GatekeeperDecision(f"d{n}", f"q/g{n}", True, [HitRef(item, True, n != 1)],
                                          [ValidationPlan(item, ("pass", "fail", "partial")[n], n != 1,
                                                          True, f"note {n}")]), events)
    return added


def test_files_to_postgres_to_files_round_trip(pg_url: str, pg_server: object, tmp_path: Path) -> None:
    config = tmp_path / "memory.yaml"
    config.write_text("embedding:\n  model: hashing-256\n")
    cfg = ExperienceConfig.load(config)
    source, out, again = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    _file_bank(source, cfg, EventLog(tmp_path / "events.jsonl"))

    proc = memory(config, "import", "--from-dir", str(source), "--store", pg_url)
    assert proc.returncode == 0, proc.stderr
    assert "6 records, 5 items, 3 decisions" in proc.stderr
    stats = memory(config, "stats", "--store", pg_url, "--json")
    assert stats.returncode == 0, stats.stderr
    summary = json.loads(stats.stdout)
    assert (summary["records"], summary["items"], summary["merged_items"]) == (6, 5, 1)
    assert summary["lifecycle"]["decisions"] == 3 and summary["lifecycle"]["merges"] == 1

    proc = memory(config, "export", "--store", pg_url, "--to-dir", str(out))
    assert proc.returncode == 0, proc.stderr
    assert (out / "fuzz-c.jsonl").read_bytes() == (source / "fuzz-c.jsonl").read_bytes()
    with (ExperienceBank.open("fuzz-c", source, cfg, Refuse(), read_only=True) as before,  # type: ignore[arg-type]
          ExperienceBank.open("fuzz-c", out, cfg, Refuse(), read_only=True) as after):  # type: ignore[arg-type]
        assert after.all_stats() == before.all_stats()
        assert after.lifecycle_counts() == before.lifecycle_counts()
        assert after.entries() == before.entries()
        np.testing.assert_array_equal(after.view.index.vectors(), before.view.index.vectors())
        item = before.view.ids[0]
        assert after.history(item)["validations"] == before.history(item)["validations"]

    # and back again, into another database: the bytes still do not move
    second = pg_server.database("transfer_again")  # type: ignore[attr-defined]
    assert memory(config, "import", "--from-dir", str(out), "--store", second).returncode == 0
    assert memory(config, "export", "--store", second, "--to-dir", str(again)).returncode == 0
    assert (again / "fuzz-c.jsonl").read_bytes() == (source / "fuzz-c.jsonl").read_bytes()


def test_transfer_never_overwrites(pg_url: str, tmp_path: Path) -> None:
    config = tmp_path / "memory.yaml"
    config.write_text("embedding:\n  model: hashing-256\n")
    cfg = ExperienceConfig.load(config)
    source = tmp_path / "a"
    _file_bank(source, cfg, EventLog(tmp_path / "events.jsonl"))
    kept = (source / "fuzz-c.jsonl").read_bytes()
    assert memory(config, "import", "--from-dir", str(source), "--store", pg_url).returncode == 0
    proc = memory(config, "import", "--from-dir", str(source), "--store", pg_url)
    assert proc.returncode == 2 and "already holds 6 records" in proc.stderr
    proc = memory(config, "export", "--store", pg_url, "--to-dir", str(source))
    assert proc.returncode == 2 and "already holds files of bank fuzz-c" in proc.stderr
    assert (source / "fuzz-c.jsonl").read_bytes() == kept
    proc = memory(config, "list", "--store", pg_url, "--task", "nothing-here")
    assert proc.returncode == 2 and "no experience bank 'nothing-here'" in proc.stderr
