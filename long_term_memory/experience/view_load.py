"""Opening a :class:`~long_term_memory.experience.view.BankView`: the fast path and the full read.

The fast path trusts the catalog and the vectors file once they agree with the JSONL (see the
``view`` module docstring); the full read parses every record, quarantines unusable lines,
re-embeds what has no usable vector (or everything, for another embedding model) and rewrites
the catalog and the vectors when it may write.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections import Counter
from typing import TYPE_CHECKING

import numpy as np

from long_term_memory.experience.catalog import Found, catalog_update
from long_term_memory.experience.checks import changed_items, invalid_rows, quarantine_bad_lines
from long_term_memory.experience.model_guard import refuse_if_in_use
from long_term_memory.experience.record_log import ReadResult
from long_term_memory.experience.vector_file import VectorMeta

if TYPE_CHECKING:
    from long_term_memory.experience.view import BankView


def load_fast(view: BankView, meta: VectorMeta | None) -> bool:
    """Take the columns from the catalog and the vectors file; False when the files disagree."""
    size = view.log.size()
    if meta is None or not view.same_model(meta) or meta.jsonl_offset != size or size == 0:
        return False
    catalog = view.life.catalog()
    if catalog.state != (meta.generation, size) or catalog.jsonl_crc is None:
        return False
    columns = catalog.columns_for(meta.item_ids)
    if columns is None or len(catalog.ids) != meta.count:
        view.mismatch = (f"the catalog lists {len(catalog.ids)} items, {view.paths.meta.name} "
                         f"{meta.count}")
        return False
    tasks, offsets, digests = columns
    if not all(digests) or (offsets and min(offsets) < 0):
        return False
    vectors = view.vector_file.read_rows(meta)
    if vectors is None:
        return False
    if invalid_rows(vectors).any():
        view.mismatch = f"{view.paths.vectors.name} has rows that are not finite"
        return False
    if view.log.file_crc() != (size, catalog.jsonl_crc):
        view.mismatch = f"{view.paths.jsonl.name} does not match the checksum the catalog stored"
        return False
    view.reset()
    view.records = catalog.records
    view.meta = meta
    # Built with C-level loops (map, zip, Counter): a 100k-item bank opens in well under 1 s.
    view.ids, view.tasks, view.offsets = list(meta.item_ids), tasks, offsets
    view.row_of = dict(zip(view.ids, range(len(view.ids)), strict=True))
    view.by_digest = dict(zip(reversed(digests), reversed(view.ids), strict=True))  # first wins
    view.task_items = dict(Counter(tasks))
    view.index.add(vectors, adopt=True)
    view.offset, view.meta_rows_seen, view.crc = size, meta.count, catalog.jsonl_crc
    return True


def load_full(view: BankView, meta: VectorMeta | None) -> None:
    """Read every record, repair what disagrees and (write mode) rewrite catalog and vectors."""
    view.reset()
    had_files = meta is not None
    result = view.log.read_from(0)
    if result.torn_bytes:
        view.notify("memory.bank.torn_line", bytes=result.torn_bytes, file=view.paths.jsonl.name)
    if quarantine_bad_lines(view.log, view.paths, result, view.read_only, view.notify):
        result = view.log.read_from(0)  # the lines moved: every offset after them changed
        meta = None if meta is None else dataclasses.replace(meta, generation="")
    changed = changed_items(view.life.catalog().record_crc, result)
    found = view.take(result.records)
    stored, bad = _stored_vectors(view, meta, changed, len(found))
    vectors, tail, rewrite, meta = _vectors(view, meta, stored, bad, found)
    if tail:
        view.notify("memory.bank.repair", action="embed items without vectors", items=len(tail))
    if not view.read_only and (result.records or had_files):
        # Whatever brought us here (a crash, another model, a catalog from another
        # generation, a hand-edited JSONL), the catalog is rewritten from the records read.
        _commit(view, meta, result, vectors, tail, rewrite)
    view.meta = meta
    view.add_rows(found, vectors, adopt=True)
    view.offset, view.meta_rows_seen, view.crc = result.end, meta.count, result.crc


def _stored_vectors(view: BankView, meta: VectorMeta | None, changed: set[str],
                    items: int) -> tuple[np.ndarray | None, set[str]]:
    """The stored vectors when the model is the same, and the items whose vector is unusable."""
    if meta is not None and not view.same_model(meta):
        if not view.read_only:
            refuse_if_in_use(view.paths, meta.model, meta.fingerprint, view.embedder.name,
                             view.fingerprint)
        view.notify("memory.bank.reembed", old_model=meta.model, new_model=view.embedder.name,
                    old_fingerprint=meta.fingerprint, new_fingerprint=view.fingerprint, items=items)
    stored = view.vector_file.read_rows(meta) if meta is not None and view.same_model(meta) else None
    bad: set[str] = set()
    if meta is not None and stored is not None:
        bad = {i for i, b in zip(meta.item_ids, invalid_rows(stored), strict=True) if b} | changed
        if bad:
            view.notify("memory.bank.repair", action="re-embed items whose vector is not finite or "
                        "whose record changed", items=sorted(bad)[:50], count=len(bad))
    return stored, bad


def _vectors(view: BankView, meta: VectorMeta | None, stored: np.ndarray | None, bad: set[str],
             found: list[Found]) -> tuple[np.ndarray, list[Found], bool, VectorMeta]:
    """Vectors for ``found``, the new tail, whether the vectors file is rewritten, and the meta.

    Stored rows are kept when they still match the records; only a new tail is embedded.
    Otherwise every usable stored vector is reused and the rest embedded, under a new generation.
    """
    ids = [f.item_id for f in found]
    if (meta is not None and stored is not None and meta.item_ids == ids[: meta.count] and not bad
            and meta.generation):
        tail = found[meta.count :]
        return (np.vstack([stored, view.encode(tail)]) if tail else stored), tail, False, meta
    reuse = ({i: row for i, row in zip(meta.item_ids, stored, strict=True) if i not in bad}
             if meta and stored is not None else {})
    todo = [f for f in found if f.item_id not in reuse]
    encoded = dict(zip([f.item_id for f in todo], view.encode(todo), strict=True))
    vectors = np.array(
        [reuse[i] if i in reuse else encoded[i] for i in ids], dtype=np.float32
    ).reshape(len(ids), view.embedder.dim)
    rewrite = bool(ids) or meta is not None
    if view.same_model(meta) and rewrite:
        view.notify("memory.bank.repair", action="rebuild vectors", reused=len(reuse), embedded=len(todo))
    new_meta = VectorMeta(model=view.embedder.name, dim=view.embedder.dim, item_ids=ids,
                          generation=uuid.uuid4().hex, fingerprint=view.fingerprint)
    return vectors, [], rewrite, new_meta


def _commit(view: BankView, meta: VectorMeta, result: ReadResult, vectors: np.ndarray,
            tail: list[Found], rewrite: bool) -> None:
    """Write the catalog, then the vectors (all, the new tail, or only the meta file)."""
    meta.jsonl_offset = result.end
    meta.fingerprint = meta.fingerprint or view.fingerprint
    view.life.update_catalog(catalog_update(result.records, (meta.generation, result.end, result.crc),
                                            full=True, line_crc=result.line_crc))
    if rewrite:
        view.vector_file.rewrite(meta, vectors)
    elif tail:
        view.vector_file.append(meta, vectors[meta.count :], [f.item_id for f in tail], vectors[0])
    else:
        view.vector_file.write_meta(meta, meta.probe)
