"""Driving objects after setup.

Step loops over a producer, producer-to-consumer pipes, stream chunk bodies, reader loops and
cheap related calls.
"""

from __future__ import annotations

from agents.offline import ckinds
from agents.offline.synth_api import ApiIndex, words
from agents.offline.synth_blocks import Block, call_block, identifiers
from agents.offline.synth_ctx import Ctx
from agents.offline.synth_fill import unfilled
from agents.offline.synth_knowledge import (
    always_consumes,
    end_test,
    status_constant,
    stream_fields,
    success_test,
)
from agents.offline.synth_objects import obtain, producer
from agents.offline.synth_plan import Obj
from agents.offline.synth_roles import payload_slot, roles
from agents.offline.synth_streams import reader_loop, stream_drive
from agents.offline.synth_usage_after import follow_usage
from agents.offline.synth_vocab import CONSUME
from agents.offline.type_table import active
from agents.stepper_api import STEP_WORDS
from fuzzkit.api import FunctionDecl

CHEAP = {
    "is",
    "get",
    "has",
    "print",
    "count",
    "size",
    "length",
    "compare",
    "tell",
    "eof",
    "error",
    "mark",
    "find",
    "lookup",
    "peek",
    "bound",
    "pending",
    "root",
    "node",
}
MAX_STEPS = 65536
# `int lib_step(T *)` (named with a STEP_WORDS word): one more row, token or node of a product.
STEP_LIMIT = 256
END_WORDS = ("DONE", "END", "EOF", "FINISHED", "COMPLETE")


def use_related(ctx: Ctx, scope: list[Obj], limit: int | None = None) -> None:
    """Add up to ``limit`` cheap related calls on ``scope`` objects as USE blocks."""
    limit = ctx.use_limit if limit is None else limit
    keys = {o.type_key for o in scope if not unfilled(ctx.idx, o, ctx.target)}
    added = 0
    seen: set[str] = set()
    # A decoding stream takes decode* calls, not encode* ones: keep to the creator's family.
    stems = {ctx.idx.stem(o.origin) for o in scope if o.origin}
    family = [n for n in ctx.related if any(s and n.startswith(s) for s in stems)]
    for name in family or ctx.related:
        fn = ctx.idx.by_name.get(name)
        if fn is None or added >= limit or name == ctx.target.name or name in ctx.pl.avoid:
            continue
        if not fn.params or ctx.idx.type_key(fn.params[0].type) not in keys:
            continue
        if ctx.idx.kind(fn) in ("destroy", "init") or set(ctx.idx.verbs(name)) & CONSUME:
            continue
        cheap = set(words(name)) & CHEAP
        if not cheap:
            continue
        # One call per kind (print, size, predicate, getter...): variety reaches more code.
        kind = min(cheap)
        if kind in seen:
            continue
        block = call_block(
            ctx.idx,
            fn,
            scope,
            ctx.pl.avoid,
            ctx.taken | ctx.f.taken,
            ctx.block_number(),
            f"{name} on the result",
        )
        if block:
            ctx.blocks.append(block)
            ctx.taken |= identifiers("\n".join(block.lines + block.hoist))
            added += 1
            seen.add(kind)


def comparer(idx: ApiIndex, key: str) -> FunctionDecl | None:
    """A function comparing two objects of ``key`` (``acme_compare``)."""
    for f in idx.api:
        objs = sum(idx.type_key(p.type) == key for p in f.params)
        if objs >= 2 and set(words(f.name)) & {"compare", "equal", "equals", "cmp", "eq"}:
            return f
    return None


