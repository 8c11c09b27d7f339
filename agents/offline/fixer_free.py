"""Repair a release of memory the harness does not own (ASan's ``bad-free``).

An out-parameter may hand back a pointer into the caller's own input or into the library's
storage (a protocol list's selected entry, a token's start): freeing it is a ``bad-free`` in
the harness's cleanup. The release comes out, and only when the freed variable is what a library
call handed back (through ``&var`` or as its result): the harness's own buffers stay released.
"""

from __future__ import annotations

import re

_KIND = re.compile(r"^kind:\s*bad-free\s*$", re.M)
_OWN = re.compile(r"\b(malloc|calloc|realloc|strdup|strndup|lf_\w+)\s*\(")  # the harness's own memory
_FRAME = re.compile(r"^#(\d+)\s+(\S+)\s+\S*?:(\d+|\?)", re.M)


def drop_unowned_free(harness: str, triage: str) -> tuple[str, str | None]:
    """The harness without the ``free(v)`` the report points at, and what was done (None: nothing)."""
    if not _KIND.search(triage):
        return harness, None
    frames = _FRAME.findall(triage)
    if len(frames) < 2 or not frames[0][1].endswith("free") or frames[1][1] != "LLVMFuzzerTestOneInput":
        return harness, None
    lines = harness.splitlines(keepends=True)
    number = int(frames[1][2]) if frames[1][2].isdigit() else 0
    if not 0 < number <= len(lines):
        return harness, None
    freed = re.search(r"\bfree\(\s*(?:\([^()]*\)\s*)?(\w+)\s*\)\s*;", lines[number - 1])
    if not freed:
        return harness, None
    var = freed.group(1)
    handed = rf"\w+\s*\([^;]*&\s*{var}\b|\b{var}\s*=\s*(?:\([^()]*\)\s*)?[a-zA-Z_]\w*\s*\("
    if not any(re.search(handed, line) and not _OWN.search(line) for line in lines[: number - 1]):
        return harness, None
    line = lines[number - 1]
    if re.fullmatch(r"\s*(if\s*\([^;]*\)\s*)?free\([^;]*\);\s*", line):
        lines[number - 1] = ""
    else:
        lines[number - 1] = line.replace(freed.group(0), ";", 1)
    return "".join(lines), (f"{var} points into memory the harness does not own (freeing it was a "
                            "bad-free): its release is removed")
