"""The experience bank in PostgreSQL: many workers on many machines share one bank.

The rows (``pg_lifecycle``) are the truth. Each process keeps an in-memory index of the item
vectors and takes in only the rows it has not seen yet (``seq`` greater than the last one it
read): vectors are stored, never encoded again. When the server has pgvector (and
``index.pgvector`` is on), the server ranks the items instead (``pg_vector``) and the process
keeps only their ids. Record writes hold a transaction-scoped
advisory lock on the bank, so a writer's dedupe sees every committed item and ``seq`` grows in
commit order within a bank (an incremental reader never skips a row). Everything above the
storage (search, Gatekeeper decisions, events) is :class:`ExperienceBank`'s own code: this
class only replaces its view, lifecycle and record writes.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from long_term_memory.embeddings import Embedder
from long_term_memory.experience.bank import ExperienceBank
from long_term_memory.experience.catalog import BankPaths, ItemEntry
from long_term_memory.experience.config import ExperienceConfig
from long_term_memory.experience.embedder import DeferredEmbedder, resolve_embedder
from long_term_memory.experience.events import EventLog
from long_term_memory.experience.model_guard import fingerprint_of
from long_term_memory.experience.models import MemoryRecord, item_key_text
from long_term_memory.experience.pg_lifecycle import PgLifecycle, create_schema
from long_term_memory.experience.pg_vector import embedding_values, insert_columns, ready
from long_term_memory.experience.pg_view import PgView
from long_term_memory.experience.record_log import _dumps, _loads
from long_term_memory.experience.scoped import ScopedLessons
from long_term_memory.experience.writes import AddResult, ReadOnlyBankError, emit_written
from long_term_memory.shared_store import StoreError, connect, shown


def _location(url: str) -> Path:
    parts = urlsplit(url)
    return Path(f"postgresql:{parts.hostname or 'local'}:{parts.port or 5432}{parts.path}")


def _stored_embedder(url: str, task: str, model: str) -> Embedder:
    """A model loaded only when it must encode, when the bank's vectors were made with it."""
    with connect(url, autocommit=True) as conn:
        row = (conn.execute("SELECT model, dim FROM lf_bank WHERE bank = %s", (task,)).fetchone()
               if conn.execute("SELECT to_regclass('lf_bank')").fetchone()[0] else None)
    return DeferredEmbedder(model, int(row[1])) if row and row[0] == model else resolve_embedder(model)


