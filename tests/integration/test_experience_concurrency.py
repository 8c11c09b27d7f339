"""Four processes writing 200 records each to one bank at the same time: nothing lost, nothing
duplicated, every vector in the row of its item, lifecycle rows and catalog complete."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np

from benchkit.bank_writer import WORKER
from long_term_memory.experience import ExperienceBank, ExperienceConfig, HashingEmbedder, MemoryItem
from long_term_memory.experience.models import item_key_text

WORKERS, WRITES, ITEMS = 4, 200, 2


def test_four_processes_times_two_hundred_writes(tmp_path: Path) -> None:
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(tmp_path), str(w), str(WRITES)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for w in range(WORKERS)]
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-2000:]
        assert out.split()[-1] == str(WRITES - 1)

    lines = (tmp_path / "fuzz-c.jsonl").read_text().splitlines()
    ids = [json.loads(line)["memory_id"] for line in lines]
    expected = {f"rec-{w}-{i}" for w in range(WORKERS) for i in range(WRITES)}
    assert len(ids) == len(set(ids)) == WORKERS * WRITES and set(ids) == expected
    for w in range(WORKERS):  # each writer's records keep their order
        mine = [int(i.split("-")[2]) for i in ids if i.startswith(f"rec-{w}-")]
        assert mine == sorted(mine)

    meta = json.loads((tmp_path / "fuzz-c.meta.json").read_text())
    vectors = np.load(tmp_path / "fuzz-c.embeddings.npy")
    assert meta["count"] == len(meta["item_ids"]) == vectors.shape[0] == WORKERS * WRITES * ITEMS
    assert len(set(meta["item_ids"])) == meta["count"]
    records = [json.loads(line) for line in lines]
    row_of = {item_id: row for row, item_id in enumerate(meta["item_ids"])}
    embedder = HashingEmbedder(256)
    texts, rows = [], []
    for rec in records:
        for it in rec["memory_items"]:
            lesson = MemoryItem(title=it["title"], description=it["description"], content=it["content"])
            texts.append(item_key_text(rec["query"], lesson))
            rows.append(row_of[it["item_id"]])
    np.testing.assert_allclose(vectors[rows], embedder.encode(texts), atol=1e-6)
    assert rows == sorted(rows)  # rows follow the JSONL order

    with sqlite3.connect(tmp_path / "fuzz-c.lifecycle.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM items").fetchone()[0] == meta["count"]
        assert db.execute("SELECT COUNT(*) FROM records").fetchone()[0] == WORKERS * WRITES
        assert db.execute("SELECT generation, jsonl_offset FROM catalog_state").fetchone() == (
            meta["generation"], (tmp_path / "fuzz-c.jsonl").stat().st_size)

    class Refuse:
        name, dim = "hashing-256", 256

        def encode(self, texts: list[str]) -> np.ndarray:
            raise AssertionError("re-encoded on open")

    cfg = ExperienceConfig.load().with_overrides(embedding__model="hashing-256")
    bank = ExperienceBank.open("fuzz-c", tmp_path, cfg, Refuse(), read_only=True)
    assert bank.size == meta["count"] and bank.record_count == WORKERS * WRITES and not bank.notices
    bank.close()

