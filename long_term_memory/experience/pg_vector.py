"""pgvector: the PostgreSQL server ranks a bank's items when it has the ``vector`` extension.

The BYTEA ``vector`` of an item row stays the truth; ``embedding`` (type ``vector``, no fixed
dimension: banks of different models share the table) is a copy of it that writers fill in
the same transaction as the row. Rows written without it (by a worker that searches locally,
or by a bank made before the extension was there) are filled from their BYTEA by the next
writer that takes them in: nothing is encoded again. Search orders the rows the view has seen
by cosine distance (``<=>``) in SQL (exactly, or through an HNSW index past
``index.pgvector_exact_max_items`` rows, see :class:`SqlIndex`) and hands back the same ``(row, score)`` pairs
as :class:`~long_term_memory.experience.index.ItemIndex`, so everything above it (candidate
count, threshold, exclusions, ranking) is the same code on both paths.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

MODE = "pgvector"
_BATCH = 500
_SCHEMA_LOCK = "SELECT pg_advisory_xact_lock(hashtext('logicfuzz-bank-schema'))"
_HAS_COLUMN = ("SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('lf_items') "
               "AND attname = 'embedding' AND NOT attisdropped")


def literal(vector: np.ndarray) -> str:
    """``vector``'s text form; nine significant digits give back the same float32 values."""
    return "[" + ",".join(f"{float(x):.9g}" for x in np.asarray(vector, dtype=np.float32)) + "]"


def usable(conn: Any, write: bool) -> bool:
    """Whether ``lf_items.embedding`` can serve search (in write mode: make it so if the server can).

    Without the extension on the server, or without the right to create it, the answer is
    False and nothing changed.
    """
    import psycopg

    if not conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone():
        return False
    if write:
        try:
            with conn.transaction():
                conn.execute(_SCHEMA_LOCK)
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                if not conn.execute(_HAS_COLUMN).fetchone():  # ALTER locks the table: only once
                    conn.execute("ALTER TABLE lf_items ADD COLUMN embedding vector")
        except psycopg.Error:
            return False
    return bool(conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone()
                and conn.execute(_HAS_COLUMN).fetchone())


def unfilled(conn: Any, bank: str) -> int:
    """Rows of ``bank`` whose ``embedding`` is still empty."""
    return int(conn.execute("SELECT COUNT(*) FROM lf_items WHERE bank = %s AND embedding IS NULL",
                            (bank,)).fetchone()[0])


def ready(conn: Any, bank: str, dim: int, read_only: bool, lock: Any) -> bool:
    """Whether the server can rank ``bank`` (a writer first fills the rows written without it).

    A reader writes nothing: it keeps the local index until a writer has filled them.
    """
    if not usable(conn, write=not read_only):
        return False
    with lock:
        if not read_only:
            backfill(conn, bank, dim)
            return True
        return not unfilled(conn, bank)


def backfill(conn: Any, bank: str, dim: int) -> int:
    """Copy the BYTEA vectors of ``bank``'s rows into ``embedding`` where it is empty; returns the count.

    Batches hold the bank's write lock (record writes wait) and lock their rows in item order,
    like the lifecycle's updates, so neither can deadlock with it.
    """
    done = 0
    while True:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"logicfuzz-bank:{bank}",))
            rows = conn.execute("SELECT item_id, vector FROM lf_items WHERE bank = %s AND embedding "
                                "IS NULL ORDER BY item_id LIMIT %s FOR UPDATE", (bank, _BATCH)).fetchall()
            if not rows:
                return done
            vectors = np.frombuffer(b"".join(bytes(r[1]) for r in rows), dtype="<f4").reshape(-1, dim)
            with conn.cursor() as cur:
                cur.executemany("UPDATE lf_items SET embedding = %s::vector WHERE bank = %s AND item_id = %s",
                                [(literal(v), bank, r[0]) for v, r in zip(vectors, rows, strict=True)])
            done += len(rows)


