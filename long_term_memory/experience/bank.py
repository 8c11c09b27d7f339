"""The experience bank: one per task, searched before a target and written after it.

Files, in ``<directory>/`` (default ``<cache dir>/experience/<task>/``), all named after the
task: ``<task>.jsonl`` (records), ``<task>.embeddings.npy`` + ``<task>.meta.json`` (item vectors,
model, row order), ``<task>.lifecycle.sqlite`` (trust, levels, hits, validations) and
``<task>.lock``; ``<task>.lifecycle.jsonl`` (the lifecycle journal), ``<task>.quarantine.jsonl``
(lines taken out of the records) and ``<task>.writer-<fingerprint>.lock`` (see ``model_guard``).
Writers take the lock, append and fsync, then commit the vectors; a write interrupted at any
point is completed (or cut back) by the next process that opens the bank. Damaged files are
healed on open or refused with one line (``lifecycle_health``, ``view``). A read-only bank
never changes, creates or locks-by-creating any file.

What an open or a sync repaired is kept in :attr:`ExperienceBank.notices` and written to the
first event log a later call receives (``search(events=...)``, ``apply``), so it reaches the
run's ``run.events.jsonl``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self

from fuzzkit.paths import cache_dir
from long_term_memory.embeddings import Embedder
from long_term_memory.experience.bank_reads import BankReads
from long_term_memory.experience.catalog import BankPaths
from long_term_memory.experience.config import ExperienceConfig
from long_term_memory.experience.embedder import resolve_embedder
from long_term_memory.experience.events import EventLog
from long_term_memory.experience.lifecycle import LifecycleStore
from long_term_memory.experience.lifecycle_health import heal
from long_term_memory.experience.model_guard import WriterPresence, fingerprint_of
from long_term_memory.experience.record_log import bank_lock
from long_term_memory.experience.scoped import ScopedLessons
from long_term_memory.experience.view import BankView
from long_term_memory.experience.writes import BankWrites, ReadOnlyBankError

_shared: dict[tuple[str, str, str, bool], ExperienceBank] = {}
_shared_lock = threading.Lock()


class ExperienceBank(BankReads, BankWrites):
    """Search, add and lifecycle updates over one task's bank."""

    def __init__(
        self,
        paths: BankPaths,
        config: ExperienceConfig,
        embedder: Embedder,
        read_only: bool,
        events: EventLog | None = None,
    ) -> None:
        """Use :meth:`open`."""
        self.paths, self.config, self.embedder, self.read_only = paths, config, embedder, read_only
        self.notices: list[dict[str, Any]] = []
        self._delivered = 0
        self._events = events
        self._mutex = threading.RLock()
        self._lock_depth = 0
        self._presence: WriterPresence | None = None
        self._life = LifecycleStore(paths.lifecycle, config.gatekeeper, read_only=read_only,
                                    journal=paths.journal)
        self._view = BankView(paths, config, embedder, read_only, self._life, self._notify)
        self._scoped = ScopedLessons()

    @classmethod
    def open(
        cls,
        task: str,
        directory: Path | None = None,
        config: ExperienceConfig | None = None,
        embedder: Embedder | None = None,
        *,
        read_only: bool = False,
        events: EventLog | None = None,
        repair: bool = False,
    ) -> ExperienceBank:
        """Open (write mode: create) the bank of ``task``.

        Stored vectors are reused, never re-encoded, unless the embedding model changed (all
        items are embedded again from their text) or an interrupted write left items without
        vectors (those are embedded). ``repair`` reads every file in full and rebuilds a damaged
        lifecycle store even without a journal (statistics at their defaults).

        Raises:
            ExperienceConfigError: the default config file is invalid.
            EmbeddingModelError: the configured embedding model cannot be loaded.
            BankFileError: a damaged file that could not be healed (see ``lifecycle_health``).
            ModelConflictError: a live writer uses the bank with another embedding model.
        """
        config = config or ExperienceConfig.load()
        if directory is None:
            directory = (
                Path(config.bank.directory).expanduser()
                if config.bank.directory
                else cache_dir() / "experience" / task
            )
        embedder = embedder or resolve_embedder(config.embedding.model)
        bank = cls(BankPaths(Path(directory), task), config, embedder, read_only, events)
        try:
            with bank._locked():
                if not read_only:
                    bank._view.fingerprint = fingerprint_of(embedder)
                heal(bank._life, bank.paths, read_only, bank._notify, force=repair)
                bank._view.load(full=repair)
                if not read_only:
                    bank._presence = WriterPresence(bank.paths, bank._view.fingerprint)
        except BaseException:
            bank.close()
            raise
        return bank

    @classmethod
    def shared(cls, config: ExperienceConfig, *, read_only: bool, embedder: Embedder | None = None,
               ) -> ExperienceBank:
        """The process-wide bank for ``config`` (bank task, directory, model) and mode.

        Graph nodes call this on every target: the bank is opened once per process and then
        only follows other processes' appends.
        """
        key = (str(config.bank_directory()), config.bank.task, config.embedding.model, read_only)
        with _shared_lock:
            bank = _shared.get(key)
            if bank is None:
                bank = cls.open(config.bank.task, config.bank_directory(), config, embedder,
                                read_only=read_only)
                _shared[key] = bank
        return bank

    def _notify(self, kind: str, /, **data: Any) -> None:
        notice = {"type": kind, "bank": self.paths.task, **data}
        self.notices.append(notice)
        if self._events is not None:
            self._events.emit(kind, bank=self.paths.task, **data)
            self._delivered = len(self.notices)

    def deliver_notices(self, events: EventLog) -> None:
        """Write the notices no event log has received yet to ``events``."""
        with self._mutex:
            pending, self._delivered = self.notices[self._delivered :], len(self.notices)
        for notice in pending:
            events.emit(notice["type"], **{k: v for k, v in notice.items() if k != "type"})

    @contextmanager
    def _locked(self) -> Iterator[None]:
        # flock locks belong to an open file, so a nested acquisition in the same process would
        # wait for itself: the thread already holding the lock just goes on.
        with self._mutex:
            if self._lock_depth:
                self._lock_depth += 1
                try:
                    yield
                finally:
                    self._lock_depth -= 1
                return
            with bank_lock(self.paths.lock, create=not self.read_only):
                self._lock_depth = 1
                try:
                    yield
                finally:
                    self._lock_depth = 0

    def close(self) -> None:
        """Release the database connection and the writer's model lock (safe to call twice)."""
        self._life.close()
        if self._presence is not None:
            self._presence.release()
            self._presence = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def size(self) -> int:
        """Searchable items."""
        return len(self._view.ids)

    @property
    def record_count(self) -> int:
        """Stored records."""
        return len(self._view.records)

    def refresh(self) -> None:
        """Take in other processes' writes now (search and add do this themselves)."""
        with self._locked():
            self._view.sync()

    @property
    def lifecycle(self) -> LifecycleStore:
        """The SQLite store (prune uses it)."""
        return self._life

    @property
    def view(self) -> BankView:
        """The in-memory view (prune and the benchmark use it)."""
        return self._view

    @contextmanager
    def write_lock(self) -> Iterator[None]:
        """Hold the bank's lock, synced with the files (maintenance such as prune).

        Raises:
            ReadOnlyBankError: the bank was opened read-only.
        """
        if self.read_only:
            raise ReadOnlyBankError(f"bank {self.paths.task} is open read-only")
        with self._locked():
            self._view.sync()
            yield

    def reload(self) -> None:
        """Re-read everything from disk; call while holding :meth:`write_lock` after rewriting."""
        self._view.load()
