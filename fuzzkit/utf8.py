"""Whether bytes are well-formed UTF-8, and where they stop being so.

A crash whose input is not UTF-8, in a library that documents the text it takes as UTF-8, may
be the harness breaking that contract rather than a library bug (the library's own fuzzers
often check the text first). The crash report says which (:func:`describe`).
"""

from __future__ import annotations

from pathlib import Path


def first_invalid(data: bytes) -> int | None:
    """Offset of the first byte where ``data`` stops being UTF-8 (strict), None when it is."""
    try:
        data.decode("utf-8", errors="strict")
    except UnicodeDecodeError as err:
        return err.start
    return None


def describe(path: str | Path) -> str:
    """``valid UTF-8`` or ``not valid UTF-8 (byte 0xNN at offset K)`` for a file ("" if unreadable)."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return ""
    at = first_invalid(data)
    return "valid UTF-8" if at is None else f"not valid UTF-8 (byte 0x{data[at]:02X} at offset {at})"
