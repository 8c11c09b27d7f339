"""Per-archetype harness bodies: what goes into SETUP, CALL and USE for each usage pattern."""

from __future__ import annotations

import re
from collections.abc import Callable

from agents.offline import cdecl
from agents.offline.synth_api import ApiIndex, words
from agents.offline.synth_blocks import Block, call_block
from agents.offline.synth_drive import Ctx, comparer, drivable, drive, step_lines, use_related
from agents.offline.synth_knowledge import DIGEST_INIT, INVERSES, STREAMS, success_test
from agents.offline.synth_objects import initialize, obtain, producer
from agents.offline.synth_plan import Obj, decl_type
from agents.offline.synth_roles import payload_slot, roles
from fuzzkit.api import FunctionDecl

# Functions that inspect or copy state: they matter after the object has done some work.
DRIVE_FIRST = re.compile(r"(copy|clone|dup|mark|sync|pending|reset|used|bound|tell|offset|eof|"
                         r"error|getdictionary|flush|close)", re.I)

def _result_obj(ctx: Ctx, fn: FunctionDecl, var: str | None) -> list[Obj]:
    key = ctx.idx.type_key(fn.return_type)
    return [Obj(key, var, var, owned=False)] if key and var else []


def stateless(ctx: Ctx) -> None:
    """One call on the payload; cheap calls on what it returns."""
    plan = ctx.pl.plan(ctx.target)
    var = ctx.pl.emit(plan, ctx.f.call, result="result")
    use_related(ctx, _result_obj(ctx, ctx.target, var) or ctx.pl.scope[:1])


def lifecycle(ctx: Ctx) -> None:
    """Build the object, call the target on it, release it (target may be init or destroy)."""
    t, idx, pl = ctx.target, ctx.idx, ctx.pl
    rs = roles(t, idx)
    key = rs[0].type_key if rs and rs[0].kind in ("object", "handle") else None
    if key and rs[0].kind == "object" and idx.kind(t) == "init" and not cdecl.is_const_target(
        t.params[0].type
    ):
        obj = initialize(pl, key, t.name, feed=True, init=t, into=ctx.f.call)
        pl.scope.append(obj)
        drive(ctx, obj)
        return
    if key and idx.kind(t) == "destroy" and len(t.params) == 1:
        obj = obtain(pl, key, t.name)
        if not _open_first(ctx, obj):
            _drive_before(ctx, obj)
        ctx.f.call.append(f"{t.name}({obj.expr});")
        if idx.destructor(key, obj.origin or t.name) == t.name:
            reset = f"{obj.var}_ready = 0;" if obj.expr.startswith("&") else f"{obj.var} = NULL;"
            ctx.f.call.append(f"{reset} /* released by the target itself */")
        pl.f.calls.append(t.name)
        return
    plan = pl.plan(t)
    key = key or idx.first_object(t)
    obj = next((o for o in pl.scope if o.type_key == key), None)
    opened = obj is not None and _open_first(ctx, obj)
    early = obj is not None and (opened or DRIVE_FIRST.search(t.name) and _drive_before(ctx, obj))
    var = pl.emit(plan, ctx.f.call, result="result")
    if obj is not None and drivable(ctx, obj):
        if not early:
            drive(ctx, obj)
    else:
        use_related(ctx, _result_obj(ctx, t, var) + pl.scope[:1])


def _open_first(ctx: Ctx, obj: Obj) -> bool:
    """Call the object's ``open`` (``yaml_emitter_open``) before a close/flush-like target."""
    t, idx = ctx.target, ctx.idx
    if not (set(idx.verbs(t.name)) | set(words(t.name))) & {"close", "flush", "finish", "end"}:
        return False
    for f in idx.api:
        if len(f.params) == 1 and f != t and idx.type_key(f.params[0].type) == obj.type_key and (
            set(idx.verbs(f.name)) & {"open", "begin", "start"} and f.name not in ctx.pl.avoid
        ):
            ctx.pl.emit(ctx.pl.plan(f, bind={0: obj.expr}), ctx.f.setup)
            return True
    return False


