"""The bank's in-memory view of its files: item columns, vectors and index, kept in sync.

Opening takes the fast path when the files agree (the meta file covers the whole JSONL, the
SQLite catalog carries the same generation, length and CRC-32 as the JSONL on disk, it lists as
many items as the meta file, and every vector is finite): ids, owners and digests come from the
catalog and the vectors file, and the JSONL is only checksummed, not parsed. Otherwise every
record is read and repaired (on disk unless read-only): a line that is not a usable record is
quarantined (``quarantine``), items without vectors, items of records whose checksum changed and
items whose vector is not finite are embedded from their stored text, a changed embedding model
(name or fingerprint, see ``model_guard``) re-embeds everything (atomically), and the catalog is
rewritten (both paths: ``view_load``). Afterwards :meth:`BankView.sync` follows other
processes' appends: a ``stat`` tells whether anything changed, and only new lines and rows are
read. Callers hold the bank lock around :meth:`BankView.load` and :meth:`BankView.sync`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from long_term_memory.embeddings import Embedder
from long_term_memory.experience.catalog import (
    BankPaths,
    Found,
    ItemEntry,
    catalog_update,
    entry_from,
    found_in,
    record_problem,
)
from long_term_memory.experience.checks import invalid_rows
from long_term_memory.experience.config import ExperienceConfig
from long_term_memory.experience.index import ItemIndex
from long_term_memory.experience.lifecycle import LifecycleStore
from long_term_memory.experience.record_log import RecordLog
from long_term_memory.experience.vector_file import VectorFile, VectorMeta
from long_term_memory.experience.view_load import load_fast, load_full

log = logging.getLogger(__name__)
Notify = Callable[..., None]
Row = tuple[str, str, int, str]  # item id, owner task, record offset, digest


class BankView:
    """Columns per row (``ids``, ``tasks``, ``offsets`` of the owning record) and the index.

    An item's text is read back from its JSONL line when needed (:meth:`entry`).
    """

    def __init__(
        self,
        paths: BankPaths,
        config: ExperienceConfig,
        embedder: Embedder,
        read_only: bool,
        life: LifecycleStore,
        notify: Notify,
    ) -> None:
        """A view to :meth:`load`."""
        self.paths, self.config, self.embedder, self.read_only = paths, config, embedder, read_only
        self.life, self.notify = life, notify
        self.log = RecordLog(paths.jsonl)
        self.vector_file = VectorFile(paths.vectors, paths.meta)
        self.meta: VectorMeta | None = None
        self.stamp: tuple[Any, ...] = ()
        self.skipped_lines = 0
        self.fingerprint = ""  # the embedder's, once known (see model_guard)
        self.mismatch = ""  # why the last fast open failed, when the files disagree
        self.crc = 0  # CRC-32 of the JSONL up to ``offset``
        self.reset()

    def reset(self) -> None:
        """Empty columns, caches and index (before a load fills them)."""
        self.ids: list[str] = []
        self.tasks: list[str] = []
        self.offsets: list[int] = []
        self.row_of: dict[str, int] = {}
        self.by_digest: dict[str, str] = {}
        self.task_items: dict[str, int] = {}
        self.records: dict[str, int] = {}
        self._cache: dict[int, dict[str, Any]] = {}
        self.offset = self.meta_rows_seen = 0
        self.index = ItemIndex(self.embedder.dim, self.config.index.exact_max_items, self.config.index.rerank)

    def _stamp(self) -> tuple[Any, ...]:
        try:
            st = os.stat(self.paths.meta)
            meta: tuple[Any, ...] = (st.st_size, st.st_mtime_ns, st.st_ino)
        except FileNotFoundError:
            meta = ()
        return (self.log.size(), meta)

    def record_at(self, offset: int) -> dict[str, Any] | None:
        """The record stored at ``offset`` (cached)."""
        record = self._cache.get(offset)
        if record is None:
            record = self.log.read_at(offset)
            if record is not None:
                if len(self._cache) > 4096:
                    self._cache.clear()
                self._cache[offset] = record
        return record

    def remember(self, offset: int, record: dict[str, Any]) -> None:
        """Cache a record this process just wrote."""
        self._cache[offset] = record

    def entry(self, row: int) -> ItemEntry:
        """The item at ``row``, read back from its record.

        Raises:
            KeyError: the record line no longer holds the item.
        """
        record = self.record_at(self.offsets[row]) or {}
        for item in record.get("memory_items") or []:
            if item.get("item_id") == self.ids[row]:
                return entry_from(record, item)
        raise KeyError(f"{self.ids[row]} is not in its record at byte {self.offsets[row]}")

    def all_entries(self) -> list[ItemEntry]:
        """Every indexed item, in row order (reads the whole JSONL)."""
        found = {f.item_id: f for start, r in self.log.read_from(0).records for f in self._found(start, r)}
        return [entry_from(found[i].record, found[i].item) for i in self.ids if i in found]

    def _found(self, start: int, record: dict[str, Any]) -> list[Found]:
        try:
            return found_in(start, record)
        except ValueError as exc:
            self.skipped_lines += 1
            log.warning("%s at byte %d: %s; skipped", self.paths.jsonl.name, start, exc)
            return []

    def load(self, full: bool = False) -> None:
        """Read the bank, by the fast path when the files agree, else fully (with repairs)."""
        meta = self.vector_file.read_meta()
        self.mismatch = ""
        if full or not load_fast(self, meta):
            if self.mismatch:
                log.warning("%s: %s; reading the records in full", self.paths.task, self.mismatch)
                self.notify("memory.bank.repair", action="rebuild the catalog from the records",
                            file=self.paths.lifecycle.name, reason=self.mismatch)
            if meta is None and self.paths.meta.is_file():
                log.warning("%s is unreadable; the vectors are rebuilt", self.paths.meta.name)
                self.notify("memory.bank.repair", action="rebuild vectors", file=self.paths.meta.name,
                            reason="unreadable")
            load_full(self, meta)
        self.stamp = self._stamp()

    def same_model(self, meta: VectorMeta | None) -> bool:
        """Whether ``meta``'s vectors come from this view's embedding model."""
        return (meta is not None and meta.model == self.embedder.name and meta.dim == self.embedder.dim
                and (not meta.fingerprint or not self.fingerprint or meta.fingerprint == self.fingerprint))

    def encode(self, found: list[Found]) -> np.ndarray:
        """Vectors of ``found``'s key texts (checked: shape and finite values)."""
        if not found:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        vectors = self.embedder.encode([f.key_text() for f in found])
        if vectors.shape != (len(found), self.embedder.dim):
            raise ValueError(
                f"embedder {self.embedder.name!r} returned {vectors.shape} for {len(found)} texts"
            )
        if invalid_rows(vectors).any():
            raise ValueError(f"embedder {self.embedder.name!r} returned vectors that are not finite; "
                             "nothing was stored (check the model files)")
        return vectors

    def take(self, records: list[tuple[int, dict[str, Any]]]) -> list[Found]:
        """Register records; return their indexed items not seen before."""
        out: list[Found] = []
        for start, record in records:
            found = self._found(start, record)
            memory_id = record.get("memory_id")
            if not isinstance(memory_id, str) or memory_id in self.records:
                continue
            if not found and not isinstance(record.get("memory_items"), list):
                continue
            self.records[memory_id] = start
            out.extend(f for f in found if f.item_id not in self.row_of)
        return out

    def add_rows(self, rows: Sequence[Found | Row], vectors: np.ndarray, adopt: bool = False) -> None:
        """Index new rows ``(item id, task, record offset, digest, ...)`` with their vectors."""
        row = len(self.ids)
        for f in rows:
            item_id, task_id, offset, digest = f[0], f[1], f[2], f[3]
            self.ids.append(item_id)
            self.tasks.append(task_id)
            self.offsets.append(offset)
            self.row_of[item_id] = row
            row += 1
            if digest not in self.by_digest:
                self.by_digest[digest] = item_id
            self.task_items[task_id] = self.task_items.get(task_id, 0) + 1
        self.index.add(vectors, adopt=adopt)

    def sync(self) -> None:
        """Take in what other processes appended since the last load or sync."""
        stamp = self._stamp()
        if stamp == self.stamp:
            return
        meta = self.vector_file.read_meta()
        same_generation = (
            meta is not None
            and self.meta is not None
            and meta.generation == self.meta.generation
            and self.same_model(meta)
        )
        if not same_generation or self.log.size() < self.offset:
            self.load()
            return
        assert meta is not None
        result = self.log.read_from(self.offset, self.crc)
        if result.bad_lines or any(record_problem(s, r) for s, r in result.records):
            self.load(full=True)  # quarantines them (write mode) and rebuilds the catalog
            return
        found = self.take(result.records)
        stored: dict[str, np.ndarray] = {}
        if meta.count > self.meta_rows_seen:
            rows = self.vector_file.read_rows(meta, self.meta_rows_seen)
            if rows is None or invalid_rows(rows).any():
                self.load(full=True)
                return
            stored = dict(zip(meta.item_ids[self.meta_rows_seen :], rows, strict=True))
        missing = [f for f in found if f.item_id not in stored]
        encoded = dict(zip([f.item_id for f in missing], self.encode(missing), strict=True))
        vectors = np.array(
            [stored[f.item_id] if f.item_id in stored else encoded[f.item_id] for f in found],
            dtype=np.float32,
        ).reshape(len(found), self.embedder.dim)
        pending = [(start, r) for start, r in result.records if start >= meta.jsonl_offset]
        if pending and not self.read_only:
            # Records past the commit point were left by a writer that died mid-write.
            self.notify(
                "memory.bank.repair",
                action="complete interrupted write",
                records=len(pending),
                items=len(missing),
            )
            meta.jsonl_offset = result.end
            meta.fingerprint = meta.fingerprint or self.fingerprint
            self.life.update_catalog(catalog_update(pending, (meta.generation, result.end, result.crc),
                                                    line_crc=result.line_crc))
            if missing:
                first = self.index.vectors()[0] if self.index.size else vectors[0]
                self.vector_file.append(
                    meta, np.array([encoded[f.item_id] for f in missing]), [f.item_id for f in missing], first
                )
            else:
                self.vector_file.write_meta(meta, meta.probe)
        self.meta = meta
        self.add_rows(found, vectors)
        self.offset, self.meta_rows_seen, self.crc = result.end, meta.count, result.crc
        self.stamp = self._stamp()
