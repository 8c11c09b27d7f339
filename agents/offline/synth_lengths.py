"""Which length goes with which buffer in a prototype.

Most APIs put a buffer's length right after it (``f(data, size)``); codecs list their buffers
first and the lengths after (``f(src, dst, srcSize, dstCapacity)``). The pairing decides what
gets the payload's size and what gets an output buffer's capacity, so a wrong guess reads past
the input or writes past the output.
"""

from __future__ import annotations

import re

from agents.offline import cdecl, ckinds
from agents.offline.synth_api import words
from agents.offline.synth_types import Role
from fuzzkit.api import FunctionDecl, Param
from fuzzkit.vocabulary import words_of

IN_VERBS = words_of("reads_buffer")  # verbs whose non-const buffer argument the library reads

# A length named for the output (capacity, maximum) rather than for the input.
OUTPUT_LENGTH = re.compile(r"(dst|dest|out|capacity|cap$|max|avail|target)", re.I)


def is_len_like(p: Param) -> bool:
    """An integer that can be the length of the buffer before it (by name, or unnamed)."""
    if not ckinds.is_integer(p.type) or ckinds.is_bool(p.type):
        return False
    return ckinds.is_length(p) or unnamed(p.name)


def _is_buffer(p: Param) -> bool:
    """A one-level pointer to bytes or characters that is not a path, format or mode."""
    if not (ckinds.is_pointer(p.type) and (ckinds.is_bytes(p.type) or ckinds.is_string(p.type))):
        return False
    return not re.search(r"(path|filename|fname|^file$|^format$|^fmt$|^mode$)", p.name, re.I)


def _is_length_slot(p: Param) -> bool:
    """A length by value, or a pointer to one the call reads and updates (``int *srcSizePtr``)."""
    if is_len_like(p):
        return True
    return (
        ckinds.pointer_depth(p.type) == 1
        and not ckinds.is_const_target(p.type)
        and ckinds.is_integer(ckinds.pointee(p.type))
        and not ckinds.is_bytes(p.type)
        and bool(cdecl.LENGTH_NAME.search(p.name))
    )


def _affinity(a: str, b: str) -> int:
    """How many leading characters two parameter names share (``src``/``srcSize``: 3)."""
    a, b = a.lower(), b.lower()
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n if n >= 3 else 0


def _named_after(params: list[Param], buffers: range, length: int) -> int | None:
    """The buffer whose whole name starts the length's (``error_buffer``/``error_buffer_size``)."""
    name = params[length].name.lower()
    owners = [b for b in buffers if len(params[b].name) >= 3 and not unnamed(params[b].name)
              and name.startswith(params[b].name.lower()) and name != params[b].name.lower()]
    return owners[-1] if owners else None


def grouped_lengths(params: list[Param]) -> dict[int, int | None]:
    """Buffer index -> length index for ``f(src, dst, srcSize, dstCapacity)``-style prototypes.

    Several buffers in a row followed by their lengths in a row: each buffer takes the length
    whose name shares its prefix (``src``/``srcSize``), else the next one in order. With fewer
    lengths than buffers, the buffers nearest the lengths get them (``state`` in
    ``f(void *state, src, dst, srcSize, dstCapacity, acceleration)`` is a work area). A single
    length after an input and an output buffer (``f(source, dest, inputSize)``) measures the
    input unless its name says output; the output buffer then has no length (None).
    """
    pairs: dict[int, int | None] = {}
    i = 0
    while i < len(params):
        j = i
        while j < len(params) and _is_buffer(params[j]):
            j += 1
        if j - i < 2:
            i = max(j, i + 1)
            continue
        lengths: list[int] = []
        m = j
        while m < len(params) and _is_length_slot(params[m]) and len(lengths) < 2 * (j - i):
            lengths.append(m)
            m += 1
        n = min(j - i, len(lengths))
        if n >= 2:
            free = list(lengths)
            for b in range(j - n, j):
                best = max(free, key=lambda x: (_affinity(params[b].name, params[x].name), -x))
                pairs[b] = best
                free.remove(best)
        elif n == 1 and (owner := _named_after(params, range(i, j), lengths[0])) is not None:
            # `f(input, error_buffer, error_buffer_size)`: the length named after a buffer is its.
            pairs[owner] = lengths[0]
        elif n == 1 and not OUTPUT_LENGTH.search(params[lengths[0]].name):
            inputs = [b for b in range(i, j) if ckinds.is_const_target(params[b].type)]
            outputs = [b for b in range(i, j) if not ckinds.is_const_target(params[b].type)]
            if inputs and outputs and outputs[-1] > inputs[-1]:
                pairs[inputs[-1]] = lengths[0]
                pairs.update({b: None for b in outputs if b > inputs[-1]})
        i = j
    return pairs


