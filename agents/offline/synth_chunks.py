"""Archetypes that work on the payload as a byte stream.

Stream processors (chunks through a stream context), incremental digests (a running value over
chunks) and buffer codecs (one-shot transform into a bounded buffer, then its inverse).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agents.offline import ckinds
from agents.offline.synth_blocks import call_block
from agents.offline.synth_ctx import Ctx
from agents.offline.synth_drive import use_related
from agents.offline.synth_finders import inverse_of, words
from agents.offline.synth_init import initialize
from agents.offline.synth_knowledge import (
    digest_init,
    stream_fields,
    success_test,
)
from agents.offline.synth_objects import obtain
from agents.offline.synth_plan import Obj, decl_type
from agents.offline.synth_roles import payload_slot, roles
from agents.offline.synth_streams import stream_lines
from agents.offline.synth_vocab import FINISH, LAST_PIECE


def stream(ctx: Ctx) -> None:
    """Feed the payload chunk by chunk through a stream context."""
    t, idx, pl = ctx.target, ctx.idx, ctx.pl
    rs = roles(t, idx)
    key = rs[0].type_key if rs and rs[0].kind in ("object", "handle") else None
    fields = stream_fields(key)
    ctx.f.opts.append(f"lf_chunk_max = (size_t){ctx.f.take_int((1, 2, 7, 64, 512, 4096))};")
    if key and fields and rs[0].kind == "object":
        obj = initialize(pl, key, t.name, feed=False)
        pl.scope.append(obj)
        stream_lines(ctx, obj, fields)
        return
    bytes_i = next((r.index for r in rs if r.kind == "bytes"), None)
    if key and bytes_i is not None:
        obj = obtain(pl, key, t.name, feed=False)
        bind = {0: obj.expr, bytes_i: f"({decl_type(t.params[bytes_i].type)})lf_chunk"}
        pair = rs[bytes_i].pair
        each: list[str] = []  # per-chunk resets before each call
        if pair is not None and rs[pair].kind == "inlen_ptr":
            # The call reads the chunk length through a pointer and writes back what it used.
            inner = decl_type(ckinds.pointee(t.params[pair].type))
            used = pl.var(inner, "in_len")
            each.append(f"{used} = ({inner})lf_chunk_size;")
            bind[pair] = f"&{used}"
        elif pair is not None:
            bind[pair] = f"({decl_type(t.params[pair].type)})lf_chunk_size"
        for r in rs:
            last = LAST_PIECE.search(r.param.name)
            if r.kind in ("int", "bool") and last:
                bind[r.index] = "lf_is_last"
        plan = pl.plan(t, bind=bind)
        out = next((r for r in rs if r.kind == "outbuf" and r.pair is not None), None)
        if out is not None and out.pair is not None and rs[out.pair].kind == "outlen_ptr" and plan.out_cap:
            # The output length comes back through the pointer: a full buffer again each chunk.
            inner = decl_type(ckinds.pointee(t.params[out.pair].type))
            each.append(f"{plan.out_len} = ({inner}){plan.out_cap};")
        ctx.f.call.extend(each)
        rc = pl.emit(plan, ctx.f.call)
        if rc:
            ok = success_test(
                t.name, t.return_type, rc, ckinds.is_bool(t.return_type), ckinds.is_pointer(t.return_type)
            )
            ctx.f.call.append(f"if (!({ok})) break;")
        _finish(ctx, obj, lambda name: bool(set(words(name)) & FINISH))
        return
    plan = pl.plan(t)
    pl.emit(plan, ctx.f.call)


def digest(ctx: Ctx) -> bool:
    """Fold the payload into a running value (or a context) chunk by chunk.

    False (nothing written) when the target takes no bytes: the caller falls back to one call.
    """
    t, idx, pl = ctx.target, ctx.idx, ctx.pl
    rs = roles(t, idx)
    bytes_i = next((r.index for r in rs if r.kind == "bytes"), None)
    ctx.f.opts.append(f"lf_chunk_max = (size_t){ctx.f.take_int((1, 3, 16, 64, 1024, 4096))};")
    if bytes_i is None:
        return False
    bind = {bytes_i: f"({decl_type(t.params[bytes_i].type)})lf_chunk"}
    pair = rs[bytes_i].pair
    if pair is not None:
        bind[pair] = pl.length(t.params[pair].type, "lf_chunk_size")
    running = rs[0].kind == "int" and ckinds.base_name(t.params[0].type) == ckinds.base_name(t.return_type)
    if running:
        acc = pl.var(t.return_type, "acc")
        init = digest_init(t.name, len(t.params))
        ctx.f.setup.append(f"{acc} = {init};")
        bind[0] = acc
        plan = pl.plan(t, bind=bind)
        ctx.f.call.append(f"{acc} = {plan.text};")
        ctx.use.append(f"(void){acc};")
        return True
    key = idx.first_object(t)
    obj = None
    if key and rs[0].kind == "object":
        obj = obtain(pl, key, t.name, feed=False)
        bind[0] = obj.expr
    plan = pl.plan(t, bind=bind)
    rc = pl.emit(plan, ctx.f.call)
    if rc and not ckinds.is_pointer(t.return_type):
        ok = success_test(t.name, t.return_type, rc, ckinds.is_bool(t.return_type), False)
        ctx.f.call.append(f"if (!({ok})) break;")
    final = re.compile(r"(final|finish|digest)", re.I).search  # SHA256_Final(md, &ctx) after the updates
    if obj is not None and _finish(ctx, obj, final, anywhere=True):
        return True
    use_related(ctx, pl.scope[:1])
    return True


def _finish(ctx: Ctx, obj: Obj, named: Callable[[str], object], anywhere: bool = False) -> bool:
    """After the chunks, a block calling the object's end function (its result released there).

    A streaming parser's ``lib_parser_finish(p)`` hands back what the fed chunks built. The
    function takes the object first (``anywhere``: as any parameter) and ``named`` accepts its
    name; the target and the object's releasers never count. False when there is none.
    """
    idx, pl = ctx.idx, ctx.pl
    for f in idx.api:
        keys = [idx.type_key(p.type) for p in f.params]
        if f == ctx.target or f.name in pl.avoid or not keys or not named(f.name):
            continue
        if obj.type_key not in (keys if anywhere else keys[:1]) or idx.kind(f) == "destroy":
            continue
        block = call_block(idx, f, [obj], pl.avoid, ctx.taken | ctx.f.taken, ctx.block_number())
        if block:
            ctx.blocks.append(block)
            return True
    return False


def codec(ctx: Ctx) -> None:
    """One-shot transform into a bounded heap buffer; the inverse on its output."""
    t, idx, pl = ctx.target, ctx.idx, ctx.pl
    plan = pl.plan(t)
    rc = pl.emit(plan, ctx.f.call)
    inverse = inverse_of(idx, t.name)
    if not (inverse and plan.out_buf and plan.out_len and rc) or inverse.name in pl.avoid:
        return
    if ctx.related and inverse.name not in ctx.related:
        return
    irs = roles(inverse, idx)
    src = payload_slot(irs)
    if src is None or irs[src].kind != "bytes" or irs[src].pair is None:
        return
    pair = irs[src].pair or 0
    bind = {src: f"({decl_type(inverse.params[src].type)}){plan.out_buf}"}
    ok = success_test(t.name, t.return_type, rc, ckinds.is_bool(t.return_type), False)
    produced = plan.out_len
    if plan.out_by_value and ckinds.is_integer(t.return_type) and not ckinds.is_bool(t.return_type):
        # The capacity went in by value, so the return value is the length written
        # (pk_pack, codec_compress_default): the inverse reads that much, not the capacity.
        produced, ok = rc, f"{rc} > 0"
    if irs[pair].kind == "len":
        bind[pair] = f"({decl_type(inverse.params[pair].type)}){produced}"
    else:  # a pointer to the input length, which the call updates
        inner = decl_type(ckinds.pointee(inverse.params[pair].type))
        used = pl.var(inner, "used_len")
        ctx.f.call.append(f"{used} = ({inner}){produced};")
        bind[pair] = f"&{used}"
    block = call_block(
        idx,
        inverse,
        [],
        pl.avoid,
        ctx.taken | ctx.f.taken,
        ctx.block_number(),
        f"{inverse.name} undoes {t.name}",
        bind=bind,
        guard=ok,
    )
    if block:
        ctx.blocks.append(block)
