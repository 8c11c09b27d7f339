"""One coverage block for an uncovered function: on an object the harness holds, or a new one.

:func:`one_block` calls the function on a library object the harness already made when that is
safe (:func:`reusable`); otherwise it picks the first fitting way to reach the function on an
object of its own (a stream run over the payload, a parser stepped to the end, a one-shot call).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import cast

from agents.harness_marks import IMPROVE_MARK
from agents.offline import ckinds
from agents.offline.cdecl import split_top
from agents.offline.improver_steps import step_made
from agents.offline.synth_api import ApiIndex, words
from agents.offline.synth_arche import DRIVE_FIRST, open_first
from agents.offline.synth_blocks import Block, block_planner, call_block, finish_block, release_filled_fields
from agents.offline.synth_ctx import Ctx
from agents.offline.synth_drive import loop, pipe_lines, step_lines
from agents.offline.synth_fill import unfilled
from agents.offline.synth_init import initialize
from agents.offline.synth_knowledge import StreamFields, stream_fields, success_test
from agents.offline.synth_objects import obtain, producer
from agents.offline.synth_plan import Obj, Unsupported
from agents.offline.synth_roles import payload_slot, roles
from agents.offline.synth_streams import stream_drive
from agents.offline.synth_trip import decode_written
from agents.offline.synth_types import Role
from agents.offline.synth_usage_after import followups_on
from agents.offline.synth_vocab import maker_stem
from fuzzkit.api import FunctionDecl
from fuzzkit.vocabulary import words_of


def one_block(
    idx: ApiIndex, fn: FunctionDecl, scope: list[Obj], avoid: set[str], taken: set[str], number: int,
    guards: Mapping[str, str] | None = None,
) -> tuple[Block, str] | None:
    """A block reaching ``fn`` and its direction in plain English (None if none fits).

    ``guards`` maps a held object's variable to the condition under which it may be used (the
    target's success, for an object the target writes into).
    """
    first = idx.first_object(fn)
    held = [o for o in scope if o.type_key == first and reusable(idx, o, fn)
            and (o.var in (guards or {}) or not unfilled(idx, o, fn))]
    if held:
        obj = held[0]
        mark = f"{IMPROVE_MARK} call {fn.name} on {obj.var}"
        block = call_block(idx, fn, scope, avoid, taken, number, mark, guard=(guards or {}).get(obj.var),
                           then=lambda pl: step_made(idx, fn, pl))
        return (block, f"call {fn.name} on {obj.var} ({obj.type_key})") if block else None
    if idx.kind(fn) == "destroy":
        return None  # every block already releases what it makes
    pl = block_planner(idx, fn, [], avoid, taken, number)
    ctx = Ctx(fn, idx, pl, [])
    rs = roles(fn, idx)
    if first and set(words(fn.name)) & {"input", "output", "source", "sink"}:
        pl.configuring.add(first)
    try:
        job = _Job(ctx, first, rs, stream_fields(first), avoid)
        what = next((way(job) for fits, way in _WAYS if fits(job)), None)
        if what is None:
            return None
    except (Unsupported, KeyError, IndexError):
        return None
    pl.f.call.extend(ctx.use)
    step_made(idx, fn, pl)
    release_filled_fields(pl.f, fn, idx)
    block = finish_block(fn, pl.f, [], f"{IMPROVE_MARK} {what}")
    return block, what


def written_by_target(body: str, target: FunctionDecl, scope: list[Obj], idx: ApiIndex) -> dict[str, str]:
    """The target's success test for each held object the target call fills as a result.

    A result container (match data, an output record) passed after the target's own object,
    through a non-const pointer, holds what the target put there only when the target
    succeeded: a later call reading it runs under that test, never on a half-filled object.
    The object the target works on (its first argument), an object it takes over, and
    targets whose status is a pointer are left alone.
    """
    call = re.search(rf"^\s*(\w+)\s*=\s*(?:\([^()]*\)\s*)?{re.escape(target.name)}\s*\(", body, re.M)
    ret = target.return_type
    if call is None or ckinds.is_void(ret) or ckinds.is_pointer(ret) or len(target.params) < 2:
        return {}
    depth, end = 1, call.end()
    while end < len(body) and depth:
        depth += {"(": 1, ")": -1}.get(body[end], 0)
        end += 1
    args = [a.strip() for a in split_top(body[call.end():end - 1])]
    test = success_test(target.name, ret, call.group(1), ckinds.is_bool(ret), False)
    kinds = [r.kind for r in roles(target, idx)]
    written = {arg for i, (arg, p) in enumerate(zip(args, target.params, strict=False))
               if i > 0 and kinds[i:i + 1] != ["consumed"]
               and ckinds.is_pointer(p.type) and not ckinds.is_const_target(p.type)}
    return {o.var: test for o in scope if o.expr in written}


def reusable(idx: ApiIndex, obj: Obj, fn: FunctionDecl) -> bool:
    """Whether a block may call ``fn`` on the harness's own ``obj`` (after it did its work)."""
    ws = set(words(fn.name)) | set(idx.verbs(fn.name))
    if ws & {"input", "output", "source", "sink"}:
        return False  # a second input or output source is a usage error
    if obj.consumed_by and _runs_again(idx, obj.consumed_by, fn):
        return False  # parse_document(ctx) after the target's parse_chunk(ctx, data, n): its own object
    machine = not idx.lifecycle(obj.type_key).create  # made by an init, not a constructor
    if machine and "set" in ws:
        return False  # configuring a machine (acme_parser_set_encoding) must precede its use
    if machine and ws & (words_of("open_session") | words_of("close_session")):
        return False  # state transitions (an emitter opened twice asserts) get their own object
    if machine and fn.name in producers(idx, set(), obj.type_key):
        return False  # one stepping API per machine: load after parse asserts
    return _same_family(idx, obj, fn)