def _drive_before(ctx: Ctx, obj: Obj) -> bool:
    """Drive ``obj`` in SETUP (before the target) when that needs no USE blocks."""
    if not drivable(ctx, obj):
        return False
    saved, ctx.use = ctx.use, []
    drive(ctx, obj)
    ctx.f.setup.extend(ctx.use)
    ctx.use = saved
    return True


def state_machine(ctx: Ctx) -> None:
    """A machine fed the payload, stepped in the skeleton's bounded loop."""
    key = ctx.idx.first_object(ctx.target)
    if key is None:
        stateless(ctx)
        return
    if any(f.name == ctx.target.name for f in ctx.idx.feeders(key)):
        # The target gives the machine its input: call it once, then step with the producer.
        ctx.pl.configuring.add(key)
        obj = obtain(ctx.pl, key, ctx.target.name, feed=False)
        ctx.pl.emit(ctx.pl.plan(ctx.target, bind={0: obj.expr}), ctx.f.setup)
        prod = producer(ctx.idx, ctx.pl.avoid, key=key)
        if prod is not None:
            ctx.f.call.extend(step_lines(ctx, prod, obj))
        else:
            ctx.f.call.append("break;")
        return
    obj = obtain(ctx.pl, key, ctx.target.name)
    ctx.f.call.extend(step_lines(ctx, ctx.target, obj))


def round_trip(ctx: Ctx) -> None:
    """Parse, print (or re-emit), parse the printed form again."""
    t, idx, pl = ctx.target, ctx.idx, ctx.pl
    rs = roles(t, idx)
    if any(r.kind == "consumed" for r in rs):
        key = idx.first_object(t)
        if key:
            dst = obtain(pl, key, t.name, feed=False)
            from agents.offline.synth_drive import pipe_lines

            lines = pipe_lines(ctx, t, dst)
            if lines:
                ctx.f.call.extend(lines)
                return
    plan = pl.plan(t)
    printed = pl.emit(plan, ctx.f.call, result="printed")
    key = next((o.type_key for o in pl.scope), None)
    if printed and key and cdecl.is_string(t.return_type):
        _reparse(ctx, key, printed)
    use_related(ctx, pl.scope[:1], limit=1)


def _reparse(ctx: Ctx, key: str, printed: str) -> None:
    idx, pl = ctx.idx, ctx.pl
    parsers = [
        f for f in (idx.by_name[n] for n in idx.lifecycle(key).create)
        if f.name not in pl.avoid and any(r.kind == "text" for r in roles(f, idx))
        and payload_slot(roles(f, idx)) is not None
    ]
    if not parsers:
        return
    parser = sorted(parsers, key=lambda f: (len(f.params), f.name))[0]
    slot = payload_slot(roles(parser, idx)) or 0
    bind = {slot: f"({decl_type(parser.params[slot].type)}){printed}"}
    block = call_block(idx, parser, [], pl.avoid, ctx.taken | ctx.f.taken, ctx.block_number(),
                       "parse the printed text again", bind=bind, guard=f"{printed} != NULL")
    if block is None:
        return
    cmp_fn = comparer(idx, key)
    original = next((o.expr for o in pl.scope if o.type_key == key), None)
    if cmp_fn and original and cmp_fn.name not in pl.avoid:
        again = next((ln.split("=")[0].strip() for ln in block.lines
                      if re.match(rf"\s*\w+ = {parser.name}\(", ln)), None)
        if again:
            args = [original, again] + ["1"] * (len(cmp_fn.params) - 2)
            pos = max(i for i, ln in enumerate(block.lines) if ln.strip().startswith(f"{again} ="))
            block.lines.insert(pos + 1, f"  if ({again} != NULL) (void){cmp_fn.name}({', '.join(args)});")
            block.calls.append(cmp_fn.name)
    ctx.blocks.append(block)


