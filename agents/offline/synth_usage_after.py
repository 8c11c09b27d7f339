"""Driving an object as the library's own code does after the target.

``init_stream(dec, read_cb, ..., user)`` registers a reader; nothing is read until the code that
uses it calls ``process_until_end_of_stream(dec)`` and ``finish(dec)``. The usage facts say which
calls follow the target (:func:`agents.offline.usage.usage_followups`); a call that takes the
object alone is made in that order, so the draft reaches what the library's own code reaches.
"""

from __future__ import annotations

from agents.offline.synth_blocks import call_block, identifiers
from agents.offline.synth_ctx import Ctx
from agents.offline.synth_plan import Obj

MAX_AFTER = 3


def follow_usage(ctx: Ctx, obj: Obj) -> bool:
    """Add the usage's follow-up calls on ``obj`` (taking it alone) as USE blocks; whether any was."""
    idx = ctx.idx
    added = 0
    for name in dict.fromkeys(idx.usage_after):
        fn = idx.by_name.get(name)
        if (fn is None or name == ctx.target.name or name in ctx.pl.avoid or len(fn.params) != 1
                or idx.type_key(fn.params[0].type) != obj.type_key or idx.kind(fn) == "init"
                or name in (idx.destructor(obj.type_key, obj.origin or name),
                            idx.preferred_destroy.get(obj.type_key))):
            # (the usage's follow-ups hold no release verb; `process_until_end` is none, by name
            # only, and the object's own releaser stays in the cleanup)
            continue
        block = call_block(idx, fn, [obj], ctx.pl.avoid, ctx.taken | ctx.f.taken, ctx.block_number(),
                           f"{name} after it, as the library's own code does")
        if block is None:
            continue
        ctx.blocks.append(block)
        ctx.taken |= identifiers("\n".join(block.lines + block.hoist))
        added += 1
        if added == MAX_AFTER:
            break
    return added > 0
