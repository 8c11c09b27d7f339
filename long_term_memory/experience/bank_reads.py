"""Reading the bank: search (with lifecycle standing), entries, stats, records and history."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from fuzzkit.api import FunctionDecl
from long_term_memory.embeddings import Embedder
from long_term_memory.experience.catalog import ItemEntry
from long_term_memory.experience.config import ExperienceConfig
from long_term_memory.experience.embedder import DeferredEmbedder
from long_term_memory.experience.events import EventLog
from long_term_memory.experience.lifecycle import LifecycleStore
from long_term_memory.experience.matches import Match
from long_term_memory.experience.model_guard import fingerprint_of
from long_term_memory.experience.models import ItemStats
from long_term_memory.experience.rules import freshness
from long_term_memory.experience.scoped import ScopedLessons
from long_term_memory.experience.view import BankView


class BankReads:
    """The reading half of :class:`~long_term_memory.experience.bank.ExperienceBank`."""

    config: ExperienceConfig
    embedder: Embedder
    _view: BankView
    _life: LifecycleStore
    _scoped: ScopedLessons
    _mutex: threading.RLock

    if TYPE_CHECKING:  # provided by ExperienceBank; declared for the type checker only

        def _locked(self) -> AbstractContextManager[None]: ...

        def _notify(self, kind: str, /, **data: Any) -> None: ...

        def deliver_notices(self, events: EventLog) -> None:  # noqa: D102
            ...

    def search(
        self,
        query: str,
        *,
        exclude_task_id: str | None,
        k: int | None = None,
        threshold: float | None = None,
        events: EventLog | None = None,
        target: FunctionDecl | None = None,
        callees: Sequence[FunctionDecl] = (),
        api: Sequence[FunctionDecl] = (),
    ) -> list[Match]:
        """The best items for ``query``, best first.

        At most ``k`` (default ``retrieval.candidates``) items scoring at least ``threshold``
        (default ``retrieval.threshold``), none of them from ``exclude_task_id``. With a
        ``target``, the actionable lessons whose scope fits it follow (up to ``k`` more, scored
        at the threshold): a lesson is recalled by what it applies to, not only by how its words
        resemble the query, so one learned on another library's function of the same shape
        reaches this one. ``callees``: the other API functions the current harness calls (a
        release lesson fitting one of them fits too); ``api``: the library's functions (a call to avoid
        fits a harness that could add it).
        """
        k = self.config.retrieval.candidates if k is None else k
        threshold = self.config.retrieval.threshold if threshold is None else threshold
        vector = self.embedder.encode([query])[0] if k > 0 else None
        with self._locked():
            view = self._view
            if vector is not None and not view.fingerprint and not isinstance(self.embedder,
                                                                              DeferredEmbedder):
                view.fingerprint = fingerprint_of(self.embedder)  # read-only: checked on first encode
                if view.meta is not None and not view.same_model(view.meta):
                    view.load()
            view.sync()
            chosen: list[tuple[ItemEntry, float]] = []
            for attempt in range(2):
                try:
                    chosen = self._chosen(vector, k, threshold, exclude_task_id)
                    break
                except KeyError as exc:  # the JSONL changed behind the catalog: read it in full
                    self._notify("memory.bank.repair", action="reload after a record went missing",
                                 error=str(exc.args[0] if exc.args else exc))
                    if attempt:
                        raise
                    view.load(full=True)
            if target is not None and k > 0:
                fitting = self._fitting(target, exclude_task_id, chosen, callees, api)
                chosen += [(e, threshold) for e in fitting[:k]]
        if events is not None:
            self.deliver_notices(events)
        matches = self._matches(chosen)
        if events is not None:
            events.emit("memory.search.result", query=query, exclude_task_id=exclude_task_id, k=k,
                        threshold=threshold, matches=[_brief(m) for m in matches])
        return matches

    def _fitting(self, target: FunctionDecl, exclude_task_id: str | None,
                 chosen: list[tuple[ItemEntry, float]], callees: Sequence[FunctionDecl],
                 api: Sequence[FunctionDecl] = ()) -> list[ItemEntry]:
        """The lessons recalled by scope (none this time when a record went missing mid-read)."""
        try:
            return self._scoped.fitting(self._view, target, exclude_task_id,
                                        {e.item_id for e, _ in chosen}, callees, api)
        except KeyError as exc:  # the next search reads the rows it missed again
            self._notify("memory.bank.repair", action="recall by scope skipped: a record went missing",
                         error=str(exc.args[0] if exc.args else exc))
            return []

    def _chosen(self, vector: Any, k: int, threshold: float,
                exclude_task_id: str | None) -> list[tuple[ItemEntry, float]]:
        view = self._view
        if not view.ids or vector is None or view.index is None:
            return []
        wanted = k + view.task_items.get(exclude_task_id or "", 0)
        rows = [
            (row, score)
            for row, score in view.index.search(vector, wanted)
            if score >= threshold and view.tasks[row] != exclude_task_id
        ][:k]
        return [(view.entry(row), score) for row, score in rows]

    def _stats_for(self, entries: list[ItemEntry]) -> dict[str, ItemStats]:
        stats = self._life.stats([e.item_id for e in entries])
        for entry in entries:
            if entry.item_id not in stats:
                stats[entry.item_id] = ItemStats(
                    entry.item_id, trust=self.config.gatekeeper.initial_trust, created_at=entry.created_at
                )
        return stats

    def _matches(self, chosen: list[tuple[ItemEntry, float]]) -> list[Match]:
        stats = self._stats_for([e for e, _ in chosen])
        blocked = self._life.blocked_runs([i for i, s in stats.items() if s.status == "blocked"])
        now = time.time()
        out = []
        for entry, score in chosen:
            st = stats[entry.item_id]
            out.append(
                Match(
                    entry.item_id,
                    entry.memory_id,
                    entry.task_id,
                    entry.title,
                    entry.description,
                    entry.content,
                    float(score),
                    st.status,
                    st.validation_level,
                    st.trust,
                    freshness(st, now, self.config.gatekeeper),
                    st.consecutive_fail,
                    entry.is_success,
                    entry.query,
                    st.hit_count,
                    st.use_count,
                    blocked.get(entry.item_id, 0),
                    dict(entry.lesson),
                )
            )
        return out

    def _entry(self, item_id: str) -> ItemEntry | None:
        row = self._view.row_of.get(item_id)
        return self._view.entry(row) if row is not None else None

    def entries(self) -> list[ItemEntry]:
        """Every searchable item, in storage order."""
        with self._mutex:
            return self._view.all_entries()

    def stats(self, item_ids: list[str]) -> dict[str, ItemStats]:
        """Lifecycle stats of items (defaults for items without a row yet)."""
        return self._stats_for([e for i in item_ids if (e := self._entry(i)) is not None])

    def all_stats(self) -> dict[str, ItemStats]:
        """Lifecycle stats of every searchable item."""
        stats = self._life.all_stats()
        out = {}
        for item_id in self._view.ids:
            st = stats.get(item_id)
            if st is None:
                st = self._stats_for([e for e in [self._entry(item_id)] if e is not None])[item_id]
            out[item_id] = st
        return out

    def record(self, memory_id: str) -> dict[str, Any] | None:
        """A stored record as written, or None."""
        offset = self._view.records.get(memory_id)
        return None if offset is None else self._view.log.read_at(offset)

    def records(self) -> Iterator[dict[str, Any]]:
        """Every stored record, in order."""
        for _start, record in self._view.log.read_from(0).records:
            yield record

    def history(self, item_id: str) -> dict[str, list[dict[str, Any]]]:
        """Hits, validations and merges of an item."""
        return self._life.history(item_id)

    def lifecycle_counts(self) -> dict[str, Any]:
        """Totals of decisions, hits, uses, validations and merges."""
        return self._life.counts()


def _brief(m: Match) -> dict[str, Any]:
    """A match as the ``memory.search.result`` event lists it."""
    return {"item_id": m.item_id, "title": m.title, "score": round(m.score, 4), "status": m.status,
            "validation_level": m.validation_level, "trust": m.trust}
