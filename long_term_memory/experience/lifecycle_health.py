"""Checking the lifecycle store when a bank opens, and rebuilding it when it is damaged.

A store SQLite cannot read ("file is not a database"), or one that is missing or empty while
the records file is not, is rebuilt by a writer: an unreadable file (with its ``-wal``/``-shm``)
is moved aside as ``<name>.broken-<time>``, never deleted (an empty one is filled in place:
other processes may hold it open, and it holds nothing to keep); item rows, merges and support come
from the records, trust, levels and history from a replay of the lifecycle journal. Without a
journal (a bank written before it existed) nothing can restore those statistics, so the open
refuses with one line naming the file and ``logicfuzz memory repair``, which rebuilds with the
statistics at their defaults when told to. A read-only open never writes, so it refuses too.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from long_term_memory.experience.catalog import BankPaths, catalog_update
from long_term_memory.experience.journal import replay, snapshot
from long_term_memory.experience.lifecycle import LifecycleStore
from long_term_memory.experience.lifecycle_schema import STAT_COLUMNS
from long_term_memory.experience.record_log import RecordLog
from long_term_memory.experience.sqlite_file import is_busy

log = logging.getLogger(__name__)


class BankFileError(ValueError):
    """A bank file is damaged and was not healed; ``hint`` says what to do."""

    def __init__(self, message: str, hint: str = "") -> None:
        """One line saying what is wrong, and one saying what to do."""
        super().__init__(message)
        self.hint = hint


def repair_command(paths: BankPaths) -> str:
    """The command that repairs this bank."""
    return f"logicfuzz memory repair --dir {paths.directory} --task {paths.task}"


def diagnose(store: LifecycleStore, paths: BankPaths) -> str:
    """What is wrong with the store, as the end of a sentence naming it ('' when nothing).

    Call under the bank lock: a writer appends a record and its catalog rows under it, so
    records without any catalog state mean the store was lost, emptied or replaced.
    """
    if store.broken:
        return f"is not a readable SQLite database ({store.broken})"
    if RecordLog(paths.jsonl).size() == 0:
        return ""
    try:
        with store.reading() as conn:
            if conn is None:
                return "is missing or empty"
            state = conn.execute("SELECT COUNT(*) FROM catalog_state").fetchone()[0]
            items = conn.execute("SELECT COUNT(*) FROM items").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        if is_busy(exc):  # another process's lock is not damage
            raise
        return f"is not a readable SQLite database ({exc})"
    return "" if state or items else "is missing or empty"


def move_aside(path: Path) -> str:
    """Rename a damaged database and its WAL files; returns the new name ('' when absent)."""
    stamp = time.strftime("%Y%m%dT%H%M%S")
    moved = ""
    for suffix in ("", "-wal", "-shm"):
        source = Path(f"{path}{suffix}")
        if source.exists():
            target = path.with_name(f"{path.name}.broken-{stamp}{suffix}")
            source.replace(target)
            moved = moved or target.name
    return moved


def ensure_journal(store: LifecycleStore) -> None:
    """Start the journal with a snapshot of the store if it has none (write mode)."""
    if store.journal is None or store.read_only or store.journal.exists():
        return
    with store.transaction() as conn:
        store.journal.append(snapshot(conn, STAT_COLUMNS))


def heal(store: LifecycleStore, paths: BankPaths, read_only: bool, notify: Callable[..., Any],
         force: bool = False) -> None:
    """Check the store; rebuild it from the records and the journal when it is damaged.

    Call under the bank lock, before the view loads.

    Raises:
        BankFileError: the store is damaged and the bank is read-only, or there is no journal
            to restore the statistics from and ``force`` is not set.
    """
    problem = diagnose(store, paths)
    journal = store.journal
    if not problem:
        ensure_journal(store)
        return
    has_journal = journal is not None and journal.exists()
    where = f"{paths.lifecycle}"
    if read_only:
        raise BankFileError(f"lifecycle store {where} {problem}",
                            f"run `{repair_command(paths)}` to rebuild it from the records"
                            + (" and the lifecycle journal" if has_journal else ""))
    if not has_journal and not force:
        raise BankFileError(
            f"lifecycle store {where} {problem}, and there is no lifecycle journal to restore trust, "
            "levels and hits from",
            f"run `{repair_command(paths)}` to rebuild it (the records are kept; trust, levels and "
            "hits restart from their defaults; the damaged file is kept as a backup)")
    backup = ""
    if store.broken:
        store.close()
        backup = move_aside(paths.lifecycle)
        store.reopen()
    if store.broken:
        raise BankFileError(f"lifecycle store {where} cannot be recreated ({store.broken})",
                            "check the directory's permissions and free space")
    store.update_catalog(catalog_update(RecordLog(paths.jsonl).read_from(0).records, None, full=True))
    decisions = skipped = 0
    if has_journal and journal is not None:
        entries, skipped = journal.entries()
        with store.transaction() as conn:
            decisions = replay(conn, entries, STAT_COLUMNS)
    else:
        ensure_journal(store)
    log.warning("%s %s: rebuilt from %s%s (%d decisions replayed)%s", paths.lifecycle.name, problem,
                paths.jsonl.name, " and the lifecycle journal" if has_journal else "", decisions,
                f"; the damaged file is kept as {backup}" if backup else "")
    notify("memory.bank.repair", action="rebuild lifecycle store", file=paths.lifecycle.name,
           problem=problem, backup=backup, decisions_replayed=decisions,
           journal=has_journal, journal_lines_skipped=skipped)


def check_files(paths: BankPaths, read_only: bool) -> None:
    """A quick check before a run: refuse when the lifecycle store is damaged beyond healing.

    Loads no model and writes nothing (the store is opened ``immutable``); what a writer can
    heal on open passes.

    Raises:
        BankFileError: the store is damaged and this run could not rebuild it.
    """
    if RecordLog(paths.jsonl).size() == 0:
        return
    path = paths.lifecycle
    problem = "is missing or empty"
    if path.is_file() and path.stat().st_size > 0:
        try:
            conn = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
            try:
                conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
                problem = ""
            finally:
                conn.close()
        except sqlite3.DatabaseError as exc:
            problem = f"is not a readable SQLite database ({exc})"
    if not problem or (not read_only and paths.journal.is_file()):
        return
    raise BankFileError(f"lifecycle store {path} {problem}",
                        f"run `{repair_command(paths)}` to rebuild it from the records"
                        + ("" if paths.journal.is_file() else
                           " (no lifecycle journal: trust, levels and hits restart from their defaults)"))
