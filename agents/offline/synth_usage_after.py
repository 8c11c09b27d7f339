"""Driving an object as the library's own code does after the target.

``init_stream(dec, read_cb, ..., user)`` registers a reader; nothing is read until the code that
uses it calls ``process_until_end_of_stream(dec)`` and ``finish(dec)``. The usage facts say which
calls follow the target (:func:`agents.offline.usage.usage_followups`); a call that takes the
object alone is made in that order, so the draft reaches what the library's own code reaches.
"""

from __future__ import annotations

from collections.abc import Collection

from agents.offline.synth_api import ApiIndex
from agents.offline.synth_blocks import call_block, identifiers
from agents.offline.synth_ctx import Ctx
from agents.offline.synth_plan import Obj
from fuzzkit.api import FunctionDecl

MAX_AFTER = 3


def followups_on(idx: ApiIndex, key: str, origin: str, skip: Collection[str]) -> list[FunctionDecl]:
    """The usage's calls after the target that take a ``key`` object alone, in their order.

    Not an initializer, nor the object's releaser (it stays in the cleanup); the usage's
    follow-ups hold no release already (``process_until_end`` names none).
    """
    releasers = {idx.destructor(key, origin), idx.preferred_destroy.get(key)}
    found = (idx.by_name.get(n) for n in dict.fromkeys(idx.usage_after) if n not in skip)
    return [fn for fn in found if fn is not None and len(fn.params) == 1 and fn.name not in releasers
            and idx.type_key(fn.params[0].type) == key and idx.kind(fn) != "init"]


def follow_usage(ctx: Ctx, obj: Obj) -> bool:
    """Add the usage's follow-up calls on ``obj`` (taking it alone) as USE blocks; whether any was."""
    idx = ctx.idx
    added = 0
    for fn in followups_on(idx, obj.type_key, obj.origin, {ctx.target.name, *ctx.pl.avoid}):
        block = call_block(idx, fn, [obj], ctx.pl.avoid, ctx.taken | ctx.f.taken, ctx.block_number(),
                           f"{fn.name} after it, as the library's own code does")
        if block is None:
            continue
        ctx.blocks.append(block)
        ctx.taken |= identifiers("\n".join(block.lines + block.hoist))
        added += 1
        if added == MAX_AFTER:
            break
    return added > 0