def step_lines(ctx: Ctx, fn: FunctionDecl, obj: Obj) -> list[str]:
    """One step of ``fn`` on ``obj`` as a loop body that breaks on error or end."""
    pl, idx = ctx.pl, ctx.idx
    rs = roles(fn, idx)
    out = next((r for r in rs if r.kind == "out_object"), None)
    bind = {0: obj.expr}
    lines: list[str] = []
    ev = None
    if out is not None and out.type_key:
        ev = pl.f.name(out.param.name)
        bind[out.index] = f"&{ev}"
        lines += [f"{out.type_key} {ev};", f"memset(&{ev}, 0, sizeof {ev});"]
        pl.f.include("<string.h>")
    plan = pl.plan(fn, bind=bind)
    conds = []
    if ckinds.is_void(fn.return_type):
        lines.append(f"{plan.text};")
    else:
        rc = pl.var(fn.return_type, "rc", "NULL" if ckinds.is_pointer(fn.return_type) else "0")
        lines.append(f"{rc} = {plan.text};")
        ok = success_test(
            fn.name, fn.return_type, rc, ckinds.is_bool(fn.return_type), ckinds.is_pointer(fn.return_type)
        )
        conds.append(f"!({ok})")
    if ev and out is not None and out.type_key:
        end = end_test(out.type_key, idx.api)
        if end:
            conds.append(end.format(v=ev))
        pl.f.need("is_zero")
        conds.append(f"lf_is_zero(&{ev}, sizeof {ev})")
    if payload_slot(rs) is not None:
        # `scan(re, str, end, &region, ...)` takes the whole input on every call: it does not
        # step, and repeating it only repeats the same work (65536 scans per input).
        conds.append("1 /* it takes the whole input: once */")
    done = pl.f.name("done")
    lines.append(f"int {done} = {' || '.join(conds) or '0'};")
    dtor = idx.destructor(out.type_key, fn.name) if out is not None and out.type_key else None
    if dtor and ev:
        lines.append(f"{dtor}(&{ev});")
    lines.append(f"if ({done}) break;")
    return lines


def loop(body: list[str]) -> list[str]:
    """``body`` inside a bounded step loop."""
    return [f"for (int lf_step = 0; lf_step < {MAX_STEPS}; lf_step++) {{", *("  " + ln for ln in body), "}"]


def pipe_lines(ctx: Ctx, consumer: FunctionDecl, dst: Obj) -> list[str] | None:
    """A loop moving each item a producer makes (parsed events) into ``consumer`` (an emitter)."""
    pl, idx = ctx.pl, ctx.idx
    rs = roles(consumer, idx)
    slot = next((r for r in rs if r.kind == "consumed"), None)
    if slot is None or not slot.type_key:
        return None
    prod = producer(idx, pl.avoid, out_key=slot.type_key)
    if prod is None:
        return None
    prs = roles(prod, idx)
    src_key = prs[0].type_key or ""
    src = obtain(pl, src_key, prod.name, feed=True)
    out = next(r for r in prs if r.kind == "out_object")
    ev = pl.f.name(slot.param.name)
    pplan = pl.plan(prod, bind={0: src.expr, out.index: f"&{ev}"})
    cplan = pl.plan(consumer, bind={0: dst.expr, slot.index: f"&{ev}"})
    prc = pl.var(prod.return_type, "parsed")
    crc = pl.var(consumer.return_type, "emitted")
    pok = success_test(prod.name, prod.return_type, prc, ckinds.is_bool(prod.return_type), False)
    cok = success_test(consumer.name, consumer.return_type, crc, ckinds.is_bool(consumer.return_type), False)
    dtor = idx.destructor(slot.type_key, prod.name)
    release = f"{dtor}(&{ev}); " if dtor else ""
    end = (end_test(slot.type_key, idx.api) or "0").format(v=ev)
    last = pl.f.name("last")
    pl.f.need("is_zero")
    pl.f.include("<string.h>")
    body = [
        f"{slot.type_key} {ev};",
        f"memset(&{ev}, 0, sizeof {ev});",
        f"{prc} = {pplan.text};",
        f"if (!({pok}) || lf_is_zero(&{ev}, sizeof {ev})) {{ {release}break; }}",
        f"int {last} = {end};",
        f"{crc} = {cplan.text};",
    ]
    if always_consumes(consumer.name) or not release:
        body.append(f"if (!({cok}) || {last}) break;")
    else:
        body.append(f"if (!({cok})) {{ {release}break; }}")
        body.append(f"if ({last}) break;")
    return loop(body)


def drivable(ctx: Ctx, obj: Obj) -> bool:
    """Whether :func:`drive` has more to offer than cheap related calls."""
    if stream_fields(obj.type_key) is not None:
        return not obj.origin or ctx.idx.stem(obj.origin) in ctx.idx.by_name
    if ctx.idx.is_handle(obj.type_key):
        return True  # a reader loop
    if producer(ctx.idx, ctx.pl.avoid, key=obj.type_key) is not None:
        return True
    return any(_pipe_target(ctx, f, obj) for f in ctx.idx.api)


