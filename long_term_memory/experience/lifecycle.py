"""Lifecycle statistics in SQLite: per-item trust and levels, hit and validation history.

The same database holds the bank's catalog (each item's owner task, record offset and text
digest; each record's offset, length and CRC-32) stamped with the vectors' generation and the
JSONL length and CRC-32 it describes, so a bank whose files agree opens without parsing its
JSONL, and one whose JSONL changed behind its back is caught (see ``view``).

Every decision is also written to the lifecycle journal (``journal``), from which a lost or
corrupt store is rebuilt (``lifecycle_health``).

Every post-run write happens in one transaction keyed by the decision id: a run resumed after
a crash replays its decision and the second attempt changes nothing. (WAL, busy timeout and
read-only snapshots: see ``sqlite_file``.)
"""

from __future__ import annotations

import dataclasses
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from long_term_memory.experience.config import GatekeeperConfig
from long_term_memory.experience.journal import Journal, JournalEntry
from long_term_memory.experience.lifecycle_rows import (
    Applied,
    Catalog,
    CatalogUpdate,
    NewItem,
    validation_change,
)
from long_term_memory.experience.lifecycle_schema import INSERT_ITEM, SCHEMA, SELECT_STATS, STAT_COLUMNS
from long_term_memory.experience.models import HitRef, ItemStats, ValidationPlan
from long_term_memory.experience.rules import apply_hit, apply_validation
from long_term_memory.experience.sqlite_file import SqliteFile, is_busy