_ERROR_TEXT = re.compile(
    r"(err|error|errmsg|errbuf|errstr)_?(msg|message|desc|description|buf|buffer|str|string|text)?", re.I)


def out_direction(fn: FunctionDecl, p: Param) -> bool:
    """Whether the non-const buffer ``p`` of ``fn`` is written by the library (vs. read)."""
    if re.search(r"(out|dest|dst|result)", p.name, re.I) or _ERROR_TEXT.fullmatch(p.name):
        return True  # a destination, or room for the library's error message
    if re.search(r"^(in|input|src|source)$", p.name, re.I):
        return False
    bare = bare_data(fn)
    if p in bare:
        return p is not bare[0]
    lowered = fn.name.lower()
    if any(v in lowered for v in ("gets", "fread", "output")) or "get" in words(fn.name):
        return True  # lib_getName(obj, char *buf): a getter's buffer is filled for the caller
    return not (set(words(fn.name)) | {lowered}) & IN_VERBS


def bare_data(fn: FunctionDecl) -> list[Param]:
    """The data pointers of ``fn`` when there are two or more, all unnamed and none ``const``.

    ``decode(st, byte *, sample *)``, ``encode(st, sample *, byte *)``: a header that names no
    parameter and never writes ``const`` still lists the input first, the output after it.
    """
    data = [q for q in fn.params if ckinds.pointer_depth(q.type) == 1 and _data(q.type)]
    bare = len(data) >= 2 and all(unnamed(q.name) and not ckinds.is_const_target(q.type) for q in data)
    return data if bare else []


def _data(ctype: str) -> bool:
    """A pointer to bytes, characters or numbers."""
    return ckinds.is_bytes(ctype) or ckinds.is_string(ctype) or ckinds.is_integer(ckinds.pointee(ctype))


def unsized_output(fn: FunctionDecl, p: Param) -> bool:
    """A non-const buffer with no length, named as a destination, beside an input buffer.

    The input may be text, bytes or numbers (``const uint32_t *`` code points). A string
    named as an error message (``char *errorDescription``) is one too, beside anything: the
    library writes a message of its own size into it.
    """
    if ckinds.is_string(p.type) and _ERROR_TEXT.fullmatch(p.name):
        return True
    named = bool(re.fullmatch(r"(target|dest|dst|out|output|outbuf|result|res)\w{0,4}", p.name, re.I))
    # An unnamed `char *` beside the input: the header leaves the room it writes to unnamed
    # (`open(const char *, char *)`, an error buffer); a string from the input there is overrun.
    named = named or (unnamed(p.name) and ckinds.is_string(p.type) and fn.params[-1] is p)
    inputs = [q.type for q in fn.params if q is not p and ckinds.is_pointer(q.type)
              and ckinds.is_const_target(q.type)]
    data = [t for t in inputs
            if ckinds.is_string(t) or ckinds.is_bytes(t) or ckinds.is_integer(ckinds.pointee(t))]
    data += [q.type for q in fn.params if q is not p and ckinds.is_file(q.type)]  # a stream it reads
    return bool(named and data)


_TEXT_NAME = re.compile(r"(str|text|txt|sql|uri|url|name|expr|query|pattern|regex)", re.I)


def sentinel_length(rs: list[Role], r: Role) -> bool:
    """A ``char`` string named as text (``str``, ``zSql``) with a signed length next to it.

    An unnamed one counts too: the header does not say the integer after it is its length
    (``f(name, const char *, int64)`` may take a key and a default). Binary input (``src``,
    ``buf``) keeps the bare payload, so ASan sees over-reads.
    """
    if r.kind != "bytes" or r.pair is None or rs[r.pair].kind != "len":
        return False
    textual = (_TEXT_NAME.search(r.param.name) or re.match(r"z[A-Z]", r.param.name)
               or (unnamed(r.param.name) and unnamed(rs[r.pair].param.name)))
    signed = not ckinds.is_unsigned(rs[r.pair].param.type)
    return bool(textual) and ckinds.is_string(r.param.type) and signed