def _pipe_target(ctx: Ctx, f: FunctionDecl, obj: Obj) -> bool:
    rs = roles(f, ctx.idx)
    if not rs or rs[0].type_key != obj.type_key or f.name in ctx.pl.avoid:
        return False
    slot = next((r for r in rs if r.kind == "consumed"), None)
    return slot is not None and producer(ctx.idx, ctx.pl.avoid, out_key=slot.type_key) is not None


def drive(ctx: Ctx, obj: Obj) -> None:
    """After setup: step the object with its producer, pipe into it, or call cheap functions."""
    fields = stream_fields(obj.type_key)
    if fields is not None and stream_drive(ctx, obj, fields):
        return
    if follow_usage(ctx, obj):
        return
    prod = producer(ctx.idx, ctx.pl.avoid, key=obj.type_key)
    if prod is not None and prod.name != ctx.target.name:
        ctx.use.extend(loop(step_lines(ctx, prod, obj)))
        return
    for f in ctx.idx.api:
        if _pipe_target(ctx, f, obj):
            lines = pipe_lines(ctx, f, obj)
            if lines:
                ctx.use.extend(lines)
                return
    if reader_loop(ctx, obj):
        return
    use_related(ctx, [obj])


def stepper(ctx: Ctx, key: str) -> FunctionDecl | None:
    """``int lib_stmt_step(T *)``: a one-argument call that advances a ``key`` object."""
    found = steppers(ctx.idx, key, ctx.pl.avoid | {ctx.target.name})
    return min(found, key=lambda x: x[:2])[2] if found else None


def steppers(idx: ApiIndex, key: str, skip: set[str]) -> list[tuple[int, str, FunctionDecl]]:
    """Every :func:`stepper` of ``key`` but those in ``skip``, with its step word's rank."""
    found = []
    for f in idx.api:
        if (f.name in skip or len(f.params) != 1 or idx.type_key(f.params[0].type) != key
                or ckinds.is_const_target(f.params[0].type)):
            continue
        rt = f.return_type
        if not (ckinds.is_integer(rt) or ckinds.is_bool(rt) or ckinds.is_enum_like(rt)) or idx.kind(f) in (
                "destroy", "init"):
            continue
        name_words = set(words(f.name))
        rank = next((i for i, w in enumerate(STEP_WORDS) if w in name_words), None)
        if rank is not None:
            found.append((rank, f.name, f))
    return found


def step_block(ctx: Ctx, fn: FunctionDecl, obj: Obj) -> Block:
    """``fn`` called on ``obj`` until its answer changes (row, row, ..., done), a bounded loop.

    The codes mean different things in each library (a row, a node, more input needed), so the
    loop goes on while the call answers as it did the first time, and stops at a change, a
    negative (error) answer or the header's "done" status.
    """
    n = ctx.block_number()
    first, rc, k = f"lf_first_{n}", f"lf_rc_{n}", f"lf_k_{n}"
    # A call on a finished object may start it over (a statement run again): the header's one
    # "done" status, where it has one, ends the loop whatever came first.
    end = status_constant(active(), END_WORDS)
    lines = [
        f"/* {fn.name} on {obj.var}: stepped while it answers as it did first */",
        f"if ({obj.expr} != NULL) {{",
        f"  long long {first} = 0;",
        f"  for (int {k} = 0; {k} < {STEP_LIMIT}; {k}++) {{",
        f"    long long {rc} = (long long){fn.name}({obj.expr});",
        f"    if ({k} == 0) {first} = {rc};",
        f"    else if ({rc} != {first}) break;",
        f"    if ({rc} < 0{f' || {rc} == {end}' if end else ''}) break;",
        "  }",
        "}",
    ]
    return Block(function=fn.name, lines=lines, calls=[fn.name], uses=[obj.expr])


def drive_made(ctx: Ctx) -> None:
    """Step what the target handed back through a ``T **`` parameter, then cheap calls on it.

    ``lib_prepare(db, sql, len, &stmt, &tail)`` compiles a statement; running it is what
    reaches the rest of the library.
    """
    made = [o for o in ctx.pl.produced if o.origin == ctx.target.name]
    for obj in made[:2]:
        fn = stepper(ctx, obj.type_key)
        if fn is not None:
            block = step_block(ctx, fn, obj)
            ctx.blocks.append(block)
            ctx.taken |= identifiers("\n".join(block.lines + block.hoist))
        use_related(ctx, [obj])
