"""One SQLite file shared by processes: WAL and a busy timeout for writers, snapshots for readers.

Write mode opens the file in WAL mode with a 30 s busy timeout, so several processes write one
database safely; :meth:`SqliteFile.transaction` wraps ``BEGIN IMMEDIATE`` ... ``COMMIT``.
Switching a file to WAL can fail at once with "database is locked" while another process is
creating or converting it (SQLite does not call the busy handler there), so opening retries for
as long as the busy timeout; a lock is never mistaken for a damaged file.
Read-only mode never touches the file: opening a WAL database read-only in place would leave
``-wal``/``-shm`` files behind, so it reads a private copy, refreshed when the files change.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

BUSY_TIMEOUT_MS = 30_000
_BUSY_CODES = (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED (primary codes)


def is_busy(exc: BaseException) -> bool:
    """Whether ``exc`` says another connection holds a lock (transient, not damage)."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in _BUSY_CODES
    return "locked" in str(exc) or "busy" in str(exc)


class SqliteFile:
    """A connection to one database file, in write or read-only (snapshot) mode."""

    def __init__(self, path: Path, schema: str, read_only: bool = False) -> None:
        """Open the database; write mode creates it and its schema."""
        self.path, self.read_only = path, read_only
        self._lock = threading.Lock()
        self._snapshot_dir: str | None = None
        self._stamp: tuple[Any, ...] | None = None
        self._conn: sqlite3.Connection | None = None
        if not read_only:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = self._open_writer(schema)

    def _open_writer(self, schema: str) -> sqlite3.Connection:
        """Connect in WAL mode and create the schema, retrying while another process holds a lock.

        Raises:
            sqlite3.OperationalError: still locked after the busy timeout, or any other error.
        """
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        delay = 0.005
        while True:
            conn = self._connect(str(self.path))
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=FULL")
                conn.executescript(schema)
                return conn
            except sqlite3.OperationalError as exc:
                conn.close()
                if not is_busy(exc) or time.monotonic() + delay > deadline:
                    raise
            time.sleep(delay)
            delay = min(delay * 2, 0.25)

    @staticmethod
    def _connect(target: str) -> sqlite3.Connection:
        conn = sqlite3.connect(target, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                               check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        return conn

    def _files_stamp(self) -> tuple[Any, ...]:
        out: list[Any] = []
        for suffix in ("", "-wal"):
            try:
                st = Path(f"{self.path}{suffix}").stat()
                out += [st.st_size, st.st_mtime_ns, st.st_ino]
            except FileNotFoundError:
                out += [None]
        return tuple(out)

    def _snapshot(self) -> sqlite3.Connection | None:
        stamp = self._files_stamp()
        if stamp == self._stamp:
            return self._conn
        self._close()
        self._stamp = stamp
        if not self.path.exists():
            return None
        self._snapshot_dir = tempfile.mkdtemp(prefix="logicfuzz-lifecycle-")
        copy = Path(self._snapshot_dir) / "snapshot.sqlite"
        shutil.copyfile(self.path, copy)
        if Path(f"{self.path}-wal").exists():
            shutil.copyfile(f"{self.path}-wal", f"{copy}-wal")
        self._conn = self._connect(str(copy))
        return self._conn

    def _close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._snapshot_dir:
            shutil.rmtree(self._snapshot_dir, ignore_errors=True)
            self._snapshot_dir = None

    def close(self) -> None:
        """Close the connection (the last writer's close checkpoints and removes the WAL)."""
        with self._lock:
            self._close()

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection | None]:
        """A connection to read from, or None when the database does not exist (read-only)."""
        with self._lock:
            yield self._snapshot() if self.read_only else self._conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on any exception).

        Raises:
            PermissionError: the file is open read-only.
        """
        with self._lock:
            if self.read_only or self._conn is None:
                raise PermissionError(f"{self.path.name} is open read-only; nothing may be written")
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
