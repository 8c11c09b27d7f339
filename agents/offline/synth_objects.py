"""Getting library objects for arguments.

Reuse one in scope, construct one (from the payload or from small option values), initialize
a zeroed struct, fill one with a producer, or borrow a child.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from agents.offline import ckinds, synth_init, synth_readers
from agents.offline.synth_alloc import allocator_suite
from agents.offline.synth_api import ApiIndex
from agents.offline.synth_config import listed
from agents.offline.synth_fill import prepare_made
from agents.offline.synth_finders import piecewise_ctor
from agents.offline.synth_handles import takes_own
from agents.offline.synth_init import fed_by_init, initialize, set_up_by, usable, zeroed, zeroed_array
from agents.offline.synth_instances import is_allocator_suite, library_object, null_opaque, object_name
from agents.offline.synth_knowledge import always_consumes, success_test
from agents.offline.synth_outs import whole_list_releaser, written_out
from agents.offline.synth_readers import fall_back, reader_rank, reads_from_io, share_readers, values_only
from agents.offline.synth_roles import payload_slot, roles
from agents.offline.synth_staging import staging_getter
from agents.offline.synth_tries import first_built
from agents.offline.synth_types import CallPlan, Obj, Role, Unsupported
from agents.offline.synth_vocab import transfers_ownership
from fuzzkit.api import FunctionDecl
from fuzzkit.vocabulary import ordered

if TYPE_CHECKING:
    from agents.offline.synth_plan import Planner

MAX_DEPTH = 3
PRODUCER_ORDER = list(ordered("producer"))


def build_object(pl: Planner, fn: FunctionDecl, r: Role, args: dict[int, str], plan: CallPlan) -> str:
    """The argument expression for an object-typed parameter of ``fn``."""
    key = r.type_key or ""
    if r.kind == "child":
        return _child(pl, fn, key, args, plan)
    if r.kind == "out_object":
        return written_out(pl, key, r.param.name, fn.name, plan.after)
    if r.kind == "fresh":
        return fresh(pl, key, fn.name, small=True).expr
    if r.kind == "consumed":
        obj = fresh(pl, key, fn.name, small=True)
        when = "always" if always_consumes(fn.name) or transfers_ownership(fn.name) else "success"
        if obj.owned and obj.expr.startswith("&"):
            plan.consumed.append((f"{obj.var}_ready = 0;", when))
        elif obj.owned:
            plan.consumed.append((f"{obj.var} = NULL;", when))
        return obj.expr
    used = set(args.values())
    for obj in pl.scope:
        if obj.type_key == key and obj.expr not in used:
            return obj.expr
    peers = [a for i, a in args.items() if pl.idx.type_key(fn.params[i].type) == key]
    copier = pl.idx.copier(key)
    if peers and copier and copier.name not in pl.avoid:
        var = pl.emit(pl.plan(copier, bind={0: peers[0]}, payload=False), pl.f.setup, result="copy")
        pl.f.setup.append(f"if ({var} == NULL) {pl.f.fail()}")
        return var or "NULL"
    if r.kind == "object" and not pl.idx.lifecycle(key).create and (own := library_object(pl, key)):
        return own
    if r.kind == "object" and (r.index > 0 or pl.idx.kind(fn) == "create") and is_allocator_suite(key):
        return allocator_suite(pl, key, r.param.name)
    if (
        r.kind == "object"
        and pl.idx.lifecycle(key).create == []
        and not pl.idx.lifecycle(key).init
        and ckinds.is_pointer(r.param.type)
    ):
        if ckinds.is_opaque(key) and not pl.strict_release:
            return null_opaque(pl, key).expr
        if ckinds.is_const_target(r.param.type) and listed(r.param.name, key):
            return zeroed_array(pl, key, r.param.name)
        return f"&{set_up_by(pl, fn, r, plan)}"
    if r.index > 0 and ckinds.is_pointer(r.param.type) and synth_init.made_only_from(pl.idx, key, pl.making):
        return "NULL"  # made only from what is being built: optional in its maker, or nothing could be made
    # A call that takes the payload (or has it staged in its object's own buffer) gets its objects
    # unfed; one made for an object of such a call is read from a share of it.
    takes = payload_slot(roles(fn, pl.idx)) is not None or staging_getter(pl.idx, fn) is not None
    return obtain(pl, key, fn.name, feed=not takes, share=not takes and pl.claimed > 0).expr


def _child(pl: Planner, fn: FunctionDecl, key: str, args: dict[int, str], plan: CallPlan) -> str:
    getter = pl.idx.child_getter(key)
    parent = args.get(0)
    if getter is None or parent is None or getter.name in pl.avoid:
        plan.guards.append("0")
        return "NULL"
    v = pl.var(f"{key} *", "child", "NULL")
    which = pl.var("int", "which")
    pl.f.opts.append(f"{which} = {pl.f.take_int((0, 7))};")
    pl.f.setup.append(f"{v} = {getter.name}({parent}, {which});")
    plan.guards.append(f"{v} != NULL")
    pl.f.calls.append(getter.name)
    return v


def obtain(pl: Planner, key: str, near: str, feed: bool = True, share: bool = False) -> Obj:
    """An object of type ``key`` built from the payload when a constructor takes it.

    ``share``: a call being planned takes the payload already; a reader of a buffer builds
    the object from a share of the input instead (:mod:`agents.offline.synth_readers`).

    Raises:
        Unsupported: No way to build one within the recursion limit.
    """
    if pl.depth >= MAX_DEPTH:
        raise Unsupported(f"cannot build a {key} (nested too deep)")
    pl.making.append(key)
    try:
        life = pl.idx.lifecycle(key)
        ctors = [pl.idx.by_name[n] for n in life.create if usable(pl, pl.idx.by_name[n])]
        ctors = synth_readers.own_family([c for c in ctors if not takes_own(pl.idx, c, key)] or ctors, near)
        fed = [c for c in ctors if payload_slot(roles(c, pl.idx)) is not None or reads_from_io(pl.idx, c)]
        fed.sort(key=lambda c: reader_rank(pl.idx, c, reads_from_io(pl.idx, c), near))
        prod = producer(pl.idx, pl.avoid, out_key=key) if feed else None
        # The simplest constructor, then one that needs no name or text (made up from option
        # bytes, a device or file name names nothing there), of the family closest to the caller's.
        simplest = sorted(ctors, key=lambda c: synth_readers.simplicity(pl.idx, c, key, near))
        piecewise = piecewise_ctor(ctors, near) if not feed else None
        readers = share_readers(pl.idx, fed, near) if share else []
        usage_made = bool(simplest) and pl.idx.usage_makers.get(key) == simplest[0].name
        if readers:
            obj = first_built(pl, readers, lambda c: _construct(pl, c, key, payload=False))
            fall_back(pl, obj.var, simplest, readers)
        elif feed and fed:
            obj = first_built(pl, fed, lambda c: _construct(pl, c, key))
        elif piecewise is not None:
            # A target fed the input piece by piece (`parse_chunk(ctx, buf, n, last)`) needs the
            # context its push/stream constructor sets up, not the generic one.
            obj = _construct(pl, piecewise, key, payload=False)
        elif prod is not None and roles(prod, pl.idx)[0].type_key != key:
            obj = _produce(pl, prod, key)
        elif simplest and not simplest[0].params and (usage_made or not (feed and fed_by_init(pl, key))):
            # An object the library allocates itself: its destructor may free the pointer, so
            # a caller's zeroed struct set up by an initializer would be freed by it. (One an
            # initializer feeds is set up on the stack, unless the library's own code makes it so.)
            obj = synth_init.configure_made(pl, _construct(pl, simplest[0], key, payload=False), key, near)
        elif (life.init and not ckinds.is_opaque(key)
              and any(usable(pl, pl.idx.by_name[n]) for n in life.init)):
            # (An opaque object cannot be declared, so it cannot be initialized in place.)
            obj = initialize(pl, key, near, feed=feed)
        elif not ctors and (own := library_object(pl, key)):
            obj = Obj(key, own, own, owned=False)
        elif ctors:
            obj = _construct(pl, simplest[0], key, payload=feed)
        elif ckinds.is_opaque(key) and not pl.strict_release:
            obj = null_opaque(pl, key)
        else:
            obj = synth_init.filled_or_zeroed(pl, key, near, feed)
        if obj.origin in life.create and obj.expr != "NULL":  # a result container: filled first
            fed_first = bool(readers) or bool(fed) and obj.origin == fed[0].name
            obj.filled = prepare_made(pl, obj, near, feed, fed_first)
        pl.scope.append(obj)
        return obj
    finally:
        pl.making.pop()


def _produce(pl: Planner, prod: FunctionDecl, key: str) -> Obj:
    """An out struct of ``key`` filled once by ``prod`` from an object fed the payload."""
    prs = roles(prod, pl.idx)
    src = obtain(pl, prs[0].type_key or "", prod.name, feed=True)
    out = next(r for r in prs if r.kind == "out_object")
    v = zeroed(pl, key, out.param.name)
    ready = f"{v}_ready"
    pl.f.taken.add(ready)
    pl.f.decls.append(f"int {ready} = 0;")
    plan = pl.plan(prod, bind={0: src.expr, out.index: f"&{v}"})
    rc = pl.emit(plan, pl.f.setup)
    if rc is not None:
        ok = success_test(prod.name, prod.return_type, rc, ckinds.is_bool(prod.return_type), False)
        pl.f.setup.append(f"if (!({ok})) {pl.f.fail()}")
    pl.f.setup.append(f"{ready} = 1;")
    dtor = pl.idx.destructor(key, prod.name)
    if dtor:
        pl.f.cleanup.append(f"if ({ready}) {dtor}(&{v});")
    return Obj(key, f"&{v}", v, origin=prod.name)


_OPTIONAL_TEXT = re.compile(r"(encoding|charset|locale|separator|^sep$)", re.I)


def _construct(pl: Planner, ctor: FunctionDecl, key: str, payload: bool = True) -> Obj:
    slot = pl.idx.out_slot(ctor)
    if slot is not None:
        return _construct_out(pl, ctor, key, slot, payload)
    # Not fed: an optional setting such as an encoding name gets its default (NULL), not text.
    bind = {} if payload else {i: "NULL" for i, p in enumerate(ctor.params)
                               if ckinds.is_string(p.type) and _OPTIONAL_TEXT.search(p.name)}
    plan = pl.plan(ctor, bind=bind, payload=payload)
    var = pl.emit(plan, pl.f.setup, result=object_name(key))
    pl.f.setup.append(f"if ({var} == NULL) {pl.f.fail()}")
    return Obj(key, var or "NULL", var or "", origin=ctor.name)


def _construct_out(pl: Planner, ctor: FunctionDecl, key: str, slot: int, payload: bool = True) -> Obj:
    """``create(&obj, ...)``: the object comes back through a ``T **`` parameter.

    The pointer starts NULL and is released only when set. A NULL after the call means
    failure, and so does a failing status: many such functions hand the object back even when
    they fail (to carry the error), and it may only be released then, not used.
    """
    var = pl.var(key if pl.idx.is_handle(key) else f"{key} *", object_name(key), "NULL")
    plan = pl.plan(ctor, bind={slot: f"&{var}"}, payload=payload)
    rc = pl.emit(plan, pl.f.setup)
    ret = ctor.return_type
    if rc is not None and not ckinds.is_pointer(ret) and (ckinds.is_integer(ret) or ckinds.is_enum_like(ret)):
        ok = success_test(ctor.name, ret, rc, ckinds.is_bool(ret), False)
        if ok != f"{rc} >= 0" or not ckinds.is_unsigned(ret):  # an unsigned count tests nothing
            pl.f.setup.append(f"if (!({ok})) {pl.f.fail()}")
    pl.f.setup.append(f"if ({var} == NULL) {pl.f.fail()}")
    whole = whole_list_releaser(ctor, ctor.params[slot].type)
    if whole:
        pl.f.cleanup.append(f"if ({var} != NULL) {whole}(&{var});")
        return Obj(key, var, var, origin=ctor.name)
    dtor = pl.idx.destructor(key, ctor.name)
    if not dtor and pl.strict_release:
        raise Unsupported(f"no destructor for the {key} {ctor.name} makes")
    pl.f.cleanup.append(f"if ({var} != NULL) {dtor or 'free'}({var});")
    if not dtor:
        pl.f.notes.append(f"no destructor for {key} in the API: freed with free()")
    return Obj(key, var, var, origin=ctor.name)


def fresh(pl: Planner, key: str, near: str, small: bool = False) -> Obj:
    """A new object the caller hands over (a consumed argument).

    It is picked among simple constructors by an option byte, so each input can build a
    different kind of item.
    """
    life = pl.idx.lifecycle(key)
    simple = []
    for name in life.create:
        f = pl.idx.by_name[name]
        if pl.idx.out_slot(f) is None and usable(pl, f) and values_only(pl.idx, f):
            simple.append(f)
    if not simple:
        if life.init:
            return initialize(pl, key, near, feed=False)
        outs = [pl.idx.by_name[n] for n in life.create if pl.idx.out_slot(pl.idx.by_name[n]) is not None]
        outs = [f for f in outs if usable(pl, f)]
        if outs:
            return _construct(pl, outs[0], key)
        raise Unsupported(f"no simple constructor for {key}")
    simple, made = simple[:8], simple[0].return_type  # a pointer typedef is declared as it is, no `T *`
    var = pl.var(made if ckinds.is_pointer(made) else f"{key} *", "item", "NULL")
    dtor = pl.idx.destructor(key, simple[0].name)
    if len(simple) == 1:
        plan = pl.plan(simple[0], payload=False)
        pl.f.setup.append(f"{var} = {plan.text};")
    else:
        choice = pl.var("int", "kind")
        pl.f.opts.append(f"{choice} = {pl.f.take_int((0, len(simple) - 1))};")
        texts = [pl.plan(f, payload=False).text for f in simple]
        pl.f.setup.append(f"switch ({choice}) {{")
        for i, text in enumerate(texts):
            pl.f.setup.append(f"  case {i}: {var} = {text}; break;")
        pl.f.setup.append("  default: break;")
        pl.f.setup.append("}")
    pl.f.setup.append(f"if ({var} == NULL) {pl.f.fail()}")
    pl.f.cleanup.append(f"if ({var} != NULL) {dtor or 'free'}({var});")
    return Obj(key, var, var)


def producer(
    idx: ApiIndex, avoid: set[str], key: str | None = None, out_key: str | None = None
) -> FunctionDecl | None:
    """A function filling an out struct one step at a time.

    Restricted to producers working on object ``key`` or filling type ``out_key``, e.g.
    ``acme_parser_parse(parser, event)``.
    """
    found = []
    for f in idx.api:
        if f.name in avoid or not f.params:
            continue
        rs = roles(f, idx)
        outs = [r for r in rs if r.kind == "out_object"]
        if not outs or rs[0].kind != "object":
            continue
        if key and rs[0].type_key != key or out_key and outs[0].type_key != out_key:
            continue
        verb = next((v for v in PRODUCER_ORDER if v in idx.verbs(f.name)), None)
        if verb is not None:
            found.append((PRODUCER_ORDER.index(verb), f.name, f))
    return sorted(found, key=lambda x: x[:2])[0][2] if found else None
