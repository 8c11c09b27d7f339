"""Repair a release of memory the harness does not own (ASan's ``bad-free``).

An out-parameter may hand back a pointer into the caller's own input or into the library's
storage (a protocol list's selected entry, a token's start): freeing it is a ``bad-free`` in
the harness's cleanup. The release comes out, and only when the freed variable is what a library
call handed back (through ``&var`` or as its result): the harness's own buffers stay released.
"""

from __future__ import annotations

import re

from agents.offline.fixer_edit import matching_paren, split_args
from agents.offline.leak_owner import uncast
from fuzzkit.triage import INPUT_GIVEN_AWAY
from fuzzkit.vocabulary import libc_released_by

_KIND = re.compile(r"^kind:\s*bad-free\s*$", re.M)
# The harness's own memory: what the C library's allocators (released by `free`) and its helpers return.
_OWN = re.compile(rf"\b({'|'.join(a for a, r in libc_released_by().items() if r == 'free')}|lf_\w+)\s*\(")
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


# `flag = (int)lf_take_int(&lf_in, 0, 255);`: a number the harness drew from option bytes.
_DRAWN = r"^(\s*){var}\s*=\s*\((?:[\w ]+)\)\s*lf_take_(?:int|pick)\([^;]*\);[ \t]*$"


def keep_input_owned(harness: str, triage: str) -> tuple[str, str | None]:
    """The harness with 0 for the drawn numbers passed beside the input, when the library freed it.

    ``create_source(data, size, freep, &err)``: a nonzero ``freep`` hands the buffer over and the
    library frees libFuzzer's input (a use-after-free when libFuzzer reads it back). The numbers
    the harness drew from option bytes for the calls that take ``data`` are set to 0 instead.
    """
    if INPUT_GIVEN_AWAY not in triage:
        return harness, None
    pinned = []
    for call in re.finditer(r"\b\w+\s*\(", harness):
        close = matching_paren(harness, call.end() - 1)
        args = [uncast(a) for a in split_args(harness[call.end():close])] if close else []
        if "data" not in args:
            continue
        for var in (a for a in args if re.fullmatch(r"[A-Za-z_]\w*", a) and a not in ("data", "size")):
            drawn = re.compile(_DRAWN.format(var=re.escape(var)), re.M)
            if drawn.search(harness):
                keep = f"{var} = 0; /* the harness keeps its input */"
                harness = drawn.sub(rf"\g<1>{keep}", harness)
                pinned.append(var)
    if not pinned:
        return harness, None
    return harness, (f"the library freed the fuzz input it was handed: {', '.join(pinned)} (drawn from "
                     "option bytes, passed beside the input) set to 0 so the harness keeps its input")