def stream(ctx: Ctx) -> None:
    """Feed the payload chunk by chunk through a stream context."""
    t, idx, pl = ctx.target, ctx.idx, ctx.pl
    rs = roles(t, idx)
    key = rs[0].type_key if rs and rs[0].kind == "object" else None
    fields = STREAMS.get(key or "")
    ctx.f.opts.append(f"lf_chunk_max = (size_t){ctx.f.take_int((1, 2, 7, 64, 512, 4096))};")
    if key and fields:
        from agents.offline.synth_drive import stream_lines

        obj = initialize(pl, key, t.name, feed=False)
        pl.scope.append(obj)
        stream_lines(ctx, obj, fields)
        return
    bytes_i = next((r.index for r in rs if r.kind == "bytes"), None)
    if key and bytes_i is not None:
        obj = obtain(pl, key, t.name, feed=False)
        bind = {0: obj.expr, bytes_i: f"({decl_type(t.params[bytes_i].type)})lf_chunk"}
        pair = rs[bytes_i].pair
        if pair is not None:
            bind[pair] = f"({decl_type(t.params[pair].type)})lf_chunk_size"
        for r in rs:
            if r.kind in ("int", "bool") and re.search("(final|last|done|finish)", r.param.name,
                                                     re.I):
                bind[r.index] = "lf_is_last"
        plan = pl.plan(t, bind=bind)
        rc = pl.emit(plan, ctx.f.call)
        if rc:
            ok = success_test(t.name, t.return_type, rc, cdecl.is_bool(t.return_type),
                              cdecl.is_pointer(t.return_type))
            ctx.f.call.append(f"if (!({ok})) break;")
        return
    plan = pl.plan(t)
    pl.emit(plan, ctx.f.call)


def digest(ctx: Ctx) -> None:
    """Fold the payload into a running value (or a context) chunk by chunk."""
    t, idx, pl = ctx.target, ctx.idx, ctx.pl
    rs = roles(t, idx)
    bytes_i = next((r.index for r in rs if r.kind == "bytes"), None)
    ctx.f.opts.append(f"lf_chunk_max = (size_t){ctx.f.take_int((1, 3, 16, 64, 1024, 4096))};")
    if bytes_i is None:
        stateless(ctx)
        return
    bind = {bytes_i: f"({decl_type(t.params[bytes_i].type)})lf_chunk"}
    pair = rs[bytes_i].pair
    if pair is not None:
        bind[pair] = pl.length(t.params[pair].type, "lf_chunk_size")
    running = rs[0].kind == "int" and cdecl.base_name(t.params[0].type) == cdecl.base_name(
        t.return_type)
    if running:
        acc = pl.var(t.return_type, "acc")
        init = next((tpl.format(fn=t.name) for pat, tpl in DIGEST_INIT.items()
                     if re.search(pat, t.name)), "0")
        ctx.f.setup.append(f"{acc} = {init};")
        bind[0] = acc
        plan = pl.plan(t, bind=bind)
        ctx.f.call.append(f"{acc} = {plan.text};")
        ctx.use.append(f"(void){acc};")
        return
    key = idx.first_object(t)
    if key and rs[0].kind == "object":
        obj = obtain(pl, key, t.name, feed=False)
        bind[0] = obj.expr
    plan = pl.plan(t, bind=bind)
    rc = pl.emit(plan, ctx.f.call)
    if rc and not cdecl.is_pointer(t.return_type):
        ok = success_test(t.name, t.return_type, rc, cdecl.is_bool(t.return_type), False)
        ctx.f.call.append(f"if (!({ok})) break;")
    use_related(ctx, pl.scope[:1])


