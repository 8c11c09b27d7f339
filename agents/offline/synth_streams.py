"""Stream and handle driving.

Chunk-loop bodies for stream structs (next_in/avail_in), a processor run over the payload, and
reader loops for file handles.
"""

from __future__ import annotations

import re

from agents.offline import cdecl, ckinds
from agents.offline.synth_ctx import Ctx
from agents.offline.synth_knowledge import StreamFields
from agents.offline.synth_plan import Obj
from agents.offline.synth_roles import roles
from fuzzkit.api import FunctionDecl


def stream_lines(ctx: Ctx, obj: Obj, fields: StreamFields) -> None:
    """The chunk-loop body for a stream struct with next_in/avail_in cursors, and a finish."""
    pl, t = ctx.pl, ctx.target
    s = f"{obj.var}." if obj.expr.startswith("&") else f"{obj.var}->"
    win = pl.var("size_t", "window_size")
    ctx.f.opts.append(f"{win} = (size_t){ctx.f.take_int((1, 16, 256, 4096, 16384, 65536))};")
    out = pl.var("uint8_t *", "window", "NULL")
    ctx.f.setup += [f"{out} = (uint8_t *)malloc({win});", f"if ({out} == NULL) {ctx.f.fail()}"]
    ctx.f.cleanup.append(f"free({out});")
    ctx.f.include("<stdlib.h>")
    budget = pl.var("int", "budget", "1024")
    plan = pl.plan(t, bind={0: obj.expr})
    rc = pl.var(t.return_type, "rc")
    keep = fields.keep_going.format(rc=rc)
    ctx.f.call += [
        f"{s}{fields.next_in} = ({fields.in_cast})lf_chunk;",
        f"{s}{fields.avail_in} = ({fields.avail_cast})lf_chunk_size;",
        "do {",
        f"  {s}{fields.next_out} = ({fields.out_cast}){out};",
        f"  {s}{fields.avail_out} = ({fields.avail_cast}){win};",
        f"  {rc} = {plan.text};",
        f"}} while (({keep}) && ({s}{fields.avail_in} > 0 || {s}{fields.avail_out} == 0) && --{budget} > 0);",
        f"if (!({keep}) || {budget} <= 0) break;",
    ]
    rs = roles(t, pl.idx)
    flush = next((r for r in rs if re.search(r"^(flush|action)$", r.param.name)), None)
    if flush is None:
        return
    args = plan.text[len(t.name) + 1 : -1]
    finish_args = cdecl.split_top(args)
    finish_args[flush.index] = fields.finish
    ctx.use += [
        f"/* Finish the stream: {fields.finish} until it stops making progress. */",
        f"for (int lf_k = 0; lf_k < 64 && ({keep}) && {budget}-- > 0; lf_k++) {{",
        f"  {s}{fields.next_in} = ({fields.in_cast})data;",
        f"  {s}{fields.avail_in} = 0;",
        f"  {s}{fields.next_out} = ({fields.out_cast}){out};",
        f"  {s}{fields.avail_out} = ({fields.avail_cast}){win};",
        f"  {rc} = {t.name}({', '.join(finish_args)});",
        "}",
    ]


def stream_drive(ctx: Ctx, obj: Obj, fields: StreamFields, proc: FunctionDecl | None = None) -> bool:
    """Run the stream's main processor (``lib_decode`` for a ``lib_decodeInit`` stream) over the payload."""
    pl, idx = ctx.pl, ctx.idx
    procs = [proc] if proc is not None else []
    for f in idx.api if proc is None else []:
        rs = roles(f, idx)
        if f.name in pl.avoid or not rs or rs[0].type_key != obj.type_key or f == ctx.target:
            continue
        if any(r.param.name in ("flush", "action") for r in rs):
            # lib_decode only runs on a stream lib_decodeInit made, never on a lib_decodeBackInit one.
            if not obj.origin or idx.stem(obj.origin) == f.name:
                procs.append(f)
    procs.sort(key=lambda f: (not ctx.target.name.startswith(f.name), len(f.name), f.name))
    if not procs:
        return False
    proc = procs[0]
    s = f"{obj.var}." if obj.expr.startswith("&") else f"{obj.var}->"
    win = pl.var("size_t", "window_size")
    ctx.f.opts.append(f"{win} = (size_t){ctx.f.take_int((16, 256, 4096, 65536))};")
    out = pl.var("uint8_t *", "window", "NULL")
    ctx.f.setup += [f"{out} = (uint8_t *)malloc({win});", f"if ({out} == NULL) {ctx.f.fail()}"]
    ctx.f.cleanup.append(f"free({out});")
    ctx.f.include("<stdlib.h>")
    plan = pl.plan(proc, bind={0: obj.expr})
    rc = pl.var(proc.return_type, "processed")
    keep = fields.keep_going.format(rc=rc)
    ctx.use += [
        f"/* Run {proc.name} over the payload so the call above affects real work. */",
        "for (size_t lf_off = 0, lf_round = 0; lf_round < 4096; lf_round++) {",
        "  size_t lf_n = size - lf_off < 4096 ? size - lf_off : 4096;",
        f"  {s}{fields.next_in} = ({fields.in_cast})(data + lf_off);",
        f"  {s}{fields.avail_in} = ({fields.avail_cast})lf_n;",
        f"  {s}{fields.next_out} = ({fields.out_cast}){out};",
        f"  {s}{fields.avail_out} = ({fields.avail_cast}){win};",
        f"  {rc} = {plan.text};",
        f"  lf_off += lf_n - {s}{fields.avail_in};",
        f"  if (!({keep})) break;",
        "}",
    ]
    return True


def reader_loop(ctx: Ctx, obj: Obj) -> bool:
    """Read from a handle (``lib_read``) into a buffer until it reports nothing more."""
    pl, idx = ctx.pl, ctx.idx
    for f in idx.api:
        rs = roles(f, idx)
        if f.name in pl.avoid or f == ctx.target or not ckinds.is_integer(f.return_type):
            continue
        if not re.search(r"read", f.name, re.I) or not any(r.kind == "outbuf" for r in rs):
            continue
        slot = next((r.index for r in rs if r.type_key == obj.type_key), None)
        if slot is None:
            continue
        plan = pl.plan(f, bind={slot: obj.expr}, payload=False)
        rc = pl.var(f.return_type, "got")
        guard = f"{obj.expr} != NULL && " if not obj.expr.startswith("&") else ""
        ctx.use += [
            f"/* Read everything back through {f.name}. */",
            f"for (int lf_k = 0; {guard}lf_k < 4096; lf_k++) {{",
            f"  {rc} = {plan.text};",
            f"  if ({rc} <= 0) break;",
            "}",
        ]
        return True
    return False


