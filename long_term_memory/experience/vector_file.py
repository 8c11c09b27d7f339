"""The bank's embeddings on disk: ``<task>.embeddings.npy`` plus ``<task>.meta.json``.

The ``.npy`` file has a fixed 128-byte header, so new rows are appended in place and only the
shape in the header is patched: a write costs its own rows, not the whole matrix. The meta file
holds the model name and fingerprint (see ``model_guard``), the dimension, the item ids in row
order, how far into the JSONL the vectors and lifecycle rows are complete (``jsonl_offset``), a
``generation`` that changes on any full rewrite (re-embedding, prune), and a probe (hash of the
first and last row) that catches a vectors file that does not belong to its meta file. The meta
file is always written last, by atomic rename, so it is the commit point: rows past its
``count`` are ignored and cut off by the next writer.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from long_term_memory.experience.faults import crashpoint

META_FORMAT = 1
_MAGIC = b"\x93NUMPY\x01\x00"
HEADER_BYTES = 128


@dataclass
class VectorMeta:
    """The contents of ``<task>.meta.json``."""

    model: str
    dim: int
    item_ids: list[str] = field(default_factory=list)
    jsonl_offset: int = 0
    generation: str = field(default_factory=lambda: uuid.uuid4().hex)
    probe: str = ""
    fingerprint: str = ""

    @property
    def count(self) -> int:
        """Rows covered by this meta file."""
        return len(self.item_ids)


def probe_of(vectors: np.ndarray) -> str:
    """A cheap fingerprint: hash of the first and the last row."""
    if len(vectors) == 0:
        return ""
    digest = hashlib.sha256(np.ascontiguousarray(vectors[0], dtype=np.float32).tobytes())
    digest.update(np.ascontiguousarray(vectors[-1], dtype=np.float32).tobytes())
    return digest.hexdigest()[:32]


def _header(rows: int, dim: int) -> bytes:
    text = f"{{'descr': '<f4', 'fortran_order': False, 'shape': ({rows}, {dim}), }}"
    body_len = HEADER_BYTES - len(_MAGIC) - 2
    body = text.ljust(body_len - 1) + "\n"
    return _MAGIC + len(body).to_bytes(2, "little") + body.encode("latin1")


def _read_shape(handle: Any) -> tuple[int, int] | None:
    head = handle.read(HEADER_BYTES)
    if len(head) < HEADER_BYTES or not head.startswith(_MAGIC):
        return None
    try:
        info = ast.literal_eval(head[10:].decode("latin1").strip())
        rows, dim = info["shape"]
    except (ValueError, SyntaxError, KeyError, TypeError):
        return None
    if info.get("descr") != "<f4" or info.get("fortran_order"):
        return None
    return int(rows), int(dim)


def _fsync_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


class VectorFile:
    """Read, append and rewrite the vectors and their meta file."""

    def __init__(self, vectors_path: Path, meta_path: Path) -> None:
        """Use these two paths (created on the first write)."""
        self.vectors_path = vectors_path
        self.meta_path = meta_path

    def read_meta(self) -> VectorMeta | None:
        """The meta file, or None when missing or unreadable."""
        try:
            raw = json.loads(self.meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(raw, dict) or raw.get("format") != META_FORMAT:
            return None
        try:
            return VectorMeta(
                model=str(raw["model"]),
                dim=int(raw["dim"]),
                item_ids=[str(i) for i in raw["item_ids"]],
                jsonl_offset=int(raw.get("jsonl_offset", 0)),
                generation=str(raw.get("generation", "")),
                probe=str(raw.get("probe", "")),
                fingerprint=str(raw.get("fingerprint", "")),
            )
        except (KeyError, TypeError, ValueError):
            return None

    def read_rows(self, meta: VectorMeta, start: int = 0) -> np.ndarray | None:
        """Rows ``start..meta.count`` as a float32 array, or None when the file does not match."""
        try:
            with open(self.vectors_path, "rb") as handle:
                shape = _read_shape(handle)
                if shape is None or shape[1] != meta.dim or shape[0] < meta.count:
                    return None
                handle.seek(HEADER_BYTES + start * meta.dim * 4)
                rows = np.empty((meta.count - start, meta.dim), dtype="<f4")
                got = handle.readinto(rows.data.cast("B"))
        except OSError:
            return None
        if got != rows.nbytes:
            return None
        if start == 0 and probe_of(rows) != meta.probe:
            return None
        return rows

    def write_meta(self, meta: VectorMeta, vectors_probe: str) -> None:
        """Replace the meta file atomically (the commit point of every vector write)."""
        meta.probe = vectors_probe
        data = {
            "format": META_FORMAT,
            "model": meta.model,
            "fingerprint": meta.fingerprint,
            "dim": meta.dim,
            "count": meta.count,
            "jsonl_offset": meta.jsonl_offset,
            "generation": meta.generation,
            "probe": meta.probe,
            "item_ids": meta.item_ids,
        }
        _fsync_write(self.meta_path, json.dumps(data, separators=(",", ":")).encode())

    def rewrite(self, meta: VectorMeta, vectors: np.ndarray) -> None:
        """Replace both files, vectors first, then meta (the caller sets ``meta.generation``)."""
        vectors = np.ascontiguousarray(vectors, dtype="<f4")
        if vectors.shape != (meta.count, meta.dim):
            raise ValueError(f"vectors {vectors.shape} do not match {meta.count} ids x {meta.dim}")
        self.vectors_path.parent.mkdir(parents=True, exist_ok=True)
        _fsync_write(self.vectors_path, _header(meta.count, meta.dim) + vectors.tobytes())
        crashpoint("rewrite_before_meta")
        self.write_meta(meta, probe_of(vectors))

    def append(
        self,
        meta: VectorMeta,
        rows: np.ndarray,
        ids: list[str],
        first_row: np.ndarray,
        crash_before_meta: bool = False,
    ) -> None:
        """Append ``rows`` for ``ids`` after ``meta.count`` rows, then commit the meta file.

        Rows past ``meta.count`` (left by a writer that died before its commit) are cut off
        first. ``first_row`` is row 0 of the whole matrix (for the probe).
        """
        rows = np.ascontiguousarray(rows, dtype="<f4")
        if rows.shape != (len(ids), meta.dim):
            raise ValueError(f"rows {rows.shape} do not match {len(ids)} ids x {meta.dim}")
        if meta.count == 0 or not self.vectors_path.exists():
            if meta.count:
                raise ValueError(
                    f"{self.vectors_path.name} is missing but {self.meta_path.name} "
                    "lists rows; reopen the bank to rebuild it"
                )
            meta.item_ids = list(ids)
            self.rewrite(meta, rows)
            return None
        total = meta.count + len(ids)
        with open(self.vectors_path, "r+b") as handle:
            handle.truncate(HEADER_BYTES + meta.count * meta.dim * 4)
            handle.seek(0, os.SEEK_END)
            handle.write(rows.tobytes())
            handle.seek(0)
            handle.write(_header(total, meta.dim))
            handle.flush()
            os.fsync(handle.fileno())
        if crash_before_meta:
            return None
        meta.item_ids = [*meta.item_ids, *ids]
        self.write_meta(meta, probe_of(np.vstack([first_row[None, :], rows[-1:]])))
        return None
