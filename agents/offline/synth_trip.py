"""Round trip: what an encoder writes into a fresh buffer goes through its inverse.

``size_t acme_img_encode_rgb(const uint8_t *rgb, int w, int h, int stride, float q, uint8_t
**out)`` hands back a buffer the library wrote in its own format, and its length (returned, or
through a ``size_t *`` after the buffer). Fuzz bytes rarely get past a decoder's headers and
checksums; what the encoder wrote always does, so the decoder reaches its deep paths (the block
decoding, the filters) that no empty-corpus run of a decoder alone gets to in minutes. The
decoder is the encoder's inverse by name (``encode``/``decode``, ``compress``/``decompress``,
``serialize``/``deserialize``, in any case style) taking bytes or text with a length; a text
written through ``char **`` with no length ends at its terminator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents.offline import ckinds
from agents.offline.synth_finders import inverse_of
from agents.offline.synth_roles import payload_slot, roles
from agents.offline.synth_types import CallPlan, decl_type
from fuzzkit.api import FunctionDecl

if TYPE_CHECKING:
    from agents.offline.synth_plan import Planner


def fresh_output(fn: FunctionDecl) -> tuple[int, int | None] | None:
    """``fn``'s ``T **`` handing back fresh bytes or text, and the ``size_t *`` after it.

    None when there is no such buffer, or nothing tells its length: neither a size
    out-parameter, nor an unsigned (size) return value, nor a terminator (text).
    """
    sized_return = ckinds.is_integer(fn.return_type) and ckinds.is_unsigned(fn.return_type)
    for i, p in enumerate(fn.params):
        inner = ckinds.pointee(p.type) if ckinds.pointer_depth(p.type) == 2 else ""
        written = ckinds.is_bytes(inner) or ckinds.is_string(inner)
        if not inner or ckinds.is_const_target(inner) or not written:
            continue
        size = next((j for j in range(i + 1, len(fn.params))
                     if ckinds.pointer_depth(fn.params[j].type) == 1
                     and not ckinds.is_const_target(fn.params[j].type)
                     and ckinds.is_integer(ckinds.pointee(fn.params[j].type))
                     and ckinds.is_unsigned(ckinds.pointee(fn.params[j].type))), None)  # fmt: skip
        if size is not None or sized_return or ckinds.is_string(inner):
            return i, size
    return None


def decode_written(pl: Planner, fn: FunctionDecl, plan: CallPlan, rc: str | None) -> str | None:
    """After ``fn``'s call (``plan``, its result in ``rc``), its inverse on the buffer it wrote.

    The inverse's call goes into ``pl.f.call``, entered only when the buffer is there and not
    empty. Returns the inverse's name, or None (nothing written) when the shapes do not fit.
    """
    shape = fresh_output(fn)
    decoder = inverse_of(pl.idx, fn.name)
    if shape is None or decoder is None or decoder.name in pl.avoid or shape[0] not in plan.outs:
        return None
    out, size = shape
    buf = plan.outs[out]
    drs = roles(decoder, pl.idx)
    src = payload_slot(drs)
    if src is None or drs[src].kind not in ("bytes", "text") or any(r.kind == "unsupported" for r in drs):
        return None  # (an argument the planner cannot build would drop the encoder's block too)
    inner = ckinds.pointee(fn.params[out].type)
    if size is not None and size in plan.outs:
        length = plan.outs[size]
    elif size is None and rc is not None and ckinds.is_unsigned(fn.return_type):
        length = rc
    elif ckinds.is_string(inner):
        length = f"strlen((const char *){buf})"
        pl.f.include("<string.h>")
    else:
        return None
    bind = {src: f"({decl_type(decoder.params[src].type)}){buf}"}
    pair = drs[src].pair
    if pair is not None:
        if drs[pair].kind != "len":
            return None  # a length the call updates: not worth a variable here
        bind[pair] = f"({decl_type(decoder.params[pair].type)}){length}"
    elif not ckinds.is_string(inner):
        return None  # bytes without a length would be read past their end
    body: list[str] = []
    saved = pl.avoid
    pl.avoid = saved | {fn.name}  # the decoder's other arguments are not made by another encode
    try:
        pl.emit(pl.plan(decoder, bind=bind, payload=False), body)
    finally:
        pl.avoid = saved
    pl.f.call.append(f"if ({buf} != NULL && {length} > 0) {{")
    pl.f.call.extend("  " + line for line in body)
    pl.f.call.append("}")
    return decoder.name
