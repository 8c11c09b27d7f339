"""Per-archetype harness bodies: what goes into SETUP, CALL and USE for each usage pattern."""

from __future__ import annotations

import re
from collections.abc import Callable

from agents.offline import ckinds
from agents.offline import synth_chunks as chunks
from agents.offline.synth_api import words
from agents.offline.synth_blocks import call_block
from agents.offline.synth_ctx import Ctx
from agents.offline.synth_drive import (
    comparer,
    drivable,
    drive,
    drive_made,
    pipe_lines,
    step_lines,
    use_related,
)
from agents.offline.synth_init import initialize
from agents.offline.synth_objects import obtain, producer
from agents.offline.synth_plan import Obj, decl_type
from agents.offline.synth_readers import reader_rank
from agents.offline.synth_roles import payload_slot, roles
from agents.offline.synth_vocab import DESTROY
from fuzzkit.api import FunctionDecl
from fuzzkit.vocabulary import alternation, words_of

# Functions that inspect or copy state: they matter after the object has done some work.
DRIVE_FIRST = re.compile(
    rf"({alternation('copy')}|mark|sync|pending|reset|used|bound|tell|offset|eof|error|getdictionary|flush|close)",
    re.I,
)


def _result_obj(ctx: Ctx, fn: FunctionDecl, var: str | None) -> list[Obj]:
    key = ctx.idx.type_key(fn.return_type)
    return [Obj(key, var, var, owned=False)] if key and var else []


def stateless(ctx: Ctx) -> None:
    """One call on the payload; cheap calls on what it returns."""
    plan = ctx.pl.plan(ctx.target)
    var = ctx.pl.emit(plan, ctx.f.call, result="result")
    drive_made(ctx)
    use_related(ctx, _result_obj(ctx, ctx.target, var) or ctx.pl.scope[:1])


def lifecycle(ctx: Ctx) -> None:
    """Build the object, call the target on it, release it (target may be init or destroy)."""
    t, idx, pl = ctx.target, ctx.idx, ctx.pl
    rs = roles(t, idx)
    key = rs[0].type_key if rs and rs[0].kind in ("object", "handle") else None
    if (
        key
        and rs[0].kind == "object"
        and idx.kind(t) == "init"
        and not ckinds.is_const_target(t.params[0].type)
    ):
        obj = initialize(pl, key, t.name, feed=True, init=t, into=ctx.f.call)
        pl.scope.append(obj)
        drive(ctx, obj)
        return
    if key and idx.kind(t) == "destroy" and len(t.params) == 1:
        obj = obtain(pl, key, t.name)
        if not open_first(ctx, obj):
            _drive_before(ctx, obj)
        ctx.f.call.append(f"{t.name}({obj.expr});")
        best = idx.destructor(key, obj.origin or t.name) or t.name
        # lib_close_r frees like lib_close does; an emitter's close only ends the stream.
        if idx.last_verb(best, DESTROY) == idx.last_verb(t.name, DESTROY):
            reset = f"{obj.var}_ready = 0;" if obj.expr.startswith("&") else f"{obj.var} = NULL;"
            ctx.f.call.append(f"{reset} /* released by the target itself */")
        pl.f.calls.append(t.name)
        return
    plan = pl.plan(t)
    key = key or idx.first_object(t)
    held = next((o for o in pl.scope if o.type_key == key), None)
    opened = held is not None and open_first(ctx, held)
    early = held is not None and (opened or DRIVE_FIRST.search(t.name) and _drive_before(ctx, held))
    var = pl.emit(plan, ctx.f.call, result="result")
    drive_made(ctx)
    if held is not None and drivable(ctx, held):
        if not early:
            drive(ctx, held)
    else:
        use_related(ctx, _result_obj(ctx, t, var) + pl.scope[:1])


