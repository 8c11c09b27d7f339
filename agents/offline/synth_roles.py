"""What each parameter of a function is for, as far as a harness is concerned.

A role (:class:`~agents.offline.synth_types.Role`) says how an argument is built: the fuzz
payload as text or bytes, a length paired with a buffer, an output buffer, an object of a
library type, an option value taken from the input, a callback, and so on. The rules that give
each parameter shape its role are in :mod:`agents.offline.synth_role_rules`.
"""

from __future__ import annotations

import re

from agents.offline import ckinds
from agents.offline.synth_api import ApiIndex, words
from agents.offline.synth_arrays import mark_arrays
from agents.offline.synth_lengths import OUTPUT_LENGTH, grouped_lengths, wide_elements
from agents.offline.synth_pixels import mark_pixels, mark_raster
from agents.offline.synth_ranges import mark_cursors, mark_ranges, pair_ranges
from agents.offline.synth_role_rules import RULES, Scan, grouped
from agents.offline.synth_types import Role
from fuzzkit.api import FunctionDecl

# Role kinds a constant the library's own code passes replaces (see ``_roles``).
USAGE_REPLACED = ("text", "version", "mode", "format")

PAYLOAD_NAMES = re.compile(
    r"(value|input|data|buf|str|json|text|source|src|string|content|in$|"
    r"yaml|xml|doc|message|msg|bytes|raw|payload)",
    re.I,
)


def roles(fn: FunctionDecl, idx: ApiIndex) -> list[Role]:
    """One :class:`Role` per parameter of ``fn`` (cached per API index)."""
    cached = idx.role_cache.get(fn.name)
    if cached is not None and cached[0] == fn:
        return list(cached[1])
    found = _roles(fn, idx)
    idx.role_cache[fn.name] = (fn, found)
    return list(found)


def _roles(fn: FunctionDecl, idx: ApiIndex) -> list[Role]:
    params = list(fn.params)
    out: list[Role | None] = [None] * len(params)
    fn_words = set(idx.verbs(fn.name)) | set(words(fn.name))
    first_key = idx.type_key(params[0].type) if params else None
    scan = Scan(fn, idx, out, fn_words, idx.kind(fn), first_key)
    mark_arrays(params, out)
    ranges = mark_ranges(params, out)
    mark_cursors(params, out)
    lengths = {b: n for b, n in grouped_lengths(params).items() if out[b] is None}
    for i in range(len(params)):
        if out[i] is not None:
            continue
        if i in lengths:
            grouped(scan, i, lengths[i])
            continue
        nxt = params[i + 1] if i + 1 < len(params) else None
        if nxt is not None and out[i + 1] is not None:
            nxt = None  # already some buffer's length
        nxt2 = params[i + 2] if i + 2 < len(params) else None
        next(rule for rule in RULES if rule(scan, i, nxt, nxt2))
    pair_ranges(out, ranges)
    _pair_bit_lengths(out)
    _pair_leading_length(out)
    _pair_leading_counts(out)
    _share_array_length(out)
    mark_pixels(out, idx)
    mark_raster(out, idx)
    # A string or version the library's own code always passes as one of its header's constants
    # (a version string the library checks, an open mode) is that constant, never the payload.
    usage = idx.usage_constants.get(fn.name, {})
    for i, r in enumerate(out):
        if usage.get(i) and (r is None or r.kind in USAGE_REPLACED):
            out[i] = Role("usage_constant", i, params[i])
    return [r if r is not None else Role("null", i, params[i]) for i, r in enumerate(out)]


_BITS = re.compile(r"bits$", re.I)


def _pair_bit_lengths(out: list[Role | None]) -> None:
    """``f(ctx, const uint8_t *key, unsigned keybits)``: a buffer measured in bits.

    The callee reads ``keybits / 8`` bytes; an unrelated option value there makes it read past
    a short input. The bit count becomes the buffer's length times eight.
    """
    bufs = [r for r in out if r is not None and r.kind in ("bytes", "text") and r.pair is None]
    bits = [r for r in out if r is not None and r.kind == "int" and _BITS.search(r.param.name)]
    if len(bufs) == 1 and len(bits) == 1:
        buf, nbits = bufs[0], bits[0]
        out[buf.index] = Role("bytes", buf.index, buf.param, pair=nbits.index)
        out[nbits.index] = Role("len_bits", nbits.index, nbits.param, pair=buf.index)


def _pair_leading_length(out: list[Role | None]) -> None:
    """``f(ctx, mode, size_t length, iv, const uint8_t *input, uint8_t *output)``: length first.

    A block cipher's call names the length before its buffers. Left an option value, it reads
    past a short input. When the function has one length-named integer that no buffer took and
    one input buffer after it that no length took, the integer becomes that buffer's length.
    """
    bufs = [r for r in out if r is not None and r.kind in ("bytes", "text") and r.pair is None
            and ckinds.is_const_target(r.param.type)]
    lens = [r for r in out if r is not None and r.kind == "int" and ckinds.is_length(r.param)
            and not OUTPUT_LENGTH.search(r.param.name)]
    if len(bufs) == 1 and len(lens) == 1 and lens[0].index < bufs[0].index:
        buf, length = bufs[0], lens[0]
        out[buf.index] = Role("bytes", buf.index, buf.param, pair=length.index)
        out[length.index] = Role("len", length.index, length.param, pair=buf.index)