def unnamed(name: str) -> bool:
    """A parameter the header left unnamed (the prompt calls it ``argN``)."""
    return not name or bool(re.fullmatch(r"arg\d+", name))


# `(in, size_t *in_pos, size_t in_size)`: a cursor into the buffer, not its length.
_POSITION = re.compile(r"(^|_)(pos|position|offset|off|index|idx|cursor)$", re.I)


def position_then_length(nxt: Param | None, nxt2: Param | None) -> bool:
    """Whether a buffer is followed by a pointer to its position and then by its length.

    The library reads from (or writes to) the buffer at ``*pos`` and advances it, up to the
    length after it: the position starts at 0 and the length is the buffer's.
    """
    if nxt is None or nxt2 is None or ckinds.pointer_depth(nxt.type) != 1 or ckinds.is_const_target(nxt.type):
        return False
    return (ckinds.is_integer(ckinds.pointee(nxt.type)) and bool(_POSITION.search(nxt.name))
            and is_len_like(nxt2) and not ckinds.is_pointer(nxt2.type))


_NARROW = frozenset({"short", "unsigned short", "short int", "unsigned short int", "signed short",
                     "int16_t", "uint16_t", "int8_t", "uint8_t", "char", "signed char", "unsigned char"})


def unnamed_array(fn: FunctionDecl, p: Param) -> bool:
    """An unnamed writable pointer to narrow integers beside another data buffer: samples, not a value.

    ``decode(st, byte *, sample_t *)`` writes a frame of samples where a pointer to one value
    would take a single one; a ``short`` is never a count or a status handed back.
    """
    if not unnamed(p.name) or ckinds.is_const_target(p.type) or ckinds.pointer_depth(p.type) != 1:
        return False
    if ckinds.canonical_base(ckinds.pointee(p.type)) not in _NARROW - cdecl.BYTE_TYPES:
        return False
    return any(q is not p and ckinds.pointer_depth(q.type) == 1 and _data(q.type) for q in fn.params)


def length_pointer_after(p: Param, nxt: Param | None) -> bool:
    """Whether ``nxt``, a pointer to an integer after the buffer ``p``, holds ``p``'s length.

    Its name says so, or it has none: ``parse_int(const char *buf, int64_t *retval)`` takes a
    NUL-terminated string and hands its value back. A ``zName`` is NUL-terminated by its name.
    An unnamed pointer to a type narrower than ``int`` (``sample_t *``, a ``short``) is an array
    of its own (``decode(st, byte *frame, sample_t *pcm)``), never a length.
    """
    if nxt is None or not ckinds.is_pointer(nxt.type) or ckinds.is_bytes(nxt.type):
        return False
    if not ckinds.is_integer(ckinds.pointee(nxt.type)):
        return False
    if ckinds.is_const_target(p.type) and ckinds.is_string(p.type) and re.match(r"z[A-Z]", p.name):
        return False
    if cdecl.LENGTH_NAME.search(nxt.name):
        return True
    return unnamed(nxt.name) and ckinds.canonical_base(ckinds.pointee(nxt.type)) not in _NARROW


def wide_elements(ctype: str) -> bool:
    """A buffer of integers wider than a byte under a character-like name (``const lib_char32 *``)."""
    unit = ckinds.canonical_base(ctype)
    return unit not in cdecl.BYTE_TYPES and ckinds.is_integer(unit)


def counts_array(nxt: Param | None) -> bool:
    """Whether ``nxt`` counts the array before it: named so, or an unnamed ``size_t``."""
    if nxt is None or not ckinds.is_integer(nxt.type):
        return False
    # `read_short(f, short *ptr, count_t items)`: as many elements as the count says
    if re.search(r"(items|frames|elements|elems|nmemb|entries|samples)$", nxt.name, re.I):
        return True
    return ckinds.is_length(nxt) or (is_len_like(nxt) and ckinds.base_name(nxt.type) == "size_t")
