"""Where the toolchain keeps persistent files, and a file lock for sharing them."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fuzzkit.errors import ToolchainError
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


def safe_path(run_dir: Path, candidate: str | Path) -> Path:
    """``candidate`` (relative to ``run_dir``, or absolute) if it stays inside ``run_dir``.

    Symlinks are resolved, so a link in the run directory pointing elsewhere is refused.
    Use it for every file name an agent or a model produces before writing to it.

    Raises:
        ToolchainError: The path is empty, has a NUL byte, or resolves outside ``run_dir``.
    """
    text = str(candidate)
    if not text.strip() or "\0" in text:
        raise ToolchainError(f"invalid file name {candidate!r}", "use a plain relative file name")
    root = Path(run_dir).resolve()
    resolved = (root / text).resolve()
    if resolved == root or not resolved.is_relative_to(root):
        raise ToolchainError(
            f"refusing to write {candidate!r}: it resolves to {resolved}, outside the run directory {root}",
            "generated files must stay inside the run directory; use a relative name without '..'",
        )
    return resolved
