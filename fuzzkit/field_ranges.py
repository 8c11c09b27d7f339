"""The values a header documents for a struct field, read from the comment beside it.

Settings structs document their fields' ranges in prose: ``int method; // 0=fast, 6=slower``,
``int segments; // in [1..4]``, ``float quality; // between 0 and 100``, ``int bypass; // if
true, skip ...``. A harness that leaves every field at its default (or zero) tests one
configuration of the library; one that draws each documented field from its range tests them
all. The range is part of the Types section (``int method; /* 0..6 */``), for the offline
model and a real LLM alike.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

_BRACKET = re.compile(r"(-?\d+)\s*(?:=[^.\]\n]*?)?\.\.\.?\s*(-?\d+)")
_BETWEEN = re.compile(r"\bbetween\s+(-?\d+)\b(?:\s*\([^)]*\))?\s*(?:and|to)\s+(-?\d+)\b", re.I)
_FROM_TO = re.compile(r"\bfrom\s+(-?\d+)\s+to\s+(-?\d+)\b", re.I)
# `0=off`, `1 = strong`, `2: best`, `(0: no degradation, 100: maximum)`: a listed value.
_LISTED = re.compile(r"(?<![\w.])(-?\d+)\s*(?:=|:)\s*[A-Za-z(]")
_BOOLEAN = re.compile(r"^\W*(if\s+(true|set|enabled|1)\b|true\s+to\b|set\s+to\s+1\b|boolean\b|"
                      r"0\s+or\s+1\b|1\s+or\s+0\b)", re.I)
_COMMENT_LINE = re.compile(r"^\s*(//|/\*|\*)")
MAX_SPAN = 65535


def documented_range(comment: str) -> tuple[int, int] | None:
    """``(lo, hi)`` for the values a field's comment documents, or None when it names none."""
    text = re.sub(r"^\s*(///?<?|/\*+<?|\*+/?|//!<?)", " ", comment, flags=re.M)
    text = " ".join(text.split())
    for pattern in (_BRACKET, _BETWEEN, _FROM_TO):
        m = pattern.search(text)
        if m:
            return _checked(int(m.group(1)), int(m.group(2)))
    listed = sorted({int(v) for v in _LISTED.findall(text)})
    if len(listed) >= 2:
        return _checked(listed[0], listed[-1])
    if _BOOLEAN.search(text):
        return (0, 1)
    return None


def _checked(lo: int, hi: int) -> tuple[int, int] | None:
    if lo > hi:
        lo, hi = hi, lo
    return (lo, hi) if 0 < hi - lo <= MAX_SPAN else None


class FieldComments:
    """The comment of each field declaration, read from the header's text.

    A comment after a field (same line, then the comment-only lines that continue it) is the
    field's; else the documentation comment before it (libclang's ``raw_comment``).
    """

    def __init__(self) -> None:
        """No header read yet."""
        self.texts: dict[str, list[str]] = {}

    def of(self, field: Any) -> str:
        """The comment that documents a ``FIELD_DECL`` cursor ("" when none)."""
        loc = field.extent.end
        if loc.file is None:
            return field.raw_comment or ""
        lines = self._lines(loc.file.name)
        if not 0 < loc.line <= len(lines):
            return field.raw_comment or ""
        rest = lines[loc.line - 1][loc.column - 1:]
        semi = rest.find(";")
        after = rest[semi + 1:] if semi >= 0 else ""
        if not re.match(r"\s*(//|/\*)", after):
            return field.raw_comment or ""
        found = [after]
        indent = field.extent.start.column
        for line in lines[loc.line:loc.line + 12]:
            # A comment line indented past the field continues its comment; one at the field's
            # own indentation documents the next field.
            if not _COMMENT_LINE.match(line) or len(line) - len(line.lstrip()) < indent:
                break
            found.append(line)
        return "\n".join(found)

    def _lines(self, name: str) -> list[str]:
        if name not in self.texts:
            try:
                self.texts[name] = Path(name).read_text(errors="replace").splitlines()
            except OSError:
                self.texts[name] = []
        return self.texts[name]