# A count named as a number of things (`nb`, `write_nb`, `num`, `n_regs`), right before its array.
_LEADING_COUNT = re.compile(r"^(?:\w+_)?(?:n|nb|num|count|n_?[a-z]+s|nb_?[a-z]+s?)$", re.I)
_ARRAY_KINDS = ("text", "out_scalar", "outbuf", "scratch")


def _pair_leading_counts(out: list[Role | None]) -> None:
    """``write_regs(ctx, int addr, int nb, const uint16_t *src)``: a count just before its array.

    The callee reads (or writes) as many elements as the count says; an option value there
    reads past a short input, a one-value local, or writes past it. An input array of bytes
    becomes the payload with its size, one of wider numbers a small array the count bounds, and
    a writable one room as long as the count says.
    """
    for i in range(len(out) - 1):
        count, array = out[i], out[i + 1]
        if count is None or array is None or count.kind != "int" or count.pair is not None:
            continue
        if array.pair is not None or array.kind not in _ARRAY_KINDS:
            continue
        if ckinds.pointer_depth(array.param.type) != 1:
            continue
        if not (_LEADING_COUNT.match(count.param.name) or ckinds.is_length(count.param)):
            continue
        t = array.param.type
        elem, const = ckinds.pointee(t), ckinds.is_const_target(t)
        if const and OUTPUT_LENGTH.search(count.param.name):
            continue  # `wrap(ctx, out_len, input, output)`: the output's room, not the input's
        if ckinds.is_bytes(t) or ckinds.is_string(t):
            kinds = ("bytes", "len") if const else ("outbuf", "outlen")
        elif ckinds.is_integer(elem) or ckinds.is_float(elem):
            kinds = ("array", "count") if const else ("workspace", "count")
        else:
            continue
        out[i + 1] = Role(kinds[0], i + 1, array.param, pair=i)
        out[i] = Role(kinds[1], i, count.param, pair=i + 1)


def _share_array_length(out: list[Role | None]) -> None:
    """``f(const type_t *types, int len, const level_t *levels, prop_t *props)``: one length for all.

    An input of wider elements (code points) gets an array for each value out: one per element.
    The count after a number array is the length of every array of the call: the input buffer
    that took no length of its own takes it (the input's size), and the number array becomes a
    zeroed array as long as the input (eight numbers and a count up to 8 read past a shorter input).
    """
    wide = [r for r in out if r is not None and r.kind == "bytes" and r.pair is not None
            and ckinds.is_const_target(r.param.type) and wide_elements(r.param.type)]
    if wide:  # `get_types(const char32 *s, int len, type_t *types)`
        for r in out:
            if r is not None and _one_value_out(r):
                out[r.index] = Role("parallel", r.index, r.param)
    arrays = [r for r in out if r is not None and r.kind == "array" and r.pair is not None]
    bufs = [r for r in out if r is not None and r.kind in ("bytes", "text") and r.pair is None
            and ckinds.is_const_target(r.param.type) and not ckinds.is_string(r.param.type)]
    if len(arrays) != 1 or len(bufs) != 1:
        return
    array, buf = arrays[0], bufs[0]
    count = out[array.pair] if array.pair is not None else None
    if count is None or count.kind != "count":
        return
    out[array.index] = Role("parallel", array.index, array.param)
    out[buf.index] = Role("bytes", buf.index, buf.param, pair=count.index)
    out[count.index] = Role("len", count.index, count.param, pair=buf.index)


def _one_value_out(r: Role) -> bool:
    """A writable pointer to one integer or enum value (a value out, or a zeroed enum record)."""
    t = r.param.type
    enum = ckinds.is_enum_typedef(ckinds.base_name(t))
    plain = ckinds.pointer_depth(t) == 1 and not ckinds.is_const_target(t)
    number = enum or ckinds.is_integer(ckinds.pointee(t))
    return plain and (r.kind == "out_scalar" and number or r.kind == "object" and enum)


def payload_slot(rs: list[Role]) -> int | None:
    """The parameter that should receive the whole fuzz payload (bytes beat named text)."""
    bytes_roles = [r for r in rs if r.kind in ("bytes", "blob", "pixels", "cursor")]
    if bytes_roles:
        return bytes_roles[0].index
    texts = [r for r in rs if r.kind == "text"]
    named = [r for r in texts if PAYLOAD_NAMES.search(r.param.name)]
    if named:
        return named[-1].index
    fixed = [r for r in rs if r.kind == "fixed_in"]  # `key[32]` of a call taking nothing else
    return texts[0].index if texts else fixed[0].index if fixed else None
