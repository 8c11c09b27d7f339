"""The experience bank in a real PostgreSQL: concurrent writers lose, duplicate and miscount nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import psycopg
import pytest

from agents.offline.cdecl import parse_prototype
from long_term_memory.experience import ExperienceConfig, HashingEmbedder, MemoryItem, MemoryRecord
from long_term_memory.experience.models import item_key_text
from long_term_memory.experience.stores import open_bank

ROOT = Path(__file__).resolve().parents[2]
WORKERS, WRITES, ITEMS = 4, 500, 2
WORKER = r"""
import random, sys
from long_term_memory.experience import ExperienceConfig, HashingEmbedder, MemoryItem, MemoryRecord
from long_term_memory.experience import EventLog
from long_term_memory.experience.models import GatekeeperDecision, HitRef, ValidationPlan
from long_term_memory.experience.stores import open_bank
from pathlib import Path

url, worker, count, shared = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
cfg = ExperienceConfig.load().with_overrides(embedding__model="hashing-256", bank__store=url,
                                             index__pgvector=sys.argv[6] == "pgvector")
bank = open_bank(cfg, embedder=HashingEmbedder(256))
events = EventLog(Path(sys.argv[5]) / f"events-{worker}.jsonl")
rng = random.Random(worker)
words = lambda n: " ".join(f"w{rng.getrandbits(40):x}" for _ in range(n))
for i in range(count):
    items = [MemoryItem(title=words(3), description=words(4), content=words(14)) for _ in range(2)]
    result = bank.add_record(MemoryRecord(
        memory_id=f"rec-{worker}-{i}", task_id=f"w{worker}/f{i}", task_type="fuzz-c",
        query=f"project w{worker}; {words(3)}", is_success=bool(i % 2),
        kind="success" if i % 2 else "failure", memory_items=items))
    assert len(result.added) == 2 and not result.merged, result
    # every worker also hits and validates one shared item: the counters must add up exactly
    for decision in (f"d-{worker}-{i}", f"d-{worker}-{i}"):  # the second is a resumed run's replay
        bank.apply(GatekeeperDecision(decision, f"w{worker}/f{i}", True, [HitRef(shared, True, True)],
                                      [ValidationPlan(shared, "pass", True, True, "ok")]), events)
print("done", flush=True)
bank.close()
"""


def _config(url: str) -> ExperienceConfig:
    # the local index (pgvector's path has its own test in test_pg_vector.py)
    return ExperienceConfig.load().with_overrides(embedding__model="hashing-256", bank__store=url,
                                                  index__pgvector=False)


def test_four_processes_times_five_hundred_writes(pg_url: str, tmp_path: Path) -> None:
    from long_term_memory.experience import MemoryRecord

    with open_bank(_config(pg_url), embedder=HashingEmbedder(256)) as bank:
        seed = bank.add_record(MemoryRecord(
            memory_id="rec-seed", task_id="seed/f", task_type="fuzz-c", query="project seed; f",
            is_success=True, kind="success",
            memory_items=[MemoryItem(title="shared lesson", description="every worker cites it",
                                     content="the item whose hit and validation counters all workers bump")]))
    shared = seed.added[0]
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, pg_url, str(w), str(WRITES), shared,
                               str(tmp_path), "local"], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for w in range(WORKERS)]
    for proc in procs:
        out, err = proc.communicate(timeout=1200)
        assert proc.returncode == 0, err[-2000:]
        assert out.split() == ["done"]

    expected = {f"rec-{w}-{i}" for w in range(WORKERS) for i in range(WRITES)} | {"rec-seed"}
    with psycopg.connect(pg_url) as db:
        ids = [r[0] for r in db.execute("SELECT memory_id FROM lf_records ORDER BY seq")]
        items = db.execute("SELECT COUNT(*), COUNT(DISTINCT item_id) FROM lf_items").fetchone()
        stats = db.execute("SELECT hit_count, use_count, pass_count FROM lf_items WHERE item_id = %s",
                           (shared,)).fetchone()
        decisions = db.execute("SELECT COUNT(*) FROM lf_decisions").fetchone()[0]
    assert len(ids) == len(set(ids)) == len(expected) and set(ids) == expected
    for w in range(WORKERS):  # each writer's records keep their order
        mine = [int(i.split("-")[2]) for i in ids if i.startswith(f"rec-{w}-")]
        assert mine == sorted(mine)
    assert items == (WORKERS * WRITES * ITEMS + 1,) * 2
    assert stats == (WORKERS * WRITES,) * 3  # no lost and no doubled count (replays change nothing)
    assert decisions == WORKERS * WRITES

    class Refuse:
        name, dim = "hashing-256", 256

        def encode(self, texts: list[str]) -> np.ndarray:
            raise AssertionError("re-encoded on open")

    with open_bank(_config(pg_url), embedder=Refuse(), read_only=True) as bank:  # type: ignore[arg-type]
        assert bank.size == WORKERS * WRITES * ITEMS + 1
        assert bank.record_count == len(expected)
        records = list(bank.records())
        assert bank.view.index is not None and bank.view.index.mode == "exact"
        texts = [item_key_text(r["query"], MemoryItem(title=i["title"], description=i["description"],
                                                      content=i["content"]))
                 for r in records for i in r["memory_items"]]
        rows = [bank.view.row_of[i["item_id"]] for r in records for i in r["memory_items"]]
        np.testing.assert_allclose(bank.view.index.vectors()[rows], HashingEmbedder(256).encode(texts),
                                   atol=1e-6)


def test_model_mismatch_is_refused(pg_url: str) -> None:
    open_bank(_config(pg_url), embedder=HashingEmbedder(256)).close()
    other = _config(pg_url).with_overrides(embedding__model="hashing-128")
    with pytest.raises(ValueError, match="holds hashing-256 vectors"):
        open_bank(other, embedder=HashingEmbedder(128))


@pytest.mark.parametrize("pgvector", [False, True])
def test_a_lesson_is_recalled_by_scope_from_postgresql(pg_url: str, pgvector: bool) -> None:
    """The items table keeps no lesson fields: they come from the record's stored line (they used
    to be dropped, so no lesson of a PostgreSQL bank had a scope or an action)."""
    cfg = _config(pg_url).with_overrides(bank__task=f"scoped{int(pgvector)}", index__pgvector=pgvector)
    bank = open_bank(cfg, embedder=HashingEmbedder(256))
    lesson = MemoryItem(title="Release uint8_t results with vv_drop", description="returned byte buffers",
                        content="vv_pixels hands back a buffer the harness owns; release it with vv_drop.",
                        scope={"shape": "returns_pointer", "type": "uint8_t"},
                        failure="sanitizer:leak@vv_pixels",
                        action="release_out_param(type=uint8_t, releaser=vv_drop)")
    [lesson_id] = bank.add_record(MemoryRecord(
        memory_id="rec-scoped", task_id="vv/vv_pixels", task_type="fuzz-c",
        query="project vv; target vv_pixels",
        is_success=True, kind="success", memory_items=[lesson])).added
    target = parse_prototype("uint8_t *ww_decode(const uint8_t *data, size_t size);")
    query = "project ww; target uint8_t *ww_decode(const uint8_t *data, size_t size)"
    assert bank.search(query, exclude_task_id="ww/ww_decode", threshold=0.99) == []
    found = bank.search(query, exclude_task_id="ww/ww_decode", threshold=0.99, target=target)
    assert [m.item_id for m in found] == [lesson_id]
    bank.close()
