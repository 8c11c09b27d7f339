"""The experience bank's tables in PostgreSQL, and its lifecycle statistics over them.

Every bank (``task``) of a database shares these tables, keyed by ``bank``. The rows are the
truth: a record's exact JSONL bytes (``line``), its items with their vector and statistics,
merges, decisions, hits and validations. Writes are transactions; a decision id is the
idempotency key of its hits and validations (``ON CONFLICT DO NOTHING`` on the decision row),
and the items a decision touches are locked (``FOR UPDATE``, in id order: no deadlock) before
they are read, so concurrent workers never lose a count.

:class:`PgLifecycle` has the surface of ``lifecycle.LifecycleStore`` that the bank uses.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from long_term_memory.experience.config import GatekeeperConfig
from long_term_memory.experience.lifecycle_rows import Applied, NewItem, validation_change
from long_term_memory.experience.models import HitRef, ItemStats, ValidationPlan
from long_term_memory.experience.rules import apply_hit, apply_validation

STAT_COLUMNS = tuple(f.name for f in dataclasses.fields(ItemStats))
_STATS = ", ".join(STAT_COLUMNS)
SCHEMA = """
CREATE TABLE IF NOT EXISTS lf_bank (
  bank TEXT PRIMARY KEY, model TEXT NOT NULL, dim INTEGER NOT NULL, fingerprint TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS lf_records (
  bank TEXT NOT NULL, seq BIGSERIAL, memory_id TEXT NOT NULL, task_id TEXT NOT NULL,
  line BYTEA NOT NULL, PRIMARY KEY (bank, memory_id));
CREATE INDEX IF NOT EXISTS lf_records_seq ON lf_records (bank, seq);
CREATE TABLE IF NOT EXISTS lf_items (
  bank TEXT NOT NULL, seq BIGSERIAL, item_id TEXT NOT NULL, memory_id TEXT NOT NULL,
  task_id TEXT NOT NULL, title TEXT NOT NULL, description TEXT NOT NULL, content TEXT NOT NULL,
  is_success BOOLEAN NOT NULL, query TEXT NOT NULL, digest TEXT NOT NULL, vector BYTEA NOT NULL,
  status TEXT NOT NULL, validation_level INTEGER NOT NULL, trust DOUBLE PRECISION NOT NULL,
  consecutive_fail DOUBLE PRECISION NOT NULL, hit_count INTEGER NOT NULL,
  use_count INTEGER NOT NULL, pass_count INTEGER NOT NULL, partial_count INTEGER NOT NULL,
  fail_count INTEGER NOT NULL, support INTEGER NOT NULL, created_at DOUBLE PRECISION NOT NULL,
  last_pass_at DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL,
  PRIMARY KEY (bank, item_id));
CREATE INDEX IF NOT EXISTS lf_items_seq ON lf_items (bank, seq);
CREATE TABLE IF NOT EXISTS lf_merges (
  bank TEXT NOT NULL, memory_id TEXT NOT NULL, position INTEGER NOT NULL, item_id TEXT NOT NULL,
  task_id TEXT NOT NULL, ts DOUBLE PRECISION NOT NULL, PRIMARY KEY (bank, memory_id, position));
CREATE TABLE IF NOT EXISTS lf_decisions (
  bank TEXT NOT NULL, decision_id TEXT NOT NULL, task_id TEXT NOT NULL,
  ts DOUBLE PRECISION NOT NULL, PRIMARY KEY (bank, decision_id));
CREATE TABLE IF NOT EXISTS lf_hits (
  bank TEXT NOT NULL, decision_id TEXT NOT NULL, item_id TEXT NOT NULL, shown INTEGER NOT NULL,
  used INTEGER NOT NULL, ts DOUBLE PRECISION NOT NULL, PRIMARY KEY (bank, decision_id, item_id));
CREATE TABLE IF NOT EXISTS lf_validations (
  bank TEXT NOT NULL, decision_id TEXT NOT NULL, item_id TEXT NOT NULL, result TEXT NOT NULL,
  used INTEGER NOT NULL, notes TEXT NOT NULL, trust_before DOUBLE PRECISION NOT NULL,
  trust_after DOUBLE PRECISION NOT NULL, level_before INTEGER NOT NULL,
  level_after INTEGER NOT NULL, status_after TEXT NOT NULL, ts DOUBLE PRECISION NOT NULL,
  PRIMARY KEY (bank, decision_id, item_id));
"""
HISTORY_COLUMNS = {
    "hits": ("decision_id", "item_id", "shown", "used", "ts"),
    "validations": ("decision_id", "item_id", "result", "used", "notes", "trust_before",
                    "trust_after", "level_before", "level_after", "status_after", "ts"),
    "merges": ("memory_id", "position", "item_id", "task_id", "ts"),
}


def create_schema(conn: Any) -> None:
    """Create the tables once per database (an advisory lock keeps two creators apart)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('logicfuzz-bank-schema'))")
        conn.execute(SCHEMA)