class SqlIndex:
    """The :class:`ItemIndex` surface over ``lf_items.embedding``, limited to the rows a view has seen.

    Up to ``index.pgvector_exact_max_items`` rows the server scans them all (exact, like the
    local index; about 2 us a row); above it search turns approximate: an HNSW index of the
    bank's rows (partial, on ``embedding`` cast to the bank's dimension), made by a writer.
    """

    def __init__(self, view: Any) -> None:
        """Search for ``view`` (a ``PgView``: its connection, bank, rows and last ``seq``)."""
        self.view = view
        self.dim = view.dim
        self.approximate = False

    @property
    def mode(self) -> str:
        """``pgvector``, or ``pgvector hnsw`` once the bank outgrew exact search."""
        return f"{MODE} hnsw" if self.approximate else MODE

    def check_size(self) -> None:
        """Past ``index.pgvector_exact_max_items`` rows, search through the bank's HNSW index.

        A writer makes it, outside a transaction: ``CONCURRENTLY`` (writes go on), one writer
        at a time (the others look again at their next sync).
        """
        view = self.view
        if self.approximate or self.size <= view.config.index.pgvector_exact_max_items:
            return
        name = "lf_items_hnsw_" + hashlib.sha256(view.bank.encode()).hexdigest()[:16]
        if view.writer and not self._valid(name):
            self._build(name)
        self.approximate = self._valid(name)

    def _valid(self, name: str) -> bool:
        row = self.view.conn.execute("SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass(%s)",
                                     (name,)).fetchone()
        return bool(row and row[0])

    def _build(self, name: str) -> None:
        from psycopg import sql

        conn, lock = self.view.conn, f"logicfuzz-hnsw:{self.view.bank}"
        if not conn.execute("SELECT pg_try_advisory_lock(hashtext(%s))", (lock,)).fetchone()[0]:
            return
        try:  # an interrupted build leaves an invalid index behind: built again
            if self._valid(name):  # another writer finished it meanwhile
                return
            conn.execute(sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(sql.Identifier(name)))
            conn.execute(sql.SQL(
                "CREATE INDEX CONCURRENTLY {} ON lf_items USING hnsw ((embedding::vector({})) "
                "vector_cosine_ops) WHERE bank = {}").format(sql.Identifier(name), self.dim,
                                                              sql.Literal(self.view.bank)))
        finally:
            conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", (lock,))

    @property
    def size(self) -> int:
        """Rows the view has taken in."""
        return len(self.view.ids)

    def add(self, rows: np.ndarray, adopt: bool = False) -> None:
        """Nothing to do: the rows are in the table already."""

    def search(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The ``k`` best ``(row, score)`` pairs by cosine similarity, best first."""
        k = min(k, self.size)
        if k <= 0:
            return []
        view, text = self.view, literal(np.asarray(query).reshape(self.dim))
        if self.approximate:
            return self._approximate(text, k)
        found = view.conn.execute(  # the distance is computed once per row: ordered by its alias
            "SELECT item_id, embedding <=> %s::vector AS distance FROM lf_items WHERE bank = %s "
            "AND seq <= %s AND embedding IS NOT NULL ORDER BY distance, seq LIMIT %s",
            (text, view.bank, view.last_seq, k)).fetchall()
        return [(view.row_of[item_id], 1.0 - float(distance)) for item_id, distance in found]

    def _approximate(self, text: str, k: int) -> list[tuple[int, float]]:
        from psycopg import sql

        view, cast = self.view, sql.SQL("::vector({})").format(self.dim)
        with view.conn.transaction():  # iterative scans: the seq filter never leaves fewer than k
            view.conn.execute(sql.SQL("SET LOCAL hnsw.ef_search = {}").format(max(40, min(k, 1000))))
            view.conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            found = view.conn.execute(sql.SQL(
                "SELECT item_id, embedding{cast} <=> %s{cast} AS distance FROM lf_items "
                "WHERE bank = {bank} AND seq <= %s ORDER BY distance LIMIT %s").format(
                    cast=cast, bank=sql.Literal(view.bank)), (text, view.last_seq, k)).fetchall()
        found.sort(key=lambda r: r[1])  # relaxed order: nearly sorted
        return [(view.row_of[item_id], 1.0 - float(distance)) for item_id, distance in found]

    def vectors(self) -> np.ndarray:
        """The stored vectors of the view's rows, in row order (read from the BYTEA column)."""
        view = self.view
        rows = view.conn.execute("SELECT vector FROM lf_items WHERE bank = %s AND seq <= %s ORDER BY seq",
                                 (view.bank, view.last_seq)).fetchall()
        return np.frombuffer(b"".join(bytes(r[0]) for r in rows), dtype="<f4").reshape(-1, self.dim)


def insert_columns(sql: bool) -> tuple[str, str]:
    """The extra column and placeholder of an item insert (none on the local path)."""
    return (", embedding", ", %s::vector") if sql else ("", "")


def embedding_values(sql: bool, rows: np.ndarray | Sequence[np.ndarray]) -> list[tuple[str, ...]]:
    """Per row: its ``embedding`` value as a one-tuple on the SQL path, else an empty tuple."""
    return [(literal(r),) if sql else () for r in rows]
