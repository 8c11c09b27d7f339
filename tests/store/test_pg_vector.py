"""The PostgreSQL bank ranked by the server (pgvector) against the local index, on a real server."""

from __future__ import annotations

import hashlib
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import psycopg
import pytest

from benchkit.pg_server import PgServer
from long_term_memory.experience import ExperienceConfig, MemoryItem, MemoryRecord
from long_term_memory.experience.admin import summary
from long_term_memory.experience.models import item_key_text
from long_term_memory.experience.stores import open_bank
from tests.store.test_pg_bank import ROOT, WORKER

VOCABULARY = [f"topic{n}" for n in range(40)]
DIM = 64


class TopicEmbedder:
    """Deterministic vectors at the seam: each vocabulary word is a fixed random direction, a
    text the normalized sum of its words plus a little noise seeded by the whole text (so no
    two scores tie and a repeated text with one more word is a near duplicate)."""

    name, dim = f"topic-{DIM}", DIM

    def __init__(self) -> None:
        """The word directions, the same in every process."""
        self.words = dict(zip(VOCABULARY, np.random.default_rng(7).normal(size=(len(VOCABULARY), DIM)),
                              strict=True))

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit float32 rows."""
        out = np.zeros((len(texts), DIM))
        for row, text in enumerate(texts):
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            out[row] = np.random.default_rng(seed).normal(scale=0.15, size=DIM)
            for word in text.split():
                out[row] += self.words.get(word.strip(";,."), 0.0)
            out[row] /= np.linalg.norm(out[row])
        return out.astype(np.float32)


class Refuse:
    """An embedder that must not be asked to encode (the rows hold every vector)."""

    name, dim = f"topic-{DIM}", DIM

    def encode(self, texts: list[str]) -> np.ndarray:
        """Fails the test."""
        raise AssertionError("re-encoded")


def _config(url: str, pgvector: bool = True) -> ExperienceConfig:
    return ExperienceConfig.load().with_overrides(embedding__model=f"topic-{DIM}", bank__store=url,
                                                  index__pgvector=pgvector)


@pytest.fixture
def vector_url(pg_url: str) -> str:
    """A fresh database on a server that has pgvector (else the test is skipped, saying why)."""
    with psycopg.connect(pg_url) as db:
        if not db.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone():
            pytest.skip("the test server's PostgreSQL has no pgvector extension: "
                        "scripts/pgvector.sh (run by scripts/setup.sh --dev as root) builds it")
    return pg_url


def _records(count: int, start: int = 0) -> list[MemoryRecord]:
    """Two items each; every fifth record repeats an earlier item's text (same text, or one word more)."""
    rng, out, texts = random.Random(start), [], []
    for i in range(start, start + count):
        items = []
        for _ in range(2):
            words = " ".join(rng.sample(VOCABULARY, 3))
            if texts and i % 5 == 0:
                words = rng.choice(texts) + ("" if i % 10 else " again")
            texts.append(words)
            items.append(MemoryItem(title=words, description=f"about {words}", content=f"do {words}"))
        out.append(MemoryRecord(memory_id=f"rec-{i}", task_id=f"t{i % 30}", task_type="fuzz-c",
                                query=f"project p{i % 30}; {rng.choice(VOCABULARY)}", is_success=bool(i % 2),
                                kind="success" if i % 2 else "failure", memory_items=items,
                                created_at=1_700_000_000.0 + i))
    return out


def _write(url: str, records: list[MemoryRecord], pgvector: bool) -> None:
    with open_bank(_config(url, pgvector), embedder=TopicEmbedder()) as bank:  # type: ignore[arg-type]
        assert bank.view.index is None or bank.view.index.mode == ("pgvector" if pgvector else "exact")
        for record in records:
            bank.add_record(record)


def _same_search(url: str, queries: int = 60) -> int:
    """Search the bank through both paths; every answer must be the same. Returns matches compared."""
    rng, compared = random.Random(3), 0
    with (open_bank(_config(url, False), embedder=TopicEmbedder(), read_only=True) as local,  # type: ignore[arg-type]
          open_bank(_config(url), embedder=TopicEmbedder(), read_only=True) as server):  # type: ignore[arg-type]
        assert (summary(local)["index"], summary(server)["index"]) == ("exact", "pgvector")
        for n in range(queries):
            query = " ".join(rng.sample(VOCABULARY, 1 + n % 3))
            k, threshold = (1, 5, 10, 40)[n % 4], (0.5, 0.2, -1.0)[n % 3]
            exclude = None if n % 2 else f"t{n % 30}"
            a = local.search(query, exclude_task_id=exclude, k=k, threshold=threshold)
            b = server.search(query, exclude_task_id=exclude, k=k, threshold=threshold)
            assert [m.item_id for m in a] == [m.item_id for m in b], (query, k, threshold, exclude)
            np.testing.assert_allclose([m.score for m in a], [m.score for m in b], atol=1e-5)
            compared += len(a)
    return compared


def _embedding_is_the_row(url: str) -> None:
    with psycopg.connect(url) as db:
        rows = db.execute("SELECT vector, embedding::real[] FROM lf_items").fetchall()
    assert rows and all(e is not None for _, e in rows)
    for stored, embedding in rows:
        assert np.array_equal(np.frombuffer(bytes(stored), "<f4"), np.asarray(embedding, np.float32))


