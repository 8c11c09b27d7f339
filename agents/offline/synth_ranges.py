"""Buffers given as a pair of pointers: the start and one past the end.

``int search(re_t *re, const uchar *str, const uchar *end, const uchar *start, const uchar
*range)``: ``end`` is not a second string but ``str`` plus its length, and ``start`` and
``range`` are positions inside ``[str, end]``. A harness that passes three separate strings
hands the library pointers into three different blocks, and it walks from one into the other.
Recognised by shape and name only: a byte or character pointer followed by a pointer of the
same type named as an end (``end``, ``pattern_end``, ``limit``, ``stop``); further pointers of
that type right after it are positions (a name like ``start``/``at``/``from`` is the start,
any other the end).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from agents.offline import cdecl, ckinds
from agents.offline.synth_types import Role
from fuzzkit.api import Param

if TYPE_CHECKING:
    from agents.offline.synth_kinds import Call

END_NAME = re.compile(r"(^|_)(end|limit|stop)$|[a-z](End|Limit)$", re.I)
START_NAME = re.compile(r"(^|_)(start|begin|at|from|pos|cur|current)$", re.I)


def _text_pointer(ctype: str) -> bool:
    return (
        ckinds.pointer_depth(ctype) == 1
        and ckinds.is_const_target(ctype)
        and (ckinds.is_bytes(ctype) or ckinds.is_string(ctype))
    )


def _same(a: str, b: str) -> bool:
    return cdecl.normalize_type(a) == cdecl.normalize_type(b)


def mark_ranges(params: list[Param], out: list[Role | None]) -> list[tuple[int, int]]:
    """Give end and position pointers their roles; the ``(buffer, end)`` index pairs found.

    The buffer's own role is left to the other rules; :func:`pair_ranges` ties it to its end
    once they have run.
    """
    found: list[tuple[int, int]] = []
    for i in range(len(params) - 1):
        buf, end = params[i], params[i + 1]
        if out[i] is not None or out[i + 1] is not None or not _text_pointer(buf.type):
            continue
        if not (_same(buf.type, end.type) and END_NAME.search(end.name or "")):
            continue
        out[i + 1] = Role("end_ptr", i + 1, end, pair=i)
        j = i + 2
        while j < len(params) and out[j] is None and _same(params[j].type, buf.type):
            out[j] = Role("pos_ptr", j, params[j], pair=i, choices=(i + 1,))
            j += 1
        found.append((i, i + 1))
    return found


def pair_ranges(out: list[Role | None], found: list[tuple[int, int]]) -> None:
    """Make each range's end the paired "length" of its buffer (a text or bytes role).

    Its end bounds it, so the buffer needs no terminator: it is bytes, and ASan sees a read
    past the end.
    """
    for buf, end in found:
        r = out[buf]
        if r is not None and r.kind in ("text", "bytes") and r.pair is None:
            out[buf] = Role("bytes", r.index, r.param, pair=end, type_key=r.type_key)
        else:
            # The buffer is something else (an object, an output): the pointers go as NULL.
            for k, other in enumerate(out):
                if other is not None and other.kind in ("end_ptr", "pos_ptr") and other.pair == buf:
                    out[k] = Role("null", k, other.param)


def position(c: Call, r: Role) -> None:
    """A pointer inside a ``[start, end)`` range its buffer's builder has filled.

    A name like ``start``/``at``/``from`` is the start, any other the end.
    """
    assert r.pair is not None
    start, end = c.args.get(r.pair), c.args.get(r.choices[0])
    if not (start and end):
        c.args[r.index] = "NULL"
    else:
        c.args[r.index] = start if START_NAME.search(r.param.name or "") else end