def open_first(ctx: Ctx, obj: Obj) -> bool:
    """Call the object's ``open`` (``acme_emitter_open``) before a close/flush-like target."""
    t, idx = ctx.target, ctx.idx
    if not (set(idx.verbs(t.name)) | set(words(t.name))) & words_of("close_session"):
        return False
    for f in idx.api:
        if (
            len(f.params) == 1
            and f != t
            and idx.type_key(f.params[0].type) == obj.type_key
            and (set(idx.verbs(f.name)) & words_of("open_session") and f.name not in ctx.pl.avoid)
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

            lines = pipe_lines(ctx, t, dst)
            if lines:
                ctx.f.call.extend(lines)
                return
    plan = pl.plan(t)
    printed = pl.emit(plan, ctx.f.call, result="printed")
    key = next((o.type_key for o in pl.scope), None)
    if printed and key and ckinds.is_string(t.return_type):
        _reparse(ctx, key, printed)
    use_related(ctx, pl.scope[:1], limit=1)


def _reparse(ctx: Ctx, key: str, printed: str) -> None:
    idx, pl = ctx.idx, ctx.pl
    parsers = [
        f
        for f in (idx.by_name[n] for n in idx.lifecycle(key).create)
        if f.name not in pl.avoid
        and idx.out_slot(f) is None
        and any(r.kind == "text" for r in roles(f, idx))
        and payload_slot(roles(f, idx)) is not None
    ]
    if not parsers:
        return
    parser = sorted(parsers, key=lambda f: reader_rank(idx, f))[0]
    slot = payload_slot(roles(parser, idx)) or 0
    bind = {slot: f"({decl_type(parser.params[slot].type)}){printed}"}
    block = call_block(
        idx,
        parser,
        [],
        pl.avoid,
        ctx.taken | ctx.f.taken,
        ctx.block_number(),
        "parse the printed text again",
        bind=bind,
        guard=f"{printed} != NULL",
    )
    if block is None:
        return
    cmp_fn = comparer(idx, key)
    original = next((o.expr for o in pl.scope if o.type_key == key), None)
    if cmp_fn and original and cmp_fn.name not in pl.avoid:
        again = next(
            (ln.split("=")[0].strip() for ln in block.lines if re.match(rf"\s*\w+ = {parser.name}\(", ln)),
            None,
        )
        if again:
            args = [original, again] + ["1"] * (len(cmp_fn.params) - 2)
            pos = max(i for i, ln in enumerate(block.lines) if ln.strip().startswith(f"{again} ="))
            block.lines.insert(pos + 1, f"  if ({again} != NULL) (void){cmp_fn.name}({', '.join(args)});")
            block.calls.append(cmp_fn.name)
    ctx.blocks.append(block)


def builder(ctx: Ctx) -> None:
    """Mutate an object built from the payload; print the result."""
    plan = ctx.pl.plan(ctx.target)
    var = ctx.pl.emit(plan, ctx.f.call)
    del var
    key = ctx.idx.first_object(ctx.target)
    printer = ctx.idx.printer(key) if key else None
    scope = [o for o in ctx.pl.scope if o.type_key == key][:1]
    if printer and scope and printer.name not in ctx.pl.avoid:
        block = call_block(
            ctx.idx,
            printer,
            scope,
            ctx.pl.avoid,
            ctx.taken | ctx.f.taken,
            ctx.block_number(),
            "print the mutated object",
        )
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
    life = idx.lifecycle(key)
    inits = [n for n in life.init if n != t.name and n not in pl.avoid]
    if t.name in life.init and idx.usage_makers.get(key) in life.create:
        # The target sets the object up itself, on one the library's own code makes with a
        # constructor: no other initializer runs on it first.
        inits = []
        pl.configuring.add(key)
    obj = (
        initialize(
            pl,
            key,
            t.name,
            feed=False,
            setters=not is_setter,
            init=idx.by_name[inits[0]] if len(inits) == 1 else None,
        )
        if inits
        else obtain(pl, key, t.name, feed=False)
    )
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
    reader = re.search(r"(read|gets|getc)", t.name, re.I) and ckinds.is_integer(t.return_type)
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


def digest(ctx: Ctx) -> None:
    """The payload folded in chunk by chunk; one call on it when the target takes no bytes."""
    if not chunks.digest(ctx):
        stateless(ctx)


FILLERS: dict[str, Callable[[Ctx], None]] = {
    "stateless_parser": stateless,
    "object_lifecycle": lifecycle,
    "state_machine": state_machine,
    "stream_processor": chunks.stream,
    "round_trip": round_trip,
    "file_based": files,
    "buffer_codec": chunks.codec,
    "object_builder": builder,
    "callback_driven": callbacks,
    "incremental_digest": digest,
}
