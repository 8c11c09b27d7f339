"""SIGKILL in the middle of bank writes, then resume: no record lost, none duplicated.

Part one kills a writer at each step of a record write (fault injection makes the process
SIGKILL itself there) and at the commit of a re-embedding. Part two kills a writer that
stores a record and applies a decision per target at random moments, restarts it as a resumed
run would, and checks the final bank against what one uninterrupted run writes.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from long_term_memory.experience import ExperienceBank, ExperienceConfig, HashingEmbedder, MemoryItem
from long_term_memory.experience.faults import CRASH_ENV
from long_term_memory.experience.models import item_key_text

CFG = ExperienceConfig.load().with_overrides(embedding__model="hashing-256")
PRELUDE = r"""
import sys
from pathlib import Path
from long_term_memory.experience import (ExperienceBank, ExperienceConfig, Gatekeeper, EventLog,
    HashingEmbedder, MemoryItem, MemoryRecord, Outcome)
model = sys.argv[2] if len(sys.argv) > 2 else "hashing-256"
cfg = ExperienceConfig.load().with_overrides(embedding__model=model)
bank = ExperienceBank.open("fuzz-c", Path(sys.argv[1]), cfg, HashingEmbedder(int(model.split("-")[1])))

def rec(i):
    words = " ".join(f"t{i}x{j}y{(i * 7919 + j * 104729) % 1000003}" for j in range(12))
    return MemoryRecord(memory_id=f"rec-{i}", task_id=f"lib/f{i}", task_type="fuzz-c",
                        query=f"project lib; target int f{i}(const char * s)", is_success=True,
                        kind="success", memory_items=[
                            MemoryItem(title=f"lesson {i}", description=f"for f{i} {words[:40]}",
                                       content=words)])
"""
ADD_ONE = PRELUDE + "bank.add_record(rec(int(sys.argv[3])))\nprint('done', flush=True)\n"


def run(code: str, *args: str, crash: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ}
    env.pop(CRASH_ENV, None)
    if crash:
        env[CRASH_ENV] = crash
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=env, timeout=300)


def check_consistent(directory: Path, expected_ids: set[str]) -> None:
    """Every record once, every vector in its item's row, lifecycle rows, a fast reopen."""
    lines = (directory / "fuzz-c.jsonl").read_bytes()
    assert lines.endswith(b"\n")
    records = [json.loads(line) for line in lines.splitlines()]
    ids = [r["memory_id"] for r in records]
    assert len(ids) == len(set(ids)) and set(ids) == expected_ids
    meta = json.loads((directory / "fuzz-c.meta.json").read_text())
    vectors = np.load(directory / "fuzz-c.embeddings.npy")
    items = [(r["query"], it) for r in records for it in r["memory_items"] if not it["merged_into"]]
    assert meta["item_ids"] == [it["item_id"] for _, it in items] and vectors.shape[0] == meta["count"]
    texts = [item_key_text(q, MemoryItem(title=it["title"], description=it["description"],
                                         content=it["content"])) for q, it in items]
    np.testing.assert_allclose(vectors, HashingEmbedder(256).encode(texts), atol=1e-6)

    class Refuse:
        name, dim = "hashing-256", 256

        def encode(self, texts: list[str]) -> np.ndarray:
            raise AssertionError("a consistent bank must open without encoding")

    bank = ExperienceBank.open("fuzz-c", directory, CFG, Refuse(), read_only=True)
    assert bank.record_count == len(expected_ids) and not bank.notices
    assert set(bank.all_stats()) == set(meta["item_ids"])  # a lifecycle row per item
    assert bank.lifecycle.catalog().state == (meta["generation"], len(lines))
    bank.close()


@pytest.mark.parametrize("point", ["before_jsonl", "mid_jsonl", "after_jsonl", "after_lifecycle",
                                   "after_vectors"])
def test_killed_at_each_step_of_a_write_then_resumed(tmp_path: Path, point: str) -> None:
    for i in range(3):
        assert run(ADD_ONE, str(tmp_path), "hashing-256", str(i)).returncode == 0
    crashed = run(ADD_ONE, str(tmp_path), "hashing-256", "3", crash=point)
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr[-2000:]
    assert "done" not in crashed.stdout
    # A reader right after the crash sees a usable bank and changes nothing.
    reader = ExperienceBank.open("fuzz-c", tmp_path, CFG, HashingEmbedder(256), read_only=True)
    committed = point in ("after_jsonl", "after_lifecycle", "after_vectors")
    assert reader.record_count == (4 if committed else 3)
    reader.close()
    # The resumed run repeats its write: stored once whichever step the crash hit.
    resumed = run(ADD_ONE, str(tmp_path), "hashing-256", "3")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    run(ADD_ONE, str(tmp_path), "hashing-256", "4")
    check_consistent(tmp_path, {f"rec-{i}" for i in range(5)})


def test_killed_between_re_embedded_vectors_and_their_meta(tmp_path: Path) -> None:
    for i in range(3):
        run(ADD_ONE, str(tmp_path), "hashing-256", str(i))
    crashed = run(ADD_ONE, str(tmp_path), "hashing-512", "3", crash="rewrite_before_meta")
    assert crashed.returncode == -signal.SIGKILL
    meta = json.loads((tmp_path / "fuzz-c.meta.json").read_text())
    assert meta["model"] == "hashing-256" and np.load(tmp_path / "fuzz-c.embeddings.npy").shape[1] == 512
    # The old model's reader notices the vectors do not belong to the meta file and recovers.
    assert run(ADD_ONE, str(tmp_path), "hashing-256", "3").returncode == 0
    check_consistent(tmp_path, {f"rec-{i}" for i in range(4)})


LOOP = PRELUDE + r"""
gk = Gatekeeper(cfg)
events = EventLog(None)
anchor = bank.add_record(rec(0))
target = (anchor.added or [bank.entries()[0].item_id])[0]
print("ready", flush=True)
for i in range(1, int(sys.argv[3]) + 1):
    bank.add_record(rec(i))
    outcome = Outcome(task_id=f"lib/f{i}", run_id="kill-test", compiles=True, runs=True,
                      lines_percent=30.0, harness_versions=1, model_calls=2)
    bank.apply(gk.evaluate([target], [target], outcome), events)
    print(i, flush=True)
print("finished", flush=True)
"""


def test_random_sigkill_and_resume_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    targets, rng, kills = 60, random.Random(7), 0
    for _ in range(8):
        proc = subprocess.Popen([sys.executable, "-c", LOOP, str(tmp_path), "hashing-256", str(targets)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != "ready":
            proc.wait()
            pytest.fail(proc.stderr.read() if proc.stderr else "worker died")
        # Killed after a random number of targets, read from its progress lines: a sleep
        # instead let a fast worker finish before the kill on a busy machine.
        for _step in range(rng.randint(1, targets // 2)):
            if not proc.stdout.readline():
                break
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.communicate(timeout=120)
    final = run(LOOP, str(tmp_path), "hashing-256", str(targets))
    assert final.returncode == 0 and "finished" in final.stdout, final.stderr[-2000:]
    assert kills >= 4
    check_consistent(tmp_path, {f"rec-{i}" for i in range(targets + 1)})
    bank = ExperienceBank.open("fuzz-c", tmp_path, CFG, HashingEmbedder(256), read_only=True)
    target = bank.entries()[0].item_id
    stats = bank.stats([target])[target]
    # One hit, one use and one pass per target, however many times each was replayed.
    assert (stats.hit_count, stats.use_count, stats.pass_count) == (targets, targets, targets)
    assert bank.lifecycle_counts()["decisions"] == targets
    bank.close()
