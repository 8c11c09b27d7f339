"""The lifecycle journal, ``<task>.lifecycle.jsonl``: the bank's own log of lifecycle writes.

The SQLite lifecycle store is a fast index, and a single file: one bad sector or a stray ``rm``
would lose every item's trust, level and hit history. So every decision the store applies is
also appended here, inside the same SQLite transaction (before its ``COMMIT``, so a crash keeps
it in the journal at worst twice, never zero times): the decision row, its hit and validation
rows, and the complete statistics of each item it touched. A store that is corrupt, empty or
gone is rebuilt from the records (``<task>.jsonl``: items, merges, support) and a replay of this
journal (statistics, history), in order, idempotently (rows are keyed by decision id).

Each line is ``{"v": 1, "type": "decision" | "snapshot", "ts": ..., "decisions": [...],
"hits": [...], "validations": [...], "stats": [...]}`` with rows in table column order. A bank
written before the journal existed gets one ``snapshot`` line (every row) when a writer first
opens it; a new bank gets an empty snapshot, which marks the journal as complete.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)
JOURNAL_VERSION = 1


@dataclass
class JournalEntry:
    """Rows one decision (or a snapshot) wrote, in table column order."""

    kind: str = "decision"
    decisions: list[list[Any]] = field(default_factory=list)
    hits: list[list[Any]] = field(default_factory=list)
    validations: list[list[Any]] = field(default_factory=list)
    stats: list[list[Any]] = field(default_factory=list)


class Journal:
    """Append and read the journal file."""

    def __init__(self, path: Path) -> None:
        """Use ``path`` (created by :meth:`append`)."""
        self.path = path

    def exists(self) -> bool:
        """True when the bank keeps a journal (its first line is a snapshot)."""
        return self.path.is_file() and self.path.stat().st_size > 0

    def append(self, entry: JournalEntry) -> None:
        """Append one line and fsync it (under an ``flock``: several processes write)."""
        line = json.dumps(
            {
                "v": JOURNAL_VERSION,
                "type": entry.kind,
                "ts": time.time(),
                "decisions": entry.decisions,
                "hits": entry.hits,
                "validations": entry.validations,
                "stats": entry.stats,
            },
            separators=(",", ":"),
        )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            data = memoryview((line + "\n").encode())
            while data:
                data = data[os.write(fd, data) :]
            os.fsync(fd)
        finally:
            os.close(fd)

    def entries(self) -> tuple[list[JournalEntry], int]:
        """Every readable entry in order, and how many lines had to be skipped."""
        try:
            lines = self.path.read_bytes().split(b"\n")
        except FileNotFoundError:
            return [], 0
        out, skipped = [], 0
        for line in lines:
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
                out.append(JournalEntry(str(raw["type"]), raw["decisions"], raw["hits"],
                                        raw["validations"], raw["stats"]))
            except (ValueError, KeyError, TypeError, RecursionError):
                skipped += 1
        if skipped:
            log.warning("%s: skipped %d unreadable lines", self.path.name, skipped)
        return out, skipped


def snapshot(conn: sqlite3.Connection, stat_columns: tuple[str, ...]) -> JournalEntry:
    """Every decision, hit, validation and item statistics row of a store."""
    return JournalEntry(
        kind="snapshot",
        decisions=[list(r) for r in conn.execute("SELECT * FROM decisions ORDER BY ts")],
        hits=[list(r) for r in conn.execute("SELECT * FROM hits ORDER BY ts")],
        validations=[list(r) for r in conn.execute("SELECT * FROM validations ORDER BY ts")],
        stats=[list(r) for r in conn.execute(f"SELECT {', '.join(stat_columns)} FROM items")],
    )


def replay(conn: sqlite3.Connection, entries: list[JournalEntry], stat_columns: tuple[str, ...]) -> int:
    """Apply journal entries to a store whose item rows came from the records; returns decisions.

    Statistics overwrite the item's row (an item no longer in the records is skipped);
    ``support`` and ``created_at`` stay as the records say (merges are in the records).
    """
    restored = [c for c in stat_columns if c not in ("item_id", "support", "created_at")]
    update = f"UPDATE items SET {', '.join(f'{c} = ?' for c in restored)} WHERE item_id = ?"
    where = {c: i for i, c in enumerate(stat_columns)}
    known = {row[0] for row in conn.execute("SELECT item_id FROM items")}
    decisions = 0
    for entry in entries:
        for row in entry.decisions:
            decisions += conn.execute("INSERT OR IGNORE INTO decisions VALUES (?, ?, ?)", row).rowcount
        conn.executemany("INSERT OR IGNORE INTO hits VALUES (?, ?, ?, ?, ?)",
                         [r for r in entry.hits if r[1] in known])
        conn.executemany("INSERT OR IGNORE INTO validations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         [r for r in entry.validations if r[1] in known])
        conn.executemany(update, [[row[where[c]] for c in restored] + [row[0]]
                                  for row in entry.stats if row[0] in known])
    return decisions