def mark_consumed(scope: list[Obj], target: FunctionDecl, idx: ApiIndex) -> list[Obj]:
    """``scope`` with the objects the target ran over the fuzz input marked ``consumed_by`` it.

    A target that takes data and a mutable object (``parse_chunk(ctx, data, n)``) leaves that
    object past its input; what processes the object's own input again needs an object of its own.
    """
    if not any(_takes_data(p.type) for p in target.params):
        return scope
    keys = {idx.type_key(p.type) for p in target.params if not ckinds.is_const_target(p.type)}
    return [replace(o, consumed_by=target.name) if o.type_key in keys else o for o in scope]


def _runs_again(idx: ApiIndex, done: str, fn: FunctionDecl) -> bool:
    """Whether ``fn`` is the processor ``done`` was (its verb), over no input of its own."""
    verb = idx.last_verb(done)
    return (verb is not None and fn.name != done and idx.last_verb(fn.name) == verb
            and not any(_takes_data(p.type) for p in fn.params))


def _takes_data(ctype: str) -> bool:
    return ckinds.is_bytes(ctype) or ckinds.is_string(ctype)


def _same_family(idx: ApiIndex, obj: Obj, fn: FunctionDecl) -> bool:
    """Whether ``fn`` belongs with how ``obj`` was made (no encode calls on a decoding stream)."""
    if not obj.origin:
        return True
    stem = _family(idx, obj.origin)
    life = idx.lifecycle(obj.type_key)
    # Constructors of sibling formats (tagCreatePushCtxt, docCreatePushCtxt) name their family
    # before the verb: a document call on the tag format's context overruns its stacks.
    stems = {_family(idx, n) for n in life.init + life.create} | {stem}
    # The longest matching family wins: lib_decodeBack* is not lib_decode*'s family. A name
    # that shares as much with the object's own maker as with that family is the maker's.
    best = max((s for s in stems if s and fn.name.startswith(s)), key=len, default="")
    own = len(os.path.commonprefix([fn.name, stem]))
    return best in ("", stem) or len(best) <= own


def _family(idx: ApiIndex, name: str) -> str:
    """The name before its first constructor verb (``tagCreatePushParserCtxt`` -> ``tag``), else its stem."""
    family = maker_stem(name)
    return family if family != name else idx.stem(name)


def producers(idx: ApiIndex, avoid: set[str], key: str) -> set[str]:
    """Every function that fills an out struct step by step from a ``key`` object."""
    names = set()
    skip = set(avoid)
    while (p := producer(idx, skip, key=key)) is not None:
        names.add(p.name)
        skip.add(p.name)
    return names


@dataclass
class _Job:
    """What the ways to reach a function on a new object share."""

    ctx: Ctx
    first: str | None
    rs: list[Role]
    fields: StreamFields | None
    avoid: set[str]

    @property
    def fn(self) -> FunctionDecl:
        return self.ctx.target

    @property
    def kind(self) -> str:
        return self.ctx.idx.kind(self.fn)

    @property
    def key(self) -> str:
        """The object type, for the ways whose test made sure there is one."""
        return self.first or ""

    @property
    def stream(self) -> StreamFields:
        """The stream fields, for the ways whose test made sure there are some."""
        return cast(StreamFields, self.fields)


def _run_stream(job: _Job) -> str | None:
    pl, fn, first = job.ctx.pl, job.fn, job.key
    obj = initialize(pl, first, fn.name, feed=False)
    if not stream_drive(job.ctx, obj, job.stream, proc=fn):
        return None
    return f"run {fn.name} over the input on a new {first}"