class PgExperienceBank(ExperienceBank):
    """:class:`ExperienceBank` over PostgreSQL rows instead of files."""

    def __init__(self, url: str, task: str, config: ExperienceConfig, embedder: Embedder,
                 read_only: bool, events: EventLog | None = None) -> None:
        """Use :meth:`open_store`."""
        self.paths = BankPaths(_location(url), task)
        self.config, self.embedder, self.read_only, self.url = config, embedder, read_only, url
        self.notices: list[dict[str, Any]] = []
        self._delivered, self._events = 0, events
        self._mutex = threading.RLock()
        self._lock_depth = 0
        self._presence = None
        self._conn = connect(url, autocommit=True)
        self._life = PgLifecycle(self._conn, task, config.gatekeeper, self._mutex)  # type: ignore[assignment]
        view = PgView(task, config, embedder.dim)
        view.conn = self._conn
        self._view = view  # type: ignore[assignment]
        self._pg_view = view
        self._scoped = ScopedLessons()

    @classmethod
    def open_store(cls, url: str, task: str, config: ExperienceConfig,
                   embedder: Embedder | None = None, *, read_only: bool = False,
                   events: EventLog | None = None) -> PgExperienceBank:
        """Open bank ``task`` in the database at ``url`` (write mode: create its tables).

        Raises:
            StoreError: the database cannot be reached, or the bank holds another model's vectors.
        """
        embedder = embedder or _stored_embedder(url, task, config.embedding.model)
        bank = cls(url, task, config, embedder, read_only, events)
        try:
            bank._prepare()
        except BaseException:
            bank.close()
            raise
        return bank

    def _prepare(self) -> None:
        conn, model = self._conn, self.config.embedding.model
        if not self.read_only:
            create_schema(conn)
        elif not conn.execute("SELECT to_regclass('lf_bank')").fetchone()[0]:
            return  # an empty database: nothing stored, nothing to create
        with self._mutex, conn.transaction():
            row = conn.execute("SELECT model, dim FROM lf_bank WHERE bank = %s",
                               (self.paths.task,)).fetchone()
            if row is None and not self.read_only:
                conn.execute("INSERT INTO lf_bank VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                             (self.paths.task, model, self.embedder.dim, ""))
                row = (model, self.embedder.dim)
        if row is not None and (row[0] != model or int(row[1]) != self.embedder.dim):
            raise StoreError(f"bank {self.paths.task} in {shown(self.url)} holds {row[0]} vectors "
                             f"({row[1]}-d), not {model}: set embedding.model to {row[0]} or use "
                             "another bank.task")
        if row is not None:
            self._choose_search()
            self.refresh()

    def _choose_search(self) -> None:
        """Rank in SQL when the config allows it and the server has pgvector (``pg_vector.ready``)."""
        view = self._pg_view
        if self.config.index.pgvector and ready(self._conn, self.paths.task, self.embedder.dim,
                                                self.read_only, self._mutex):
            view.sql, view.writer = True, not self.read_only
            view.load()

    @contextmanager
    def _locked(self) -> Iterator[None]:
        with self._mutex:
            yield

    def close(self) -> None:
        """Close the connection (safe to call twice)."""
        if not self._conn.closed:
            self._conn.close()

    def refresh(self) -> None:
        """Take in other workers' writes now (search and add do this themselves)."""
        with self._mutex:
            if self._conn.execute("SELECT to_regclass('lf_items')").fetchone()[0]:
                self._view.sync()

    @property
    def record_count(self) -> int:
        """Stored records."""
        with self._mutex:
            if not self._conn.execute("SELECT to_regclass('lf_records')").fetchone()[0]:
                return 0
            return int(self._conn.execute("SELECT COUNT(*) FROM lf_records WHERE bank = %s",
                                          (self.paths.task,)).fetchone()[0])

    def record(self, memory_id: str) -> dict[str, Any] | None:
        """A stored record as written, or None."""
        with self._mutex:
            row = self._conn.execute("SELECT line FROM lf_records WHERE bank = %s AND memory_id = %s",
                                     (self.paths.task, memory_id)).fetchone()
        return None if row is None else _loads(bytes(row[0]))

    def lines(self) -> Iterator[bytes]:
        """Every record's JSONL line (with its newline), in the order they were stored."""
        with self._mutex:
            if not self._conn.execute("SELECT to_regclass('lf_records')").fetchone()[0]:
                return iter(())
            rows = self._conn.execute("SELECT line FROM lf_records WHERE bank = %s ORDER BY seq",
                                      (self.paths.task,)).fetchall()
        return (bytes(r[0]) + b"\n" for r in rows)

    def records(self) -> Iterator[dict[str, Any]]:
        """Every stored record, in order."""
        for line in self.lines():
            yield _loads(line)

    @contextmanager
    def write_lock(self) -> Iterator[None]:
        """Maintenance that rewrites files (prune) has no PostgreSQL form yet.

        Raises:
            StoreError: always.
        """
        raise StoreError(f"this command works on file banks only; bank {self.paths.task} is in "
                         f"{shown(self.url)}: export it (memory export --store ... --to-dir DIR), "
                         "work on the files, import it again")
        yield  # pragma: no cover

    def add_record(self, record: MemoryRecord, events: EventLog | None = None) -> AddResult:
        """Store a record in one transaction, merging items that repeat a stored one.

        Raises:
            ReadOnlyBankError: the bank was opened read-only.
        """
        if self.read_only:
            raise ReadOnlyBankError(f"bank {self.paths.task} is open read-only; nothing was stored")
        record = MemoryRecord.model_validate(record.model_dump())
        vectors = self.embedder.encode([item_key_text(record.query, i) for i in record.memory_items])
        if not self._view.fingerprint and not isinstance(self.embedder, DeferredEmbedder):
            self._view.fingerprint = fingerprint_of(self.embedder)
        conn, bank = self._conn, self.paths.task
        with self._mutex, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"logicfuzz-bank:{bank}",))
            self._view.sync()
            if conn.execute("SELECT 1 FROM lf_records WHERE bank = %s AND memory_id = %s",
                            (bank, record.memory_id)).fetchone():
                return AddResult(record.memory_id, duplicate=True)
            result, stored, rows, entries = self._dedupe(record, vectors)
            line = _dumps(record.model_copy(update={"memory_items": stored}).model_dump(mode="json"))
            self._insert(conn, record, line, entries, rows, result)
        if events is not None:
            emit_written(events, record, result, stored)
        return result

    def _insert(self, conn: Any, record: MemoryRecord, line: bytes, entries: list[ItemEntry],
                rows: np.ndarray, result: AddResult) -> None:
        bank, initial, now = self.paths.task, self.config.gatekeeper.initial_trust, record.created_at
        column, value = insert_columns(self._pg_view.sql)
        conn.execute("INSERT INTO lf_records (bank, memory_id, task_id, line) VALUES (%s, %s, %s, %s)",
                     (bank, record.memory_id, record.task_id, line))
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO lf_items (bank, item_id, memory_id, task_id, title, description, content, "
                "is_success, query, digest, vector, status, validation_level, trust, consecutive_fail, "
                "hit_count, use_count, pass_count, partial_count, fail_count, support, created_at, "
                f"last_pass_at, updated_at{column}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
                f"'active', 0, %s, 0, 0, 0, 0, 0, 0, 1, %s, 0, %s{value})",
                [(bank, e.item_id, e.memory_id, e.task_id, e.title, e.description, e.content,
                  e.is_success, e.query, e.digest, np.asarray(rows[n], dtype="<f4").tobytes(),
                  initial, e.created_at, now, *extra)
                 for (n, e), extra in zip(enumerate(entries), embedding_values(self._pg_view.sql, rows),
                                          strict=True)])
        for position, (target, _why) in result.merged.items():
            if conn.execute("INSERT INTO lf_merges VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                            (bank, record.memory_id, position, target, record.task_id, now)).rowcount:
                conn.execute("UPDATE lf_items SET support = support + 1, updated_at = %s "
                             "WHERE bank = %s AND item_id = %s", (now, bank, target))
