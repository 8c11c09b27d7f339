"""Input handed over through an object's own buffer: reserve room, copy the bytes in, commit them.

A streaming decoder may have no function that takes the bytes: ``reserve(obj, n)`` makes room
for ``n`` bytes, ``buffer(obj)`` is where they go and ``consumed(obj, n)`` says they were
written; only then does ``next(obj, &item)`` see any input. The three are found by shape (the
object first, a size; the object alone, a writable byte pointer back) and by their verbs; the
copy is guarded by the object's own capacity (or the reserve's true/false result), so a failed
reservation never becomes an overflow in the harness.
"""

from __future__ import annotations

import re

from agents.offline import ckinds
from agents.offline.synth_api import ApiIndex
from agents.offline.synth_ctx import Ctx
from agents.offline.synth_finders import words
from agents.offline.synth_tries import restore, snapshot
from agents.offline.synth_types import Unsupported
from fuzzkit.api import FunctionDecl

_RESERVE = ("reserve", "ensure", "prepare", "grow", "expand")  # best first
_COMMIT = {"consumed", "commit", "advance", "wrote", "written", "filled", "produced", "added"}
_ROOM = {"buffer", "buf", "room", "space", "tail", "write", "ptr"}
_CAPACITY = {"capacity", "room", "space", "available", "avail"}  # not "free": a releaser may return int


def _on(idx: ApiIndex, key: str, arity: int) -> list[FunctionDecl]:
    return [f for f in idx.api if len(f.params) == arity and idx.type_key(f.params[0].type) == key]


def _sized(f: FunctionDecl, verbs: set[str]) -> bool:
    return ckinds.is_integer(f.params[1].type) and bool(set(words(f.name)) & verbs)


def room_lines(idx: ApiIndex, key: str, obj: str, fail: str) -> list[str]:
    """The calls that copy the input into ``obj``'s own buffer, or none when the API has no such three.

    ``obj`` is what a call receives (``&unpacker``); ``fail`` the statement that ends the input.
    """
    pairs = _on(idx, key, 2)
    reserve = next((f for verb in _RESERVE for f in pairs if _sized(f, {verb})), None)
    commit = next((f for f in pairs if f is not reserve and _sized(f, _COMMIT)), None)
    room = next((f for f in _on(idx, key, 1) if ckinds.is_bytes(f.return_type)
                 and not ckinds.is_const_target(f.return_type) and set(words(f.name)) & _ROOM), None)
    if reserve is None or commit is None or room is None:
        return []
    capacity = next((f for f in _on(idx, key, 1) if ckinds.is_integer(f.return_type)
                     and not ckinds.is_bool(f.return_type) and set(words(f.name)) & _CAPACITY), None)
    if capacity is not None:
        lines = [f"{reserve.name}({obj}, size);", f"if ({capacity.name}({obj}) < size) {fail}"]
    elif ckinds.is_bool(reserve.return_type):
        lines = [f"if (!{reserve.name}({obj}, size)) {fail}"]
    else:
        return []  # how a failed reservation reads is unknown: no copy on trust
    return [*lines, f"if (size) memcpy({room.name}({obj}), data, size);", f"{commit.name}({obj}, size);"]


def feed_the_input(ctx: Ctx) -> None:
    """Hand the fuzz input to the target's object when no call received it.

    A decoder context made by ``ctx_new(flags)`` decodes nothing until the function that takes
    the data (``set_buffer(ctx, data, size)``) has been called: a harness without that call
    exercises only the error path, whatever the fuzzer does.
    """
    key = ctx.idx.first_object(ctx.target)
    obj = next((o for o in ctx.pl.scope if o.type_key == key), None) if key else None
    made = ctx.idx.type_key(ctx.target.return_type)
    if obj is None and made and ctx.idx.returns_owned(ctx.target):
        _feed_the_result(ctx, made)
        return
    if obj is None or not key:
        return
    for feeder in ctx.idx.input_feeders(ctx.target, key):
        if _fed(ctx, feeder, obj.expr, ctx.f.setup):
            ctx.f.notes.append(f"the input reaches {ctx.target.name} through {feeder.name}")
            return
    if room := room_lines(ctx.idx, key, obj.expr, ctx.f.fail()):  # no function takes the bytes
        ctx.f.include("<string.h>")
        ctx.f.setup.extend(room)
        ctx.f.notes.append(f"the input is copied into the room {ctx.target.name}'s object reserves")


def _feed_the_result(ctx: Ctx, key: str) -> None:
    """Hand the input to the object a constructor target made (``ctx_new2(alloc, flags)``).

    Its uses after the call read what the object was given; one with no input reads nothing.
    """
    call = re.compile(rf"^(\w+) = (?:\([^()]*\))?{re.escape(ctx.target.name)}\(")
    var = next((m.group(1) for line in ctx.f.call if (m := call.match(line))), None)
    if var is None:
        return
    ctx.f.taken |= ctx.taken  # names the blocks after the call declare
    for feeder in ctx.idx.input_feeders(ctx.target, key):
        lines: list[str] = []
        if _fed(ctx, feeder, var, lines):
            ctx.use[:0] = [f"if ({var} != NULL) {{", *(f"  {ln}" for ln in lines), "}"]
            ctx.f.notes.append(f"the input reaches what {ctx.target.name} made through {feeder.name}")
            return


def _fed(ctx: Ctx, feeder: FunctionDecl, obj: str, into: list[str]) -> bool:
    """Whether the call of ``feeder`` on ``obj`` handed it the input (its lines go to ``into``).

    A call that did not take the input leaves no trace: what planning it declared, allocated
    or named is taken back with it (a buffer for a callback handle, the handle's callbacks).
    """
    if feeder.name in ctx.pl.avoid:
        return False
    lines: list[str] = []
    saved = snapshot(ctx.pl)
    try:
        ctx.pl.emit(ctx.pl.plan(feeder, bind={0: obj}), lines)
    except Unsupported:
        restore(ctx.pl, saved)
        return False
    if not ctx.pl.fed:
        restore(ctx.pl, saved)
        return False
    into.extend(lines)
    return True
