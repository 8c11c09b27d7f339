"""Writing to the bank: records with dedupe, and the post-run decisions of the Gatekeeper.

Order of a record write, all under the bank lock: JSONL line (append + fsync), lifecycle rows
(SQLite transaction), vector rows, meta file (the commit point). A process killed between any
two steps leaves a state the next opener completes: see ``view.BankView.load`` and ``sync``.
"""

from __future__ import annotations

import binascii
import dataclasses
import threading
import uuid
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from long_term_memory.embeddings import Embedder
from long_term_memory.experience.catalog import BankPaths, ItemEntry
from long_term_memory.experience.config import ExperienceConfig
from long_term_memory.experience.events import EventLog
from long_term_memory.experience.faults import armed, crashpoint
from long_term_memory.experience.lifecycle import LifecycleStore
from long_term_memory.experience.lifecycle_rows import CatalogUpdate, NewItem
from long_term_memory.experience.models import (
    GatekeeperDecision,
    MemoryItem,
    MemoryRecord,
    item_id_for,
    item_key_text,
)
from long_term_memory.experience.quarantine import keep_aside
from long_term_memory.experience.view import BankView


class ReadOnlyBankError(PermissionError):
    """A write was attempted on a bank opened read-only (memory mode baseline/retrieve-only)."""


@dataclass
class AddResult:
    """What :meth:`ExperienceBank.add_record` stored."""

    memory_id: str
    duplicate: bool = False
    added: list[str] = field(default_factory=list)
    merged: dict[int, tuple[str, str]] = field(default_factory=dict)  # position -> (id, why)


@dataclass
class ApplyResult:
    """What :meth:`ExperienceBank.apply` wrote."""

    skipped: str = ""
    replayed: bool = False
    record: AddResult | None = None
    hits: int = 0
    validations: list[dict[str, Any]] = field(default_factory=list)