def _call_on_stream(job: _Job) -> str | None:
    ctx, pl, fn, first = job.ctx, job.ctx.pl, job.fn, job.key
    obj = initialize(pl, first, fn.name, feed=False)
    early = bool(DRIVE_FIRST.search(fn.name)) and stream_drive(ctx, obj, job.stream)
    pl.f.call.extend(ctx.use)
    ctx.use.clear()
    slot = next((r.index for r in job.rs if r.kind == "object" and r.type_key == first), None)
    if slot is None:
        return None
    pl.emit(pl.plan(fn, bind={slot: obj.expr}), pl.f.call)
    if not early:
        stream_drive(ctx, obj, job.stream)
    return f"call {fn.name} on a new {first} that also processes the input"


def _set_up(job: _Job) -> str | None:
    ctx, pl, fn, first = job.ctx, job.ctx.pl, job.fn, job.key
    if ctx.idx.usage_makers.get(first) in ctx.idx.lifecycle(first).create:
        # The library's own code makes it with its constructor, then sets it up: a stack record
        # the initializer fills would lack what the constructor allocates.
        pl.configuring.add(first)  # (set up here, by fn, not by another initializer first)
        made = obtain(pl, first, fn.name, feed=False)
        pl.emit(pl.plan(fn, bind={0: made.expr}), pl.f.call)
        for after in followups_on(ctx.idx, first, made.origin, {fn.name, *job.avoid}):
            pl.emit(pl.plan(after, bind={0: made.expr}), pl.f.call)
        return f"set up a new {first} made by {made.origin} with {fn.name}"
    made = initialize(pl, first, fn.name, init=fn, into=pl.f.call)
    prod = producer(ctx.idx, job.avoid, key=first)
    if prod is not None:
        ctx.use.extend(loop(step_lines(ctx, prod, made)))
    return f"set up a new {first} with {fn.name}"


def _steps(job: _Job) -> bool:
    idx, first = job.ctx.idx, job.key
    return bool(
        first
        and any(r.kind == "out_object" for r in job.rs)
        and producer(idx, job.avoid, key=first) is not None
        and job.fn.name in producers(idx, job.avoid, first)
    )


def _step(job: _Job) -> str | None:
    obj = obtain(job.ctx.pl, job.key, job.fn.name)
    job.ctx.use.extend(loop(step_lines(job.ctx, job.fn, obj)))
    return f"step {job.fn.name} to the end of the input on a new {job.key}"


def _feed(job: _Job) -> str | None:
    dst = obtain(job.ctx.pl, job.key, job.fn.name, feed=False)
    lines = pipe_lines(job.ctx, job.fn, dst)
    if lines is None:
        return None
    job.ctx.use.extend(lines)
    return f"feed {job.fn.name} with items parsed from the input"


def _call_on_new(job: _Job) -> str | None:
    ctx, pl, fn, first, rs = job.ctx, job.ctx.pl, job.fn, job.first, job.rs
    if first and rs and rs[0].type_key == first and rs[0].kind in ("object", "handle"):
        # A call that reads the input itself gets its object unfed: one a constructor already
        # read the input into was set up for that constructor's format, not the call's.
        open_first(ctx, obtain(pl, first, fn.name, feed=payload_slot(rs) is None))  # close/flush need it open
    plan = pl.plan(fn)
    decoded = decode_written(pl, fn, plan, pl.emit(plan, pl.f.call))
    what = f"call {fn.name} on {'a new ' + first if first else 'the input'}"
    if decoded:
        what += f", then {decoded} on what it wrote"
    own = next((o for o in pl.scope if o.type_key == first), None)
    prod = producer(ctx.idx, job.avoid, key=first) if first else None
    if own is not None and prod is not None and prod != fn:
        ctx.use.extend(loop(step_lines(ctx, prod, own)))  # so the call matters
        what += f", then step {prod.name}"
    return what


_WAYS: list[tuple[Callable[[_Job], bool], Callable[[_Job], str | None]]] = [  # first fit wins
    (lambda j: bool(j.fields) and any(r.param.name in ("flush", "action") for r in j.rs), _run_stream),
    (lambda j: bool(j.fields) and j.kind != "init", _call_on_stream),
    (lambda j: bool(j.first) and j.kind == "init" and bool(j.rs) and j.rs[0].kind == "object", _set_up),
    (_steps, _step),
    (lambda j: bool(j.first) and any(r.kind == "consumed" for r in j.rs), _feed),
    (lambda j: True, _call_on_new),
]
