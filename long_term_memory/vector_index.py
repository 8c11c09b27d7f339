"""A small FAISS inner-product index over embedded texts, with an on-disk embedding cache.

The cache is a pair of files per slot, ``<slot>.npy`` (the vectors) and ``<slot>.json`` (model
name, dimension, a content hash over the keys and texts in order, per-text hashes and a
checksum of the vectors). It is reused when model, dimension and content hash all match; any
change rebuilds it, re-encoding only the texts whose hash is new, and replaces both files
atomically (write to a temporary file, then ``os.replace``).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from long_term_memory.embeddings import Embedder

CACHE_FORMAT = 1

_faiss_lock = threading.Lock()


def _faiss() -> Any:
    """Import FAISS lazily and pin it to one OpenMP thread (single queries get slower otherwise)."""
    import faiss

    with _faiss_lock:
        faiss.omp_set_num_threads(1)
    return faiss


def text_hash(key: str, text: str) -> str:
    """A stable hash of one keyed text."""
    return hashlib.sha256(f"{key}\0{text}".encode()).hexdigest()


def content_hash(keys: Sequence[str], texts: Sequence[str]) -> str:
    """A hash over all keyed texts in order (reordering counts as a change)."""
    digest = hashlib.sha256()
    for key, text in zip(keys, texts, strict=True):
        digest.update(text_hash(key, text).encode())
    return digest.hexdigest()


def _vectors_checksum(vectors: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(vectors, dtype=np.float32).tobytes()).hexdigest()


def _atomic_write(path: Path, write: Any) -> None:
    """Write through ``write(file)`` to a temporary sibling, then rename it over ``path``."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class EmbeddingCache:
    """One cache slot on disk: ``<slot>.npy`` plus ``<slot>.json``."""

    def __init__(self, slot: Path) -> None:
        """Use the files ``slot.npy`` and ``slot.json`` (the directory is created on write)."""
        self.vectors_path = slot.with_name(slot.name + ".npy")
        self.meta_path = slot.with_name(slot.name + ".json")

    def read(self) -> tuple[dict[str, Any], np.ndarray] | None:
        """The stored metadata and vectors, or None when missing, unreadable or inconsistent."""
        try:
            meta = json.loads(self.meta_path.read_text(encoding="utf-8"))
            vectors = np.load(self.vectors_path, allow_pickle=False)
        except (OSError, ValueError):
            return None
        if not isinstance(meta, dict) or meta.get("format") != CACHE_FORMAT:
            return None
        # The two files are replaced one after the other; a checksum catches a torn pair.
        if meta.get("vectors_sha256") != _vectors_checksum(vectors):
            return None
        return meta, vectors

    def write(self, meta: dict[str, Any], vectors: np.ndarray) -> None:
        """Replace both files atomically, vectors first."""
        self.meta_path.parent.mkdir(parents=True, exist_ok=True)
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        meta = {**meta, "format": CACHE_FORMAT, "vectors_sha256": _vectors_checksum(vectors)}
        _atomic_write(self.vectors_path, lambda handle: np.save(handle, vectors))
        _atomic_write(self.meta_path, lambda handle: handle.write(json.dumps(meta, indent=1).encode()))


def embed_with_cache(
    keys: Sequence[str], texts: Sequence[str], embedder: Embedder, cache: EmbeddingCache | None
) -> tuple[np.ndarray, int]:
    """Vectors for ``texts`` (row i for texts[i]) and how many texts had to be encoded.

    With a cache, an exact match (model, dimension, content hash) encodes nothing; otherwise
    rows of unchanged texts are reused when model and dimension match, the rest are encoded,
    and the slot is rewritten.
    """
    hashes = [text_hash(key, text) for key, text in zip(keys, texts, strict=True)]
    overall = content_hash(keys, texts)
    stored = cache.read() if cache is not None else None
    reusable: dict[str, np.ndarray] = {}
    if stored is not None:
        meta, old_vectors = stored
        same_model = meta.get("model") == embedder.name and meta.get("dim") == embedder.dim
        old_hashes = meta.get("text_hashes", [])
        if same_model and len(old_hashes) == len(old_vectors):
            if meta.get("content_hash") == overall and len(old_vectors) == len(texts):
                return old_vectors, 0
            reusable = {h: old_vectors[i] for i, h in enumerate(old_hashes)}

    missing = [i for i, h in enumerate(hashes) if h not in reusable]
    vectors = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    if missing:
        encoded = embedder.encode([texts[i] for i in missing])
        if encoded.shape != (len(missing), embedder.dim):
            raise ValueError(
                f"Embedder {embedder.name!r} returned shape {encoded.shape} for "
                f"{len(missing)} texts; expected ({len(missing)}, {embedder.dim})."
            )
        vectors[missing] = encoded
    for i, h in enumerate(hashes):
        if h in reusable:
            vectors[i] = reusable[h]
    if cache is not None:
        meta = {
            "model": embedder.name,
            "dim": embedder.dim,
            "content_hash": overall,
            "keys": list(keys),
            "text_hashes": hashes,
        }
        cache.write(meta, vectors)
    return vectors, len(missing)


class VectorIndex:
    """Exact cosine search (``IndexFlatIP`` over unit vectors) returning row positions."""

    def __init__(self, vectors: np.ndarray) -> None:
        """Index ``vectors`` (rows must already be L2-normalized)."""
        faiss = _faiss()
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self.size = int(vectors.shape[0])
        self.dim = int(vectors.shape[1])
        self._index = faiss.IndexFlatIP(self.dim)
        if self.size:
            self._index.add(vectors)

    def search(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The ``k`` best ``(row, score)`` pairs for one query vector, best first."""
        k = min(k, self.size)
        if k <= 0:
            return []
        query = np.ascontiguousarray(query, dtype=np.float32).reshape(1, self.dim)
        scores, rows = self._index.search(query, k)
        return [(int(r), float(s)) for r, s in zip(rows[0], scores[0], strict=True) if r >= 0]