class BankWrites:
    """The writing half of :class:`~long_term_memory.experience.bank.ExperienceBank`."""

    paths: BankPaths
    config: ExperienceConfig
    embedder: Embedder
    read_only: bool
    _view: BankView
    _life: LifecycleStore
    _mutex: threading.RLock

    if TYPE_CHECKING:  # provided by ExperienceBank; declared for the type checker only

        def _locked(self) -> AbstractContextManager[None]: ...

        def _notify(self, kind: str, /, **data: Any) -> None: ...

        def _entry(self, item_id: str) -> ItemEntry | None: ...

        def deliver_notices(self, events: EventLog) -> None:  # noqa: D102
            ...

    def add_record(self, record: MemoryRecord, events: EventLog | None = None) -> AddResult:
        """Store a record, merging items that repeat an existing one.

        An item with the same normalized text as a stored one, or a cosine similarity at or
        above ``dedupe.threshold``, is merged into it (its support grows) instead of appended.
        Adding a record whose ``memory_id`` is already stored changes nothing: a resumed run
        repeats its writes.

        Raises:
            ReadOnlyBankError: the bank was opened read-only.
        """
        if self.read_only:
            raise ReadOnlyBankError(f"bank {self.paths.task} is open read-only; nothing was stored")
        record = MemoryRecord.model_validate(record.model_dump())
        vectors = self.embedder.encode([item_key_text(record.query, i) for i in record.memory_items])
        with self._locked():
            view = self._view
            view.sync()
            self._heal_torn_tail()
            if record.memory_id in view.records:
                return AddResult(record.memory_id, duplicate=True)
            result, stored, rows, entries = self._dedupe(record, vectors)
            line = record.model_copy(update={"memory_items": stored}).model_dump(mode="json")
            crashpoint("before_jsonl")
            crash_bytes = 40 if armed("mid_jsonl") else None
            start = view.log.append([line], crash_after_bytes=crash_bytes)
            assert start == view.offset, "the JSONL grew outside the lock"
            crashpoint("mid_jsonl")
            crashpoint("after_jsonl")
            end = view.log.size()
            with open(self.paths.jsonl, "rb") as handle:
                handle.seek(start)
                written = handle.read(end - start)
            line_crc, file_crc = binascii.crc32(written), binascii.crc32(written, view.crc)
            meta = view.meta
            assert meta is not None
            if meta.count == 0:
                meta.generation = uuid.uuid4().hex  # the first vectors start a generation
            self._life.update_catalog(CatalogUpdate(
                items=[NewItem(e.item_id, e.memory_id, e.task_id, e.created_at, e.digest, start)
                       for e in entries],
                merges=[(record.memory_id, pos, target, record.task_id)
                        for pos, (target, _why) in result.merged.items()],
                records=[(record.memory_id, record.task_id, start, end - start, line_crc)],
                state=(meta.generation, end, file_crc),
            ))
            crashpoint("after_lifecycle")
            self._commit_vectors(start, end, rows, entries)
            view.crc = file_crc
            view.records[record.memory_id] = start
            view.remember(start, line)
        if events is not None:
            emit_written(events, record, result, stored)
        return result

    def _heal_torn_tail(self) -> None:
        """Set an interrupted write's unterminated last line aside, then cut it off the file."""
        view = self._view
        where, tail = view.log.torn_tail()
        if tail:  # kept aside first: bytes that never became a record are still not thrown away
            keep_aside(self.paths.quarantine, self.paths.jsonl.name,
                       [(where, tail, "unterminated last line (an interrupted write)")])
        torn = view.log.repair_tail()
        if torn:
            self._notify("memory.bank.torn_line", bytes=torn, file=self.paths.jsonl.name, repaired=True)

    def _dedupe(
        self, record: MemoryRecord, vectors: np.ndarray
    ) -> tuple[AddResult, list[MemoryItem], np.ndarray, list[ItemEntry]]:
        view = self._view
        result = AddResult(record.memory_id)
        stored: list[MemoryItem] = []
        rows: list[np.ndarray] = []
        entries: list[ItemEntry] = []
        batch_digest: dict[str, str] = {}
        threshold = self.config.dedupe.threshold
        for pos, (item, vector) in enumerate(zip(record.memory_items, vectors, strict=True)):
            digest = item.content_hash()
            target, why = view.by_digest.get(digest) or batch_digest.get(digest), "same text"
            # A near neighbour absorbs the item only when both carry the same action (or none):
            # items of one record embed alike, and an action must not vanish into plain advice.
            if target is None and view.index is not None and view.index.size:
                ((row, score),) = view.index.search(vector, 1)
                if score >= threshold and view.entry(row).lesson.get("action", "") == item.action:
                    target, why = view.ids[row], f"cosine {score:.3f}"
            for entry, row_vector in zip(entries, rows, strict=True):
                if (target is None and float(row_vector @ vector) >= threshold
                        and entry.lesson.get("action", "") == item.action):
                    target, why = entry.item_id, f"cosine {float(row_vector @ vector):.3f}"
            if target is not None:
                stored.append(
                    item.model_copy(update={"item_id": "", "merged_into": target, "digest": digest})
                )
                result.merged[pos] = (target, why)
                continue
            salt, item_id = 0, item_id_for(record.memory_id, pos)
            while item_id in view.row_of or any(e.item_id == item_id for e in entries):
                salt += 1
                item_id = item_id_for(record.memory_id, pos, salt)
            stored.append(item.model_copy(update={"item_id": item_id, "merged_into": "", "digest": digest}))
            batch_digest[digest] = item_id
            entries.append(
                ItemEntry(
                    item_id,
                    record.memory_id,
                    record.task_id,
                    item.title,
                    item.description,
                    item.content,
                    record.is_success,
                    record.query,
                    record.created_at,
                    digest,
                    item.lesson(),
                )
            )
            rows.append(vector)
            result.added.append(item_id)
        matrix = np.array(rows, dtype=np.float32).reshape(len(rows), self.embedder.dim)
        return result, stored, matrix, entries

    def _commit_vectors(self, start: int, end: int, rows: np.ndarray, entries: list[ItemEntry]) -> None:
        view = self._view
        meta = view.meta
        assert meta is not None
        meta.jsonl_offset = end
        meta.fingerprint = meta.fingerprint or view.fingerprint
        ids = [e.item_id for e in entries]
        if meta.count == 0:
            meta.item_ids = ids
            view.vector_file.rewrite(meta, rows)
        elif ids:
            view.vector_file.append(
                meta,
                rows,
                ids,
                view.index.vectors()[0],
                crash_before_meta=armed("after_vectors"),
            )
            crashpoint("after_vectors")
        else:
            view.vector_file.write_meta(meta, meta.probe)
        view.add_rows([(e.item_id, e.task_id, start, e.digest) for e in entries], rows)
        view.offset, view.meta_rows_seen = end, meta.count
        view.stamp = view._stamp()

    def apply(self, decision: GatekeeperDecision, events: EventLog) -> ApplyResult:
        """Write a decision: the candidate record (if any), then hits and validations.

        Hits and validations go in one transaction keyed by the decision id, so applying the
        same decision twice writes nothing the second time.
        """
        self.deliver_notices(events)
        ids = {"decision_id": decision.decision_id, "task_id": decision.task_id}
        if self.read_only:
            events.emit("memory.write.skip", **ids,
                        reason="the bank is read-only (memory mode baseline or retrieve-only)")
            return ApplyResult(skipped="read-only")
        out = ApplyResult()
        if decision.candidate is not None:
            out.record = self.add_record(decision.candidate, events)
            if out.record.duplicate:
                events.emit("memory.candidate.skip", **ids, memory_id=decision.candidate.memory_id,
                            reason="record already stored (resumed run)")
        else:
            for reason in decision.skip_reasons or ["no candidate"]:
                events.emit("memory.candidate.skip", **ids, reason=reason)
        with self._mutex:
            referenced = [r.item_id for r in decision.hit_refs] + [v.item_id for v in decision.validations]
            known = {e.item_id: NewItem(e.item_id, e.memory_id, e.task_id, e.created_at)
                     for item_id in referenced if (e := self._entry(item_id)) is not None}
        applied = self._life.apply(
            decision.decision_id, decision.task_id, decision.hit_refs, decision.validations, known
        )
        out.replayed, out.hits, out.validations = applied.replayed, len(applied.hits), applied.validations
        if applied.replayed:
            events.emit("memory.write.skip", **ids,
                        reason="hits and validations already applied (resumed run)")
            return out
        if applied.hits:
            events.emit("memory.hit.write", **ids,
                        references=[dataclasses.asdict(h) for h in applied.hits])
        for validation in applied.validations:
            events.emit("memory.validation.write", **ids, **validation)
        if applied.unknown_items:
            events.emit("memory.write.skip", **ids, reason="items no longer in the bank",
                        items=applied.unknown_items)
        return out


def emit_written(events: EventLog, record: MemoryRecord, result: AddResult,
                  stored: list[Any]) -> None:
    """The audit events of one stored record: its new items, and each merge into an old one."""
    if result.added:
        events.emit("memory.candidate.write", memory_id=record.memory_id, task_id=record.task_id,
                    kind=record.kind, is_success=record.is_success, items=result.added,
                    titles=[i.title for i in stored if i.item_id and not i.merged_into],
                    confidence=record.confidence)
    for pos, (target, why) in result.merged.items():
        events.emit("memory.candidate.merge", memory_id=record.memory_id, position=pos,
                    into=target, reason=why)
