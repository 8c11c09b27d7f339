"""Nearest-neighbour search over the bank's item vectors.

Up to ``exact_max_items`` rows, exact inner product with FAISS ``IndexFlatIP``. Above that, an
exact scan costs too much per query (about 20–40 ms at 100k x 384 on a loaded 2-core machine),
so search first ranks all rows by the Hamming distance of centred sign codes (FAISS
``IndexBinaryFlat``, 48 bytes per row) and then scores the best ``rerank`` candidates exactly.
Matches above a 0.5 cosine threshold are separated from unrelated rows by many standard
deviations of Hamming distance, so in practice they are always among the candidates;
``bench/memory_bench.py`` measures the recall against exact search. FAISS runs on one thread
(multi-threaded single queries are much slower under load).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

_faiss_lock = threading.Lock()


def faiss_module() -> Any:
    """FAISS, imported on first use and pinned to one OpenMP thread."""
    import faiss

    with _faiss_lock:
        faiss.omp_set_num_threads(1)
    return faiss


class ItemIndex:
    """Rows are item positions; scores are inner products of unit vectors (cosine)."""

    def __init__(self, dim: int, exact_max_items: int = 20000, rerank: int = 128) -> None:
        """An empty index of ``dim``-dimensional vectors."""
        self.dim, self.exact_max_items, self.rerank = dim, exact_max_items, rerank
        self._matrix = np.zeros((0, dim), dtype=np.float32)
        self._size = 0
        self._flat: Any = None
        self._binary: Any = None
        self._centre: np.ndarray | None = None

    @property
    def size(self) -> int:
        """Number of rows."""
        return self._size

    @property
    def mode(self) -> str:
        """``exact`` or ``binary+rerank``."""
        return "binary+rerank" if self._binary is not None else "exact"

    def vectors(self) -> np.ndarray:
        """The rows (a view; do not modify)."""
        return self._matrix[: self._size]

    def add(self, rows: np.ndarray, adopt: bool = False) -> None:
        """Append rows (L2-normalized float32).

        With ``adopt`` (the caller hands the array over and never touches it again), the first
        add keeps the array itself instead of copying it: 150 MB at 100k items.
        """
        rows = np.ascontiguousarray(rows, dtype=np.float32).reshape(-1, self.dim)
        if not len(rows):
            return
        needed = self._size + len(rows)
        if self._size == 0 and adopt and rows.flags.writeable:
            self._matrix = rows
        elif needed > len(self._matrix):
            grown = np.zeros((max(needed, 2 * len(self._matrix), 64), self.dim), dtype=np.float32)
            grown[: self._size] = self._matrix[: self._size]
            self._matrix = grown
            self._matrix[self._size : needed] = rows
        else:
            self._matrix[self._size : needed] = rows
        self._size = needed
        if self._binary is None and self._size > self.exact_max_items and self.dim % 8 == 0:
            self._build_binary()
        elif self._binary is not None:
            self._binary.add(self._codes(rows))
        else:
            if self._flat is None:
                self._flat = faiss_module().IndexFlatIP(self.dim)
            self._flat.add(rows)

    def _codes(self, rows: np.ndarray) -> np.ndarray:
        assert self._centre is not None
        return np.packbits(rows > self._centre, axis=1)

    def _build_binary(self) -> None:
        faiss = faiss_module()
        # Centring makes the sign bits informative for anisotropic embeddings; the centre is
        # fixed at build time (new rows are coded against the same centre). An even sample of
        # 16k rows estimates it as well as all of them, at a fraction of the cost.
        rows = self.vectors()
        self._centre = rows[:: max(1, len(rows) // 16384)].mean(axis=0)
        self._binary = faiss.IndexBinaryFlat(self.dim)
        self._binary.add(self._codes(self.vectors()))
        self._flat = None

    def search(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The ``k`` best ``(row, score)`` pairs, best first."""
        k = min(k, self._size)
        if k <= 0:
            return []
        query = np.ascontiguousarray(query, dtype=np.float32).reshape(1, self.dim)
        if self._binary is None:
            scores, rows = self._flat.search(query, k)
            return [(int(r), float(s)) for r, s in zip(rows[0], scores[0], strict=True) if r >= 0]
        pool = min(self._size, max(self.rerank, 4 * k))
        _, candidates = self._binary.search(self._codes(query), pool)
        rows = candidates[0][candidates[0] >= 0]
        scores = self._matrix[rows] @ query[0]
        order = np.argsort(-scores, kind="stable")[:k]
        return [(int(rows[i]), float(scores[i])) for i in order]

    def brute_force(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """Exact top-k with numpy (the reference the benchmark compares against)."""
        k = min(k, self._size)
        if k <= 0:
            return []
        scores = self.vectors() @ np.asarray(query, dtype=np.float32).reshape(self.dim)
        top = np.argpartition(-scores, k - 1)[:k] if k < self._size else np.arange(self._size)
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(r), float(scores[r])) for r in top]