def test_both_paths_store_and_find_the_same(vector_url: str, pg_server: PgServer) -> None:
    records = _records(160)
    local_url = pg_server.database("parity_local_path")
    _write(vector_url, records, pgvector=True)
    _write(local_url, records, pgvector=False)
    with (open_bank(_config(vector_url), read_only=True, embedder=Refuse()) as a,  # type: ignore[arg-type]
          open_bank(_config(local_url), read_only=True, embedder=Refuse()) as b):  # type: ignore[arg-type]
        assert list(a.lines()) == list(b.lines())  # the same merges and item ids on both paths
        assert a.size == b.size > 250
        merged = sum(1 for r in a.records() for i in r["memory_items"] if i["merged_into"])
    assert merged > 20
    _embedding_is_the_row(vector_url)
    assert _same_search(vector_url) > 300


def test_old_bank_is_filled_without_encoding(vector_url: str) -> None:
    _write(vector_url, _records(120), pgvector=False)  # a bank made before the extension
    with psycopg.connect(vector_url) as db:
        assert not db.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone()
    with open_bank(_config(vector_url), read_only=True, embedder=TopicEmbedder()) as reader:  # type: ignore[arg-type]
        assert reader.view.index is not None and reader.view.index.mode == "exact"  # a reader changes nothing
        with open_bank(_config(vector_url), embedder=Refuse()) as writer:  # type: ignore[arg-type]
            assert writer.view.index is not None and writer.view.index.mode == "pgvector"
        _embedding_is_the_row(vector_url)
        assert _same_search(vector_url, 30) > 100
        # a worker that searches locally writes a row without embedding: a server-ranked reader
        # goes back to its local index (the row is found), the next writer fills the row
        with open_bank(_config(vector_url), read_only=True, embedder=TopicEmbedder()) as server:  # type: ignore[arg-type]
            assert server.view.index is not None and server.view.index.mode == "pgvector"
            late = MemoryItem(title="late", description="late lesson", content="zz top")
            _write(vector_url, [MemoryRecord(memory_id="late", task_id="late/f", task_type="fuzz-c",
                                             query="late", is_success=True, kind="success",
                                             memory_items=[late])], pgvector=False)
            found = server.search(item_key_text("late", late), exclude_task_id=None, k=1, threshold=0.99)
            assert [m.task_id for m in found] == ["late/f"] and server.view.index.mode == "exact"
        with open_bank(_config(vector_url), embedder=Refuse()) as writer:  # type: ignore[arg-type]
            assert writer.view.index is not None and writer.view.index.mode == "pgvector"
        _embedding_is_the_row(vector_url)
        reader.refresh()  # the old local reader takes in the late row as before
        with psycopg.connect(vector_url) as db:
            assert reader.size == db.execute("SELECT COUNT(*) FROM lf_items").fetchone()[0]


def test_concurrent_writers_with_pgvector(vector_url: str, tmp_path: Path) -> None:
    workers, writes = 4, 100
    with open_bank(ExperienceConfig.load().with_overrides(embedding__model="hashing-256",
                                                          bank__store=vector_url)) as bank:
        seed = bank.add_record(MemoryRecord(
            memory_id="rec-seed", task_id="seed/f", task_type="fuzz-c", query="seed", is_success=True,
            kind="success", memory_items=[MemoryItem(title="shared", description="cited by all",
                                                     content="every worker bumps its counters")]))
        assert bank.view.index is not None and bank.view.index.mode == "pgvector"
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, vector_url, str(w), str(writes),
                               seed.added[0], str(tmp_path), "pgvector"], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for w in range(workers)]
    for proc in procs:
        out, err = proc.communicate(timeout=900)
        assert proc.returncode == 0 and out.split() == ["done"], err[-2000:]
    with psycopg.connect(vector_url) as db:
        records = db.execute("SELECT COUNT(*), COUNT(DISTINCT memory_id) FROM lf_records").fetchone()
        items = db.execute("SELECT COUNT(*), COUNT(DISTINCT item_id), COUNT(embedding) "
                           "FROM lf_items").fetchone()
        stats = db.execute("SELECT hit_count, use_count, pass_count FROM lf_items WHERE item_id = %s",
                           (seed.added[0],)).fetchone()
    assert records == (workers * writes + 1,) * 2
    assert items == (workers * writes * 2 + 1,) * 3
    assert stats == (workers * writes,) * 3
    _embedding_is_the_row(vector_url)


def test_past_its_exact_max_items_the_server_uses_hnsw(vector_url: str) -> None:
    _write(vector_url, _records(160), pgvector=True)
    small = _config(vector_url).with_overrides(index__pgvector_exact_max_items=100)
    with open_bank(small, embedder=TopicEmbedder()) as writer:  # type: ignore[arg-type]
        assert writer.view.index is not None and writer.view.index.mode == "pgvector hnsw"
    rng, found, wanted = random.Random(5), 0, 0
    with (open_bank(_config(vector_url, False), embedder=TopicEmbedder(), read_only=True) as exact,  # type: ignore[arg-type]
          open_bank(small, embedder=TopicEmbedder(), read_only=True) as server):  # type: ignore[arg-type]
        assert server.view.index is not None and server.view.index.mode == "pgvector hnsw"
        for n in range(40):
            query = " ".join(rng.sample(VOCABULARY, 1 + n % 3))
            exclude = f"t{n % 30}"
            a = exact.search(query, exclude_task_id=exclude, k=10, threshold=-1.0)
            b = server.search(query, exclude_task_id=exclude, k=10, threshold=-1.0)
            assert len(b) == 10 and all(m.task_id != exclude for m in b)
            assert [m.score for m in b] == sorted((m.score for m in b), reverse=True)
            scores = {m.item_id: m.score for m in a}
            for m in b:
                if m.item_id in scores:
                    assert abs(scores[m.item_id] - m.score) < 1e-5
            found += len(scores.keys() & {m.item_id for m in b})
            wanted += len(a)
    assert found / wanted >= 0.95  # recall of the approximate index against the exact top 10
