"""The bank's records as JSONL: append-only under a file lock, fsynced, torn tails tolerated.

Several processes append to one file. Each append happens under an exclusive ``flock`` on a
sibling ``.lock`` file and is one ``write`` of whole lines followed by ``fsync``. A process
killed mid-write leaves an unterminated last line: readers skip it with a warning, and the next
writer truncates it before appending (under the lock no one else can be mid-write).

Reading computes a CRC-32 of every line and of the whole file (chained): the
lifecycle catalog stores both, so an open can tell in one pass over the bytes whether the file
is still the one the catalog and the vectors describe, and which records changed if not. Lines
that must go (a corrupt line, a torn tail) are first copied, byte for byte, into the bank's
quarantine file (see ``quarantine``), then removed.
"""

from __future__ import annotations

import binascii
import fcntl
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    import orjson

    def _loads(line: bytes) -> Any:
        return orjson.loads(line)

    def _dumps(value: Any) -> bytes:
        return orjson.dumps(value)

except ImportError:  # orjson is optional; the standard library gives the same result, slower
    import json

    def _loads(line: bytes) -> Any:
        return json.loads(line)

    def _dumps(value: Any) -> bytes:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


log = logging.getLogger(__name__)


@dataclass
class ReadResult:
    """Records read from an offset, where reading stopped, and what had to be skipped."""

    records: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    end: int = 0
    torn_bytes: int = 0
    bad_lines: list[int] = field(default_factory=list)
    bad_raw: dict[int, bytes] = field(default_factory=dict)
    line_crc: dict[int, tuple[int, int]] = field(default_factory=dict)  # start -> (length, crc)
    crc: int = 0  # CRC-32 of the file up to ``end`` (chained from the ``seed`` given to read)


@contextmanager
def bank_lock(path: Path, create: bool = True) -> Iterator[bool]:
    """Hold the bank's exclusive lock for the block; yields whether a lock is held.

    With ``create=False`` (read-only banks) a missing lock file is not created: nothing has
    ever written there, so there is nothing to wait for, and the bank stays byte-identical.
    """
    if not create and not path.exists():
        yield False
        return
    if create:
        path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, (os.O_RDWR | os.O_CREAT) if create else os.O_RDONLY, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield True
    finally:
        os.close(fd)  # closing releases the flock


class RecordLog:
    """``<task>.jsonl``: one record (a JSON object) per line."""

    def __init__(self, path: Path) -> None:
        """Use ``path`` (created on the first append)."""
        self.path = path

    def size(self) -> int:
        """Current file size in bytes (0 when missing)."""
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0

    def read_from(self, offset: int = 0, seed: int = 0) -> ReadResult:
        """Complete records from byte ``offset`` on; an unterminated tail is left unread.

        A line that is complete but not a JSON object (hand-edited or corrupted) is skipped
        with a warning and kept in ``bad_raw``; reading goes on. ``seed`` is the CRC-32 of the
        bytes before ``offset`` (so ``result.crc`` covers the file from its start).
        """
        result = ReadResult(end=offset, crc=seed)
        try:
            with open(self.path, "rb") as handle:
                handle.seek(offset)
                data = handle.read()
        except FileNotFoundError:
            return result
        last_newline = data.rfind(b"\n")
        complete = data[: last_newline + 1] if last_newline >= 0 else b""
        result.torn_bytes = len(data) - len(complete)
        result.crc = binascii.crc32(complete, seed)
        position = offset
        for line in complete.split(b"\n")[:-1]:
            start = position
            position += len(line) + 1
            if not line.strip():
                continue
            try:
                value = _loads(line)
            except (ValueError, RecursionError):
                value = None
            if isinstance(value, dict):
                result.records.append((start, value))
                result.line_crc[start] = (len(line) + 1, binascii.crc32(line + b"\n"))
            else:
                result.bad_lines.append(start)
                result.bad_raw[start] = line
                log.warning("%s: skipping a corrupt line at byte %d", self.path.name, start)
        result.end = position
        if result.torn_bytes:
            log.warning(
                "%s: skipping an unterminated last line (%d bytes, an interrupted write)",
                self.path.name,
                result.torn_bytes,
            )
        return result

    def read_at(self, offset: int) -> dict[str, Any] | None:
        """The record on the line starting at ``offset`` (None when it is not a record)."""
        try:
            with open(self.path, "rb") as handle:
                handle.seek(offset)
                line = handle.readline()
        except OSError:
            return None
        if not line.endswith(b"\n"):
            return None
        try:
            value = _loads(line)
        except (ValueError, RecursionError):
            return None
        return value if isinstance(value, dict) else None

    def file_crc(self) -> tuple[int, int]:
        """``(size, CRC-32)`` of the whole file, read in 1 MiB blocks ((0, 0) when missing)."""
        crc = size = 0
        try:
            with open(self.path, "rb") as handle:
                while block := handle.read(1 << 20):
                    crc, size = binascii.crc32(block, crc), size + len(block)
        except FileNotFoundError:
            pass
        return size, crc

    def drop_lines(self, starts: set[int]) -> None:
        """Rewrite the file without the lines starting at ``starts``, every other byte kept.

        Atomic (write, fsync, rename); call under the lock, after the lines are kept aside.
        """
        data = self.path.read_bytes()
        kept, position = [], 0
        parts = data.split(b"\n")
        for number, part in enumerate(parts):
            line = part + b"\n" if number < len(parts) - 1 else part
            if position not in starts:
                kept.append(line)
            position += len(line)
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "wb") as handle:
            handle.write(b"".join(kept))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self.path)

    def torn_tail(self) -> tuple[int, bytes]:
        """``(offset, bytes)`` of an unterminated last line (``(size, b"")`` when there is none)."""
        size = self.size()
        if size == 0:
            return 0, b""
        with open(self.path, "rb") as handle:
            pos = size
            while pos > 0:
                start = max(0, pos - (1 << 16))
                handle.seek(start)
                cut = handle.read(pos - start).rfind(b"\n")
                if cut >= 0:
                    keep = start + cut + 1
                    break
                pos = start
            else:
                keep = 0
            handle.seek(keep)
            return keep, handle.read()

    def repair_tail(self) -> int:
        """Truncate an unterminated last line; returns the bytes removed. Call under the lock."""
        keep, torn = self.torn_tail()
        if not torn:
            return 0
        with open(self.path, "r+b") as handle:
            handle.truncate(keep)
            handle.flush()
            os.fsync(handle.fileno())
        log.warning(
            "%s: removed an unterminated last line (%d bytes) left by an interrupted write",
            self.path.name,
            len(torn),
        )
        return len(torn)

    def append(self, records: list[dict[str, Any]], crash_after_bytes: int | None = None) -> int:
        """Append whole lines and fsync; returns the offset of the first one. Call under the lock.

        ``crash_after_bytes`` is fault injection for tests: write only that many bytes, then
        the caller kills the process (see ``bank._crashpoint``).
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        payload = b"".join(_dumps(r) + b"\n" for r in records)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            start = os.lseek(fd, 0, os.SEEK_END)
            data = payload if crash_after_bytes is None else payload[:crash_after_bytes]
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        return start

    def rewrite(self, records: list[dict[str, Any]]) -> None:
        """Replace the whole file atomically (prune). Call under the lock."""
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "wb") as handle:
            handle.write(b"".join(_dumps(r) + b"\n" for r in records))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self.path)
