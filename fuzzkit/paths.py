"""Where the toolchain keeps persistent files, and a file lock for sharing them."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def cache_dir() -> Path:
    """The persistent cache root, created on demand.

    ``LOGICFUZZ_CACHE_DIR`` wins when set; otherwise ``~/.cache/logicfuzz``.
    """
    root = Path(os.environ.get("LOGICFUZZ_CACHE_DIR", Path.home() / ".cache" / "logicfuzz"))
    root.mkdir(parents=True, exist_ok=True)
    return root


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created if missing) for the block.

    The lock is released by the kernel if the process dies, so a crashed build never
    leaves a stale lock behind.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