def codec(ctx: Ctx) -> None:
    """One-shot transform into a bounded heap buffer; the inverse on its output."""
    t, idx, pl = ctx.target, ctx.idx, ctx.pl
    plan = pl.plan(t)
    rc = pl.emit(plan, ctx.f.call)
    inverse = _inverse(idx, t.name)
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
    if irs[pair].kind == "len":
        bind[pair] = f"({decl_type(inverse.params[pair].type)}){plan.out_len}"
    else:  # a pointer to the input length, which the call updates
        inner = decl_type(cdecl.pointee(inverse.params[pair].type))
        used = pl.var(inner, "used_len")
        ctx.f.call.append(f"{used} = ({inner}){plan.out_len};")
        bind[pair] = f"&{used}"
    ok = success_test(t.name, t.return_type, rc, cdecl.is_bool(t.return_type), False)
    block = call_block(idx, inverse, [], pl.avoid, ctx.taken | ctx.f.taken, ctx.block_number(),
                       f"{inverse.name} undoes {t.name}", bind=bind, guard=ok)
    if block:
        ctx.blocks.append(block)


def _inverse(idx: ApiIndex, name: str) -> FunctionDecl | None:
    for a, b in INVERSES:
        for x, y in ((a, b), (b, a)):
            if x in name and y not in name:
                cand = name.replace(x, y, 1)
                if cand in idx.by_name:
                    return idx.by_name[cand]
    return None


def builder(ctx: Ctx) -> None:
    """Mutate an object built from the payload; print the result."""
    plan = ctx.pl.plan(ctx.target)
    var = ctx.pl.emit(plan, ctx.f.call)
    del var
    key = ctx.idx.first_object(ctx.target)
    printer = ctx.idx.printer(key) if key else None
    scope = [o for o in ctx.pl.scope if o.type_key == key][:1]
    if printer and scope and printer.name not in ctx.pl.avoid:
        block = call_block(ctx.idx, printer, scope, ctx.pl.avoid, ctx.taken | ctx.f.taken,
                           ctx.block_number(), "print the mutated object")
        if block:
            ctx.blocks.append(block)


def callbacks(ctx: Ctx) -> None:
    """Register handlers on an initialized object, then drive it so they are called."""
    t, idx, pl = ctx.target, ctx.idx, ctx.pl
    rs = roles(t, idx)
    key = rs[0].type_key if rs and rs[0].kind == "object" else None
    if key is None:
        stateless(ctx)
        return
    is_setter = bool(re.search(r"(input|output)", t.name, re.I))
    inits = [n for n in idx.lifecycle(key).init if n != t.name and n not in pl.avoid]
    obj = (initialize(pl, key, t.name, feed=False, setters=not is_setter,
                      init=idx.by_name[inits[0]] if len(inits) == 1 else None)
           if inits else obtain(pl, key, t.name, feed=False))
    if obj not in pl.scope:
        pl.scope.append(obj)
    plan = pl.plan(t, bind={0: obj.expr})
    pl.emit(plan, ctx.f.call)
    drive(ctx, obj)


def files(ctx: Ctx) -> None:
    """Open the payload as a file through the API, read it in a bounded loop, drive it."""
    t, pl = ctx.target, ctx.pl
    if ctx.idx.kind(t) == "destroy" and len(t.params) == 1:
        lifecycle(ctx)
        return
    plan = pl.plan(t)
    reader = re.search(r"(read|gets|getc)", t.name, re.I) and cdecl.is_integer(t.return_type)
    if reader:
        rc = pl.var(t.return_type, "rc")
        ctx.f.call.append("for (int lf_k = 0; lf_k < 64; lf_k++) {")
        ctx.f.call.append(f"  {rc} = {plan.text};")
        ctx.f.call.append(f"  if ({rc} <= 0) break;")
        ctx.f.call.append("}")
        return
    var = pl.emit(plan, ctx.f.call, result="result")
    key = ctx.idx.first_object(t)
    objs = _result_obj(ctx, t, var) + [o for o in pl.scope if o.type_key == key]
    if objs:
        drive(ctx, objs[0])


FILLERS: dict[str, Callable[[Ctx], None]] = {
    "stateless_parser": stateless,
    "object_lifecycle": lifecycle,
    "state_machine": state_machine,
    "stream_processor": stream,
    "round_trip": round_trip,
    "file_based": files,
    "buffer_codec": codec,
    "object_builder": builder,
    "callback_driven": callbacks,
    "incremental_digest": digest,
}