class LifecycleStore(SqliteFile):
    """``<task>.lifecycle.sqlite``: item statistics, hit/validation/merge history, catalog."""

    def __init__(self, path: Path, config: GatekeeperConfig, read_only: bool = False,
                 journal: Path | None = None) -> None:
        """Open (write mode: create) the database; a file SQLite cannot read sets :attr:`broken`.

        Raises:
            sqlite3.OperationalError: another process kept the file locked past the busy timeout
                (a lock is not damage: nothing is moved aside or rebuilt).
        """
        self.broken = ""
        try:
            super().__init__(path, SCHEMA, read_only)
            if not read_only:
                self._migrate()
        except sqlite3.DatabaseError as exc:
            self.close()
            if is_busy(exc):
                raise
            self.broken = str(exc)
        self.config = config
        self.journal = Journal(journal) if journal is not None else None

    def reopen(self) -> None:
        """Open the file again (after a damaged one was moved aside: creates a new one)."""
        self.close()
        self.__init__(self.path, self.config, self.read_only,  # type: ignore[misc]
                      self.journal.path if self.journal else None)

    def _migrate(self) -> None:
        """Add the checksum columns to a store written before they existed."""
        assert self._conn is not None
        for table, column, kind in (("records", "length", "INTEGER NOT NULL DEFAULT -1"),
                                    ("records", "crc", "INTEGER"), ("catalog_state", "jsonl_crc", "INTEGER")):
            if column not in {r[1] for r in self._conn.execute(f"PRAGMA table_info({table})")}:
                self._conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")

    def _default(self, item: NewItem) -> ItemStats:
        return ItemStats(item_id=item.item_id, trust=self.config.initial_trust, created_at=item.created_at)

    def _insert(self, conn: sqlite3.Connection, item: NewItem, now: float, upsert: bool) -> ItemStats:
        stats = self._default(item)
        conflict = (" ON CONFLICT(item_id) DO UPDATE SET memory_id = excluded.memory_id, "
                    "task_id = excluded.task_id, digest = excluded.digest, "
                    "record_offset = excluded.record_offset") if upsert else ""
        conn.execute(INSERT_ITEM + conflict, (item.memory_id, item.task_id, now, item.digest, item.offset,
                                               *dataclasses.astuple(stats)))
        return stats

    def update_catalog(self, update: CatalogUpdate, now: float | None = None) -> None:
        """Create or refresh item rows, merges, record rows and the catalog stamp, atomically.

        Existing items keep their statistics; only their owner, offset and digest are refreshed.
        Merges count once each (a replay adds nothing).
        """
        now = time.time() if now is None else now
        records = [(*r, -1, None)[:5] for r in update.records]
        with self.transaction() as conn:
            if update.full:
                conn.execute("UPDATE items SET record_offset = -1")
            for item in update.items:
                self._insert(conn, item, now, upsert=True)
            for memory_id, position, item_id, task_id in update.merges:
                if conn.execute("INSERT OR IGNORE INTO merges VALUES (?, ?, ?, ?, ?)",
                                (memory_id, position, item_id, task_id, now)).rowcount:
                    conn.execute("UPDATE items SET support = support + 1, updated_at = ? WHERE item_id = ?",
                                 (now, item_id))
            if update.full:
                conn.execute("DELETE FROM records")
            conn.executemany("INSERT INTO records VALUES (?, ?, ?, ?, ?) ON CONFLICT(memory_id) DO UPDATE "
                             "SET task_id = excluded.task_id, record_offset = excluded.record_offset, "
                             "length = excluded.length, crc = excluded.crc", records)
            if update.state is not None:
                conn.execute("INSERT OR REPLACE INTO catalog_state VALUES (1, ?, ?, ?)",
                             (*update.state, None)[:3])

    def catalog(self) -> Catalog:
        """The stored catalog (empty when there is no database).

        Each column comes back as one ``group_concat`` string split in C: at 100k items this is
        several times faster than building 100k row tuples.
        """
        sep = "\x1f"
        with self.reading() as conn:
            if conn is None:
                return Catalog([], [], [], [], {}, None)
            row = conn.execute("SELECT generation, jsonl_offset, jsonl_crc FROM catalog_state").fetchone()
            columns = conn.execute(
                "SELECT group_concat(item_id, char(31)), group_concat(task_id, char(31)), "
                "group_concat(record_offset, char(31)), group_concat(digest, char(31)) "
                "FROM items WHERE record_offset >= 0").fetchone()  # table order; columns_for copes
            records = conn.execute("SELECT group_concat(memory_id, char(31)), "
                                   "group_concat(record_offset, char(31)), "
                                   "group_concat(ifnull(crc, -1), char(31)) FROM records").fetchone()
        ids, tasks, offsets, digests = ((c or "").split(sep) if c else [] for c in columns)
        names, starts, crcs = ((c or "").split(sep) if c else [] for c in records)
        return Catalog(ids, tasks, list(map(int, offsets)), digests,
                       dict(zip(names, map(int, starts), strict=True)),
                       (row[0], int(row[1])) if row else None,
                       row[2] if row else None,
                       {n: c for n, c in zip(names, map(int, crcs), strict=True) if c >= 0})

    def stats(self, item_ids: Sequence[str]) -> dict[str, ItemStats]:
        """Stats of the given items that have a row (missing ones are absent)."""
        out: dict[str, ItemStats] = {}
        ids = list(dict.fromkeys(item_ids))
        with self.reading() as conn:
            if conn is None or not ids:
                return out
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                rows = conn.execute(f"{SELECT_STATS} WHERE item_id IN "
                                    f"({', '.join('?' * len(chunk))})", chunk).fetchall()
                out.update({row[0]: ItemStats(*row) for row in rows})
        return out

    def blocked_runs(self, item_ids: Sequence[str]) -> dict[str, int]:
        """Runs that matched each item while it was blocked, since its last validation."""
        ids = list(dict.fromkeys(item_ids))
        with self.reading() as conn:
            if conn is None or not ids:
                return {}
            rows = conn.execute(
                "SELECT h.item_id, COUNT(*) FROM hits h WHERE h.shown = 0 AND h.item_id IN "
                f"({', '.join('?' * len(ids))}) AND h.ts > COALESCE((SELECT MAX(v.ts) FROM "
                "validations v WHERE v.item_id = h.item_id), 0) GROUP BY h.item_id", ids).fetchall()
        return {item_id: int(count) for item_id, count in rows}

    def set_status(self, item_id: str, status: str, now: float | None = None) -> ItemStats | None:
        """Set an item's status (``memory unblock``); None when the item has no row."""
        now = time.time() if now is None else now
        with self.transaction() as conn:
            row = self._row(conn, item_id)
            if row is None:
                return None
            stats = dataclasses.replace(row, status=status)
            self._store(conn, stats, now)
            if self.journal is not None:  # a rebuilt store keeps the status too
                self.journal.append(JournalEntry(kind="status", stats=[list(dataclasses.astuple(stats))]))
        return stats

    def all_stats(self) -> dict[str, ItemStats]:
        """Every item's stats."""
        with self.reading() as conn:
            if conn is None:
                return {}
            rows = conn.execute(SELECT_STATS).fetchall()
        return {row[0]: ItemStats(*row) for row in rows}

    def apply(self, decision_id: str, task_id: str, hits: Sequence[HitRef],
              validations: Sequence[ValidationPlan], known: dict[str, NewItem],
              now: float | None = None) -> Applied:
        """Record hits and validations of one decision, at most once, atomically."""
        now = time.time() if now is None else now
        applied = Applied()
        entry = JournalEntry(decisions=[[decision_id, task_id, now]])
        with self.transaction() as conn:
            if conn.execute("SELECT 1 FROM decisions WHERE decision_id = ?", (decision_id,)).fetchone():
                return Applied(replayed=True)
            conn.execute("INSERT INTO decisions VALUES (?, ?, ?)", (decision_id, task_id, now))
            for ref in hits:
                stats = self._load(conn, ref.item_id, known, now)
                if stats is None:
                    applied.unknown_items.append(ref.item_id)
                    continue
                self._store(conn, apply_hit(stats, ref.shown, ref.used, now), now)
                entry.hits.append([decision_id, ref.item_id, int(ref.shown), int(ref.used), now])
                conn.execute("INSERT INTO hits VALUES (?, ?, ?, ?, ?)", entry.hits[-1])
                applied.hits.append(ref)
            for plan in validations:
                before = self._load(conn, plan.item_id, known, now)
                if before is None:
                    applied.unknown_items.append(plan.item_id)
                    continue
                after = apply_validation(before, plan.result, self.config, now)
                self._store(conn, after, now)
                entry.validations.append([decision_id, plan.item_id, plan.result, int(plan.used),
                                          plan.notes, before.trust, after.trust, before.validation_level,
                                          after.validation_level, after.status, now])
                conn.execute("INSERT INTO validations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             entry.validations[-1])
                applied.validations.append(validation_change(plan, before, after))
            if self.journal is not None:
                touched = list(dict.fromkeys([h[1] for h in entry.hits] + [v[1] for v in entry.validations]))
                entry.stats = [list(dataclasses.astuple(s)) for s in self._rows(conn, touched)]
                self.journal.append(entry)  # before COMMIT: a crash keeps it twice, never zero times
        return applied

    @staticmethod
    def _row(conn: sqlite3.Connection, item_id: str) -> ItemStats | None:
        row = conn.execute(f"{SELECT_STATS} WHERE item_id = ?", (item_id,)).fetchone()
        return None if row is None else ItemStats(*row)

    @classmethod
    def _rows(cls, conn: sqlite3.Connection, item_ids: list[str]) -> list[ItemStats]:
        return [s for s in (cls._row(conn, i) for i in item_ids) if s is not None]

    def _load(self, conn: sqlite3.Connection, item_id: str, known: dict[str, NewItem],
              now: float) -> ItemStats | None:
        row = self._row(conn, item_id)
        if row is not None:
            return row
        item = known.get(item_id)
        return None if item is None else self._insert(conn, item, now, upsert=False)

    def _store(self, conn: sqlite3.Connection, stats: ItemStats, now: float) -> None:
        columns = [c for c in STAT_COLUMNS if c != "item_id"]
        conn.execute(f"UPDATE items SET {', '.join(f'{c} = ?' for c in columns)}, updated_at = ? "
                     "WHERE item_id = ?", (*(getattr(stats, c) for c in columns), now, stats.item_id))

    def history(self, item_id: str) -> dict[str, list[dict[str, Any]]]:
        """Hits, validations and merges recorded for one item, oldest first."""
        out: dict[str, list[dict[str, Any]]] = {"hits": [], "validations": [], "merges": []}
        with self.reading() as conn:
            if conn is None:
                return out
            for table in out:
                cursor = conn.execute(f"SELECT * FROM {table} WHERE item_id = ? ORDER BY ts", (item_id,))
                names = [d[0] for d in cursor.description]
                out[table] = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        return out

    def counts(self) -> dict[str, Any]:
        """Totals for ``memory stats``."""
        with self.reading() as conn:
            if conn is None:
                return {"decisions": 0, "hits": 0, "uses": 0, "validations": {}, "merges": 0}

            def one(sql: str) -> int:
                return int(conn.execute(sql).fetchone()[0] or 0)

            return {"decisions": one("SELECT COUNT(*) FROM decisions"),
                    "hits": one("SELECT SUM(shown) FROM hits"), "uses": one("SELECT SUM(used) FROM hits"),
                    "validations": dict(conn.execute(
                        "SELECT result, COUNT(*) FROM validations GROUP BY result").fetchall()),
                    "merges": one("SELECT COUNT(*) FROM merges")}

    def delete(self, item_ids: Sequence[str]) -> None:
        """Remove items and their history (prune); the catalog must then be rewritten."""
        with self.transaction() as conn:
            for item_id in item_ids:
                for table in ("items", "hits", "validations", "merges"):
                    conn.execute(f"DELETE FROM {table} WHERE item_id = ?", (item_id,))
            conn.execute("DELETE FROM catalog_state")
