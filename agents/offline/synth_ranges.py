"""Buffers given as a pair of pointers: the start and one past the end.

``int search(re_t *re, const uchar *str, const uchar *end, const uchar *start, const uchar
*range)``: ``end`` is not a second string but ``str`` plus its length, and ``start`` and
``range`` are positions inside ``[str, end]``. A harness that passes three separate strings
hands the library pointers into three different blocks, and it walks from one into the other.
Recognised by shape and name only: a byte or character pointer followed by a pointer of the
same type named as an end (``end``, ``pattern_end``, ``limit``, ``stop``); further pointers of
that type right after it are positions (a name like ``start``/``at``/``from`` is the start,
any other the end).

A cursor is the same buffer read through a pointer the function advances: ``int
read_item(ctx, unsigned char **p, const unsigned char *end)`` or ``T *parse_t(T **out, const
unsigned char **pp, long length)``. It gets a local pointer set to the buffer's start, passed by
address, and the end (or the length) of that buffer; before, the ``T **`` was taken for an
out-parameter and left NULL, and the library dereferenced it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from agents.offline import cdecl, ckinds
from agents.offline.synth_types import Role, decl_cast, decl_type
from fuzzkit.api import Param
from fuzzkit.vocabulary import alternation

if TYPE_CHECKING:
    from agents.offline.synth_kinds import Call

END_NAME = re.compile(rf"(^|_){alternation('range_end')}$|[a-z](End|Limit)$", re.I)
START_NAME = re.compile(rf"(^|_){alternation('range_start')}$", re.I)
LENGTH_NAME = re.compile(r"(^|_)(len|length|size|buflen|bufsize)$|[a-z](Len|Length|Size)$", re.I)
# `const char **names, size_t len` is a list of strings, not a cursor: plural names are lists.
LIST_NAME = re.compile(r"(?<!s)s$|(list|array|arr|argv|vec|v)$", re.I)
# `char **out, size_t len` hands a buffer back: the callee sets (or reallocates) `*out`.
OUT_NAME = re.compile(r"^(out|dst|dest|ret|res|result)", re.I)


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


def mark_cursors(params: list[Param], out: list[Role | None]) -> None:
    """Give ``(T **cursor, end)`` and ``(T **cursor, length)`` pairs their roles.

    ``T`` is a byte or character pointer; the end is a pointer of ``T``'s base type named as an
    end, the length an integer named as one.
    """
    for i in range(len(params) - 1):
        cur, nxt = params[i], params[i + 1]
        if out[i] is not None or out[i + 1] is not None or ckinds.pointer_depth(cur.type) != 2:
            continue
        inner = ckinds.pointee(cur.type)
        if (not (ckinds.is_bytes(inner) or ckinds.is_string(inner)) or LIST_NAME.search(cur.name or "")
                or OUT_NAME.search(cur.name or "")):
            continue
        same_base = ckinds.canonical_base(nxt.type) == ckinds.canonical_base(inner)
        if ckinds.pointer_depth(nxt.type) == 1 and same_base and END_NAME.search(nxt.name or ""):
            out[i], out[i + 1] = Role("cursor", i, cur, pair=i + 1), Role("end_ptr", i + 1, nxt, pair=i)
        elif ckinds.is_integer(nxt.type) and LENGTH_NAME.search(nxt.name or ""):
            out[i], out[i + 1] = Role("cursor", i, cur, pair=i + 1), Role("len", i + 1, nxt, pair=i)


def cursor(c: Call, r: Role) -> None:
    """A local pointer at the start of the buffer, passed by address, and that buffer's end or length.

    The fuzz input when the cursor is the call's payload (a writable copy when the function may
    write through it), else a short string from the option bytes.
    """
    assert r.pair is not None
    inner = ckinds.pointee(r.param.type)
    if r.index == c.main:
        c.pl.fed = True
        buf, length = c.pl.payload_bytes(inner), "size"
    else:
        buf = c.pl.key_text(r.param.name or "text")
        length = f"strlen({buf})"
        c.pl.f.include("<string.h>")
    cur = c.pl.var(decl_type(inner), r.param.name or "cursor", "NULL")
    c.pl.f.setup.append(f"{cur} = ({decl_cast(inner)}){buf};")
    c.args[r.index] = f"&{cur}"
    if c.pair_kind(r) == "end_ptr":
        c.set_pair(r, f"({decl_cast(c.rs[r.pair].param.type)}){buf} + {length}")
    else:
        c.set_pair(r, c.pair_length(r, length))


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