class PgLifecycle:
    """Statistics and history of one bank's items (the bank's ``_life`` seam)."""

    def __init__(self, conn: Any, bank: str, config: GatekeeperConfig, lock: threading.RLock) -> None:
        """Use ``conn`` (shared with the bank, guarded by ``lock``) for bank ``bank``."""
        self.conn, self.bank, self.config, self._lock = conn, bank, config, lock
        self.read_only = False

    @contextmanager
    def _tx(self) -> Iterator[Any]:
        with self._lock, self.conn.transaction():
            yield self.conn

    def stats(self, item_ids: Sequence[str]) -> dict[str, ItemStats]:
        """Stats of the given items that have a row."""
        ids = list(dict.fromkeys(item_ids))
        if not ids:
            return {}
        with self._tx() as conn:
            rows = conn.execute(f"SELECT {_STATS} FROM lf_items WHERE bank = %s AND item_id = ANY(%s)",
                                (self.bank, ids)).fetchall()
        return {row[0]: ItemStats(*row) for row in rows}

    def all_stats(self) -> dict[str, ItemStats]:
        """Every item's stats."""
        with self._tx() as conn:
            rows = conn.execute(f"SELECT {_STATS} FROM lf_items WHERE bank = %s ORDER BY seq",
                                (self.bank,)).fetchall()
        return {row[0]: ItemStats(*row) for row in rows}

    def blocked_runs(self, item_ids: Sequence[str]) -> dict[str, int]:
        """Runs that matched each item while it was blocked, since its last validation."""
        ids = list(dict.fromkeys(item_ids))
        if not ids:
            return {}
        with self._tx() as conn:
            rows = conn.execute(
                "SELECT h.item_id, COUNT(*) FROM lf_hits h WHERE h.bank = %s AND h.shown = 0 "
                "AND h.item_id = ANY(%s) AND h.ts > COALESCE((SELECT MAX(v.ts) FROM lf_validations v "
                "WHERE v.bank = h.bank AND v.item_id = h.item_id), 0) GROUP BY h.item_id",
                (self.bank, ids)).fetchall()
        return {item_id: int(count) for item_id, count in rows}

    def _store(self, conn: Any, stats: ItemStats, now: float) -> None:
        columns = [c for c in STAT_COLUMNS if c != "item_id"]
        conn.execute(f"UPDATE lf_items SET {', '.join(f'{c} = %s' for c in columns)}, updated_at = %s "
                     "WHERE bank = %s AND item_id = %s",
                     (*(getattr(stats, c) for c in columns), now, self.bank, stats.item_id))

    def set_status(self, item_id: str, status: str, now: float | None = None) -> ItemStats | None:
        """Set an item's status (``memory unblock``); None when the item has no row."""
        now = time.time() if now is None else now
        with self._tx() as conn:
            row = conn.execute(f"SELECT {_STATS} FROM lf_items WHERE bank = %s AND item_id = %s "
                               "FOR UPDATE", (self.bank, item_id)).fetchone()
            if row is None:
                return None
            stats = dataclasses.replace(ItemStats(*row), status=status)
            self._store(conn, stats, now)
        return stats

    def apply(self, decision_id: str, task_id: str, hits: Sequence[HitRef],
              validations: Sequence[ValidationPlan], known: dict[str, NewItem],
              now: float | None = None) -> Applied:
        """Record hits and validations of one decision, at most once, atomically.

        ``known`` is unused: every stored item already has its statistics row.
        """
        now = time.time() if now is None else now
        applied = Applied()
        wanted = sorted({h.item_id for h in hits} | {v.item_id for v in validations})
        with self._tx() as conn:
            fresh = conn.execute("INSERT INTO lf_decisions VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                                 (self.bank, decision_id, task_id, now)).rowcount
            if not fresh:
                return Applied(replayed=True)
            rows = conn.execute(f"SELECT {_STATS} FROM lf_items WHERE bank = %s AND item_id = ANY(%s) "
                                "ORDER BY item_id FOR UPDATE", (self.bank, wanted)).fetchall()
            current = {row[0]: ItemStats(*row) for row in rows}
            for ref in hits:
                stats = current.get(ref.item_id)
                if stats is None:
                    applied.unknown_items.append(ref.item_id)
                    continue
                current[ref.item_id] = apply_hit(stats, ref.shown, ref.used, now)
                conn.execute("INSERT INTO lf_hits VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                             (self.bank, decision_id, ref.item_id, int(ref.shown), int(ref.used), now))
                applied.hits.append(ref)
            for plan in validations:
                before = current.get(plan.item_id)
                if before is None:
                    applied.unknown_items.append(plan.item_id)
                    continue
                after = current[plan.item_id] = apply_validation(before, plan.result, self.config, now)
                conn.execute("INSERT INTO lf_validations VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
                             "%s, %s) ON CONFLICT DO NOTHING",
                             (self.bank, decision_id, plan.item_id, plan.result, int(plan.used), plan.notes,
                              before.trust, after.trust, before.validation_level, after.validation_level,
                              after.status, now))
                applied.validations.append(validation_change(plan, before, after))
            for item_id in wanted:
                if item_id in current:
                    self._store(conn, current[item_id], now)
        return applied

    def history(self, item_id: str) -> dict[str, list[dict[str, Any]]]:
        """Hits, validations and merges recorded for one item, oldest first."""
        out: dict[str, list[dict[str, Any]]] = {}
        with self._tx() as conn:
            for table, columns in HISTORY_COLUMNS.items():
                rows = conn.execute(f"SELECT {', '.join(columns)} FROM lf_{table} WHERE bank = %s "
                                    "AND item_id = %s ORDER BY ts", (self.bank, item_id)).fetchall()
                out[table] = [dict(zip(columns, row, strict=True)) for row in rows]
        return out

    def counts(self) -> dict[str, Any]:
        """Totals for ``memory stats``."""
        with self._tx() as conn:

            def one(sql: str) -> int:
                return int(conn.execute(sql, (self.bank,)).fetchone()[0] or 0)

            return {"decisions": one("SELECT COUNT(*) FROM lf_decisions WHERE bank = %s"),
                    "hits": one("SELECT SUM(shown) FROM lf_hits WHERE bank = %s"),
                    "uses": one("SELECT SUM(used) FROM lf_hits WHERE bank = %s"),
                    "validations": dict(conn.execute(
                        "SELECT result, COUNT(*) FROM lf_validations WHERE bank = %s GROUP BY result",
                        (self.bank,)).fetchall()),
                    "merges": one("SELECT COUNT(*) FROM lf_merges WHERE bank = %s")}

    def close(self) -> None:
        """The bank closes the shared connection."""
