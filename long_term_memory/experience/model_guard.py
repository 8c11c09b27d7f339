"""Which embedding model made a bank's vectors, and who is writing with which model.

A model's name says little: two different checkpoints can share one. Its identity here is a
fingerprint: the SHA-256 of its vector for a fixed probe text, rounded to three decimals (so
the same model on the same machine always gives the same value; a different model, a different
value). The meta file stores it; vectors of another fingerprint are never mixed with ours.

Two writers with different models on one bank would re-embed the whole bank back and forth,
each undoing the other. Keeping one vector set per model would avoid that, but every writer
would then have to embed every other writer's items too, and prune and repair would rewrite N
sets. A bank serves one model at a time, so the second writer refuses instead, with one line:
each writer holds a shared ``flock`` on ``<task>.writer-<fingerprint>.lock`` while its bank is
open, and before re-embedding vectors of another fingerprint a writer checks that nobody holds
that model's lock. The kernel drops a dead process's locks, so a crashed run never blocks a
later switch of model: only a live writer does.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from pathlib import Path
from typing import Any

import numpy as np

from long_term_memory.experience.catalog import BankPaths

PROBE_TEXT = (
    "Embedding fingerprint probe: a fuzz harness copies the input into a NUL-terminated buffer, "
    "calls the parser and frees the result."
)


class ModelConflictError(ValueError):
    """Another live writer uses the bank with another embedding model."""

    def __init__(self, message: str, hint: str = "") -> None:
        """One line saying what is wrong, and one saying what to do."""
        super().__init__(message)
        self.hint = hint


def fingerprint_of(embedder: Any) -> str:
    """The fingerprint of an embedder (encodes :data:`PROBE_TEXT` once)."""
    vector = np.asarray(embedder.encode([PROBE_TEXT])[0], dtype=np.float64)
    rounded = np.round(vector, 3) + 0.0  # + 0.0 turns -0.0 into 0.0
    digest = hashlib.sha256(f"{len(vector)}:".encode() + rounded.tobytes())
    return digest.hexdigest()[:16]


def lock_path(paths: BankPaths, fingerprint: str) -> Path:
    """The presence lock of writers with ``fingerprint``."""
    return paths.file(f".writer-{fingerprint}.lock")


class WriterPresence:
    """A shared lock held while this process writes the bank with one model."""

    def __init__(self, paths: BankPaths, fingerprint: str) -> None:
        """Take the shared lock (waits only while another writer checks it)."""
        path = lock_path(paths, fingerprint)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd: int | None = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self._fd, fcntl.LOCK_SH)

    def release(self) -> None:
        """Drop the lock (safe to call twice)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def in_use(paths: BankPaths, fingerprint: str) -> bool:
    """True when a live process writes the bank with the model of ``fingerprint``."""
    path = lock_path(paths, fingerprint)
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def refuse_if_in_use(paths: BankPaths, meta_model: str, meta_fingerprint: str, ours: str,
                     our_fingerprint: str) -> None:
    """Raise when re-embedding the bank's vectors would undo a live writer's model.

    Raises:
        ModelConflictError: a live process writes this bank with the model of the stored vectors.
    """
    if meta_fingerprint and meta_fingerprint != our_fingerprint and in_use(paths, meta_fingerprint):
        raise ModelConflictError(
            f"experience bank {paths.task} in {paths.directory} is being written by another process "
            f"with embedding model {meta_model!r} (fingerprint {meta_fingerprint}); this one uses "
            f"{ours!r} (fingerprint {our_fingerprint})",
            "use the same embedding model as the running process, another bank (bank.task or "
            "bank.directory in the experience config), or wait until it finishes")
