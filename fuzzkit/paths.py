"""Where the toolchain keeps persistent files, and a file lock for sharing them."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fuzzkit.inputs import InputError


def cache_dir() -> Path:
    """The persistent cache root, created on demand.

    ``LOGICFUZZ_CACHE_DIR`` wins when set; otherwise ``~/.cache/logicfuzz``.

    Raises:
        InputError: The directory is a file, cannot be created, or is not writable.
    """
    chosen = os.environ.get("LOGICFUZZ_CACHE_DIR")
    root = Path(chosen) if chosen else Path.home() / ".cache" / "logicfuzz"
    what = "LOGICFUZZ_CACHE_DIR" if chosen else "the cache directory"
    return writable_dir(root, what, "set LOGICFUZZ_CACHE_DIR to a writable directory")


def writable_dir(path: Path, what: str, fix: str) -> Path:
    """``path`` as a directory this process can write in, created with its parents if missing.

    Args:
        path: The directory.
        what: How the user named it, for the message (``--out``, ``LOGICFUZZ_CACHE_DIR``).
        fix: What the user should do instead.

    Raises:
        InputError: ``path`` (or a parent) is a file, cannot be created, or is not writable.
    """
    if not str(path).strip():
        raise InputError(f"{what} is empty; {fix}")
    if path.exists() and not path.is_dir():
        raise InputError(f"{what} {path} is a file, not a directory; {fix}")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{what} {path} cannot be created ({exc.strerror or exc}); {fix}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise InputError(f"{what} {path} is not writable; {fix}")
    return path


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
