"""What a PostgreSQL bank's search and dedupe read: item columns in row order, and the index.

The view takes in only the rows it has not seen yet (``seq`` greater than the last one it
read). On the local path it keeps their vectors in an in-memory index; on the pgvector path
(:mod:`long_term_memory.experience.pg_vector`) the server ranks and the view keeps ids only.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from typing import Any

import numpy as np

from long_term_memory.experience.catalog import ItemEntry
from long_term_memory.experience.config import ExperienceConfig
from long_term_memory.experience.index import ItemIndex
from long_term_memory.experience.lessons import lesson_fields
from long_term_memory.experience.pg_vector import SqlIndex, backfill

_ENTRY = ("SELECT i.item_id, i.memory_id, i.task_id, i.title, i.description, i.content, i.is_success, "
          "i.query, i.created_at, i.digest, r.line FROM lf_items i JOIN lf_records r "
          "ON r.bank = i.bank AND r.memory_id = i.memory_id WHERE i.bank = %s")


def _entry(row: tuple[Any, ...]) -> ItemEntry:
    """An item row with its lesson (scope, failure, action), read from its record's stored line."""
    *columns, line = row
    record = json.loads(bytes(line))
    item: dict[str, Any] = next((i for i in record.get("memory_items") or []
                                 if i.get("item_id") == columns[0]), {})
    return dataclasses.replace(ItemEntry(*columns), lesson=lesson_fields(item))


class PgView:
    """What search and dedupe read: item columns in row order, and the index."""

    def __init__(self, bank: str, config: ExperienceConfig, dim: int) -> None:
        """An empty view of bank ``bank``."""
        self.bank, self.config, self.dim = bank, config, dim
        self.fingerprint = ""
        self.meta = None  # no vectors file: the model is checked against the bank's row
        self.ids: list[str] = []
        self.tasks: list[str] = []
        self.row_of: dict[str, int] = {}
        self.by_digest: dict[str, str] = {}
        self.task_items: Counter[str] = Counter()
        self.index: ItemIndex | SqlIndex | None = None
        self.last_seq = 0
        self.conn: Any = None
        self.sql = False  # the server ranks (pgvector); set by the bank, kept across load()
        self.writer = False

    def take(self, rows: list[tuple[Any, ...]]) -> None:
        """Add ``(seq, item_id, task_id, digest, vector)`` rows not seen yet, in order."""
        if not rows:
            return
        if self.index is None:
            self.index = (SqlIndex(self) if self.sql else
                          ItemIndex(self.dim, self.config.index.exact_max_items, self.config.index.rerank))
        for seq, item_id, task_id, digest, _ in rows:
            self.row_of[item_id] = len(self.ids)
            self.ids.append(item_id)
            self.tasks.append(task_id)
            self.by_digest.setdefault(digest, item_id)
            self.task_items[task_id] += 1
            self.last_seq = seq
        if not self.sql:
            self.index.add(np.frombuffer(b"".join(bytes(r[4]) for r in rows), dtype="<f4")
                           .reshape(-1, self.dim).copy())

    def sync(self) -> None:
        """Take in the items other workers committed since the last sync.

        On the pgvector path a row without ``embedding`` (written by a worker that searches
        locally) is filled from its stored vector by a writer; a read-only view goes back to
        the local index instead, so no row is ever missing from search.
        """
        last = "embedding IS NULL" if self.sql else "vector"
        rows = self.conn.execute(f"SELECT seq, item_id, task_id, digest, {last} FROM lf_items "
                                 "WHERE bank = %s AND seq > %s ORDER BY seq",
                                 (self.bank, self.last_seq)).fetchall()
        if self.sql and any(r[4] for r in rows):
            if not self.writer:
                self.sql = False
                self.load()
                return
            backfill(self.conn, self.bank, self.dim)
        self.take(rows)
        if isinstance(self.index, SqlIndex) and self.conn.info.transaction_status.name == "IDLE":
            self.index.check_size()

    def load(self, full: bool = False) -> None:
        """Read every item again."""
        conn, sql, writer = self.conn, self.sql, self.writer
        self.__init__(self.bank, self.config, self.dim)  # type: ignore[misc]
        self.conn, self.sql, self.writer = conn, sql, writer
        if sql:
            self.index = SqlIndex(self)  # says which path serves search, even while empty
        self.sync()

    def entry(self, row: int) -> ItemEntry:
        """The item in ``row`` with its record's context."""
        found = self.conn.execute(f"{_ENTRY} AND i.item_id = %s", (self.bank, self.ids[row])).fetchone()
        return _entry(found)

    def all_entries(self) -> list[ItemEntry]:
        """Every item, in storage order."""
        rows = self.conn.execute(f"{_ENTRY} ORDER BY i.seq", (self.bank,)).fetchall()
        return [_entry(r) for r in rows]
