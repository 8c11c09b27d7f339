"""Opening a store while another process holds a lock: retried, never taken for damage.

SQLite answers ``PRAGMA journal_mode=WAL`` with "database is locked" at once (no busy handler)
while another process is creating or converting the file; four writers opening one new bank
hit it about once in 160 opens. The seam here is the connection: it refuses the switch to WAL
the way SQLite does, a given number of times.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from long_term_memory.experience import sqlite_file
from long_term_memory.experience.config import ExperienceConfig
from long_term_memory.experience.lifecycle import LifecycleStore
from long_term_memory.experience.sqlite_file import SqliteFile, is_busy


def _refusing(times: int) -> type[sqlite3.Connection]:
    left = [times]

    class Refusing(sqlite3.Connection):
        def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:  # type: ignore[override]
            if sql.startswith("PRAGMA journal_mode") and left[0] > 0:
                left[0] -= 1
                exc = sqlite3.OperationalError("database is locked")
                exc.sqlite_errorcode = 5  # type: ignore[attr-defined]
                raise exc
            return super().execute(sql, *args)
    return Refusing


def _use(monkeypatch: pytest.MonkeyPatch, factory: type[sqlite3.Connection]) -> None:
    monkeypatch.setattr(SqliteFile, "_connect", staticmethod(
        lambda target: sqlite3.connect(target, isolation_level=None, check_same_thread=False,
                                       factory=factory)))


def test_a_lock_while_switching_to_wal_is_waited_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _use(monkeypatch, _refusing(3))
    store = LifecycleStore(tmp_path / "t.lifecycle.sqlite", ExperienceConfig.load().gatekeeper)
    assert store.broken == ""
    with store.reading() as conn:
        assert conn is not None
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT COUNT(*) FROM items").fetchone()[0] == 0
    store.close()


def test_a_lock_that_outlasts_the_timeout_is_an_error_not_damage(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _use(monkeypatch, _refusing(10**6))
    monkeypatch.setattr(sqlite_file, "BUSY_TIMEOUT_MS", 50)
    path = tmp_path / "t.lifecycle.sqlite"
    path.write_bytes(b"")
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        LifecycleStore(path, ExperienceConfig.load().gatekeeper)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.lifecycle.sqlite"]  # nothing moved aside


def test_is_busy_tells_a_real_lock_from_a_damaged_file(tmp_path: Path) -> None:
    db = tmp_path / "locked.sqlite"
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("CREATE TABLE t (a)")
    holder.execute("BEGIN EXCLUSIVE")
    other = sqlite3.connect(db, timeout=0, isolation_level=None)
    with pytest.raises(sqlite3.OperationalError) as locked:
        other.execute("SELECT * FROM t")
    assert is_busy(locked.value)
    holder.execute("COMMIT")
    holder.close()
    other.close()

    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    conn = sqlite3.connect(junk)
    with pytest.raises(sqlite3.DatabaseError) as damaged:
        conn.execute("SELECT * FROM sqlite_master")
    assert not is_busy(damaged.value)
    conn.close()
