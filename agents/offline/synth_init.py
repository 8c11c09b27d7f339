"""Library structs the harness holds by value: zero-filled on the stack, set up by an initializer.

:func:`initialize` picks the initializer that fits the calling function (:func:`choose_init`),
checks its result, releases the struct at the end and, unless told not to, points its output
at a buffer and feeds it the payload.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents.offline import ckinds, synth_io, type_table
from agents.offline.synth_api import ApiIndex
from agents.offline.synth_config import settle_fields
from agents.offline.synth_fill import fillers
from agents.offline.synth_finders import words
from agents.offline.synth_instances import draw_documented_fields, fill_fields
from agents.offline.synth_knowledge import success_test
from agents.offline.synth_roles import payload_slot, roles
from agents.offline.synth_types import CallPlan, Obj, Role, Unsupported
from agents.offline.synth_usage_fields import set_usage_fields
from agents.offline.synth_vocab import INIT, risky
from fuzzkit.api import FunctionDecl
from fuzzkit.vocabulary import words_of

if TYPE_CHECKING:
    from agents.offline.synth_plan import Planner


def zeroed(pl: Planner, key: str, base: str, hoist: bool = False, usage: bool = True) -> str:
    """A zero-filled struct of type ``key`` on the stack.

    ``usage``: then set the fields the library's own code sets before passing one (its caller
    does it otherwise: after an initializer, where the usage sets them after it).
    """
    if pl.strict_release and (ckinds.is_opaque(key) or type_table.active().unlisted(key)):
        raise Unsupported(f"{key} may be opaque: it cannot be declared by value")  # optional code only
    v = pl.f.name(base)
    target = pl.f.hoist if hoist else pl.f.decls
    target.append(f"{key} {v};")
    target.append(f"memset(&{v}, 0, sizeof {v});")
    pl.f.include("<string.h>")
    if not hoist:
        fill_fields(pl, key, v)
        settle_fields(pl, key, v)
        if usage:
            set_usage_fields(pl, key, v)
    return v


def set_up_by(pl: Planner, fn: FunctionDecl, r: Role, plan: CallPlan) -> str:
    """A zeroed struct for ``fn`` to set up, released after it succeeded when its type has a releaser.

    ``int re_compile(re_t *preg, const char *pattern, int flags)`` fills ``preg`` with what
    ``re_free(re_t *)`` releases; the names share no initializer verb, so nothing else knows
    the call made something to release, and every compiled pattern leaked.
    """
    key = r.type_key or ""
    if ckinds.is_const_target(r.param.type) and (found := filler(pl, key, fn.name)) is not None:
        return filled(pl, found[0], found[1], key, r.param.name)
    v = zeroed(pl, key, r.param.name)
    dtor = stack_releaser(pl.idx, key, fn.name)
    ret = fn.return_type
    # A releaser of the struct itself: free() or the library's generic one would free the stack.
    status = not ckinds.is_void(ret) and not ckinds.is_pointer(ret)
    if (dtor and dtor not in (fn.name, "free", pl.idx.generic_free()) and status
            and not ckinds.is_const_target(r.param.type)):
        ready = f"{v}_ready"
        pl.f.taken.add(ready)
        pl.f.decls.append(f"int {ready} = 0;")
        ok = success_test(fn.name, ret, "{result}", ckinds.is_bool(ret), False)
        # A search fills its zeroed container on a mismatch too (a region resized, then no match).
        searched = any(f.name == fn.name for f in fillers(pl.idx, key))
        plan.after.append(f"{ready} = 1;" if searched else f"if ({ok}) {ready} = 1;")
        pl.f.cleanup.append(f"if ({ready}) {dtor}(&{v});")
    return v


# What clears the resources a struct holds, where the struct itself is the caller's.
_CLEARS = words_of("clear")


def stack_releaser(idx: ApiIndex, key: str, near: str) -> str | None:
    """What releases a stack ``key``: its destructor, unless the library also allocates ``key``.

    A type the library also makes on the heap (``T *t_new(void)``) is released there by a
    function that frees the struct itself (``t_free``): given a stack struct's address, a bad
    free on every input. Then only one clearing what the struct holds (``t_clear(T *)``) is, or
    the ``destroy`` that undoes an initializer beside that ``free``.
    """
    dtor = idx.destructor(key, near)
    heap = (life := idx.lifecycle(key)).create or dtor in type_table.active().frees_heap  # Types says so
    undo = [f for f in life.destroy if idx.last_verb(f, {"destroy"})]
    if undo and idx.last_verb(near, INIT) and any(idx.last_verb(f, {"free"}) for f in life.destroy):
        return undo[0]
    if not dtor or not heap or set(words(dtor)) & _CLEARS:
        return dtor
    return next((f.name for f in idx.api if len(f.params) == 1 and ckinds.is_void(f.return_type)
                 and idx.type_key(f.params[0].type) == key and set(words(f.name)) & _CLEARS), None)


_FILLS = words_of("parse") | {"open"}


def filler(pl: Planner, key: str, near: str) -> tuple[FunctionDecl, int] | None:
    """A function that fills a caller's ``key`` from the input, and the parameter it fills.

    ``int db_open(const char *filename, uint32_t flags, db_t *db)``: its one non-const ``db_t *``
    is set up from the file it reads (or the bytes it parses), a status comes back. A function
    that only reads a ``const db_t *`` needs one made so, not a zeroed one (an assertion in
    the library on every input). Its name says it reads or sets up (``open``, ``load``...): a
    setter of one field from bytes (``ctx_set_transport_id(ctx, id, len)``) makes no object.
    """
    for f in pl.idx.api:
        ret = f.return_type
        if (f.name == near or not usable(pl, f) or ckinds.is_void(ret) or ckinds.is_pointer(ret)
                or not set(words(f.name)) & _FILLS or "set" in words(f.name)):
            continue
        slots = [i for i, p in enumerate(f.params) if pl.idx.type_key(p.type) == key
                 and ckinds.pointer_depth(p.type) == 1 and not ckinds.is_const_target(p.type)]
        rs = roles(f, pl.idx)
        fed = payload_slot(rs) is not None or any(r.kind in ("path", "fd", "file") for r in rs)
        if len(slots) == 1 and fed:
            return f, slots[0]
    return None


def filled(pl: Planner, f: FunctionDecl, slot: int, key: str, base: str) -> str:
    """A zeroed ``key`` filled by ``f`` from the input, its status checked, released once filled."""
    v = zeroed(pl, key, base)
    rc = pl.emit(pl.plan(f, bind={slot: f"&{v}"}), pl.f.setup)
    ready = f"{v}_ready"
    pl.f.taken.add(ready)
    pl.f.decls.append(f"int {ready} = 0;")
    if rc is not None:
        pl.f.setup.append(f"if (!({success_test(f.name, f.return_type, rc, False, False)})) {pl.f.fail()}")
    pl.f.setup.append(f"{ready} = 1;")
    dtor = stack_releaser(pl.idx, key, f.name)
    if dtor and dtor not in (f.name, "free", pl.idx.generic_free()):
        pl.f.cleanup.append(f"if ({ready}) {dtor}(&{v});")
    return v


def filled_or_zeroed(pl: Planner, key: str, near: str, feed: bool) -> Obj:
    """A ``key`` without constructor or initializer: filled from the input, else zeroed."""
    base = key.split("_")[-2] if key.endswith("_t") else key
    if feed and (found := filler(pl, key, near)) is not None:
        v = filled(pl, found[0], found[1], key, base)
        return Obj(key, f"&{v}", v, origin=found[0].name, owned=False)
    table = type_table.active()
    record = table.record(key)
    if pl.strict_release and record and any(
            ckinds.is_struct_pointer(t) and table.record(ckinds.base_name(t)) for _, t in record.fields):
        # `entry_t {db_t *db; uint32_t offset;}` points into an object a lookup fills it from: zeroed, the
        # library follows a NULL (optional code only; a first draft keeps it and says so)
        raise Unsupported(f"{key} refers to other objects: a zeroed one points nowhere")
    v = zeroed(pl, key, base)
    pl.f.notes.append(f"no constructor or initializer for {key}: a zeroed struct is used")
    return Obj(key, f"&{v}", v, owned=False)


def zeroed_array(pl: Planner, key: str, base: str) -> str:
    """Eight zero-filled records of ``key``: a list read up to a terminator (or a limit) it may lack.

    Numbers (a typedef of an integer or an enum) are as many as the input has bytes, and eight more: an
    array the call reads beside the input, with the input's length.
    """
    if ckinds.is_integer(key) or ckinds.is_enum_typedef(key):
        return input_long_array(pl, key, base)
    v = pl.f.name(base)
    pl.f.decls += [f"{key} {v}[8];", f"memset({v}, 0, sizeof {v});"]
    pl.f.include("<string.h>")
    return v


def input_long_array(pl: Planner, elem: str, base: str) -> str:
    """A zeroed heap array of ``elem`` with as many elements as the input has bytes, and eight more."""
    v = pl.var(f"{elem} *", base, "NULL")
    pl.f.setup += [f"{v} = ({elem} *)calloc(size + 8, sizeof({elem}));", f"if ({v} == NULL) {pl.f.fail()}"]
    pl.f.cleanup.append(f"free({v});")
    pl.f.include("<stdlib.h>")
    return v


def usable(pl: Planner, f: FunctionDecl) -> bool:
    """Whether the harness may call ``f`` (not avoided, not risky)."""
    return f.name not in pl.avoid and not risky(f.name)


def initialize(
    pl: Planner,
    key: str,
    near: str,
    feed: bool = True,
    init: FunctionDecl | None = None,
    into: list[str] | None = None,
    setters: bool = True,
) -> Obj:
    """A zeroed stack struct of ``key`` set up by its initializer (and fed the payload).

    ``into`` receives the init call (default: setup); ``setters`` also points the object's
    output at a buffer when the API has such a setter.
    """
    into = pl.f.setup if into is None else into
    if init is None:
        init = choose_init(pl.idx, key, near, pl.avoid)
    if init is None:
        raise Unsupported(f"no usable initializer for {key}")
    base = (key[:-2].split("_")[-1] if key.endswith("_t") else key.split("_")[-1]).lower()
    v = zeroed(pl, key, base, usage=False)
    ready = f"{v}_ready"
    pl.f.taken.add(ready)
    pl.f.decls.append(f"int {ready} = 0;")
    given = pl.idx.usage_fields.get(key)
    if given is not None and given.call == init.name:  # the usage sets them for the initializer
        set_usage_fields(pl, key, v, into)
    plan = pl.plan(init, bind={0: f"&{v}"}, payload=False)
    rc = pl.emit(plan, into)
    if rc is not None:
        test = success_test(init.name, init.return_type, rc, ckinds.is_bool(init.return_type), False)
        into.append(f"if (!({test})) {pl.f.fail()}")
    into.append(f"{ready} = 1;")
    if given is not None and given.call != init.name:
        set_usage_fields(pl, key, v, into)
    draw_documented_fields(pl, key, v, into)
    synth_io.fill_output_hooks(pl, key, v, into)
    dtor = stack_releaser(pl.idx, key, init.name)
    if dtor:
        pl.f.cleanup.append(f"if ({ready}) {dtor}(&{v});")
    obj = Obj(key, f"&{v}", v, origin=init.name)
    if key in pl.configuring:
        setters = feed = False
    for setter in pl.idx.outputs(key)[:1] if setters else []:
        if usable(pl, setter):
            pl.emit(pl.plan(setter, bind={0: f"&{v}"}, payload=False), into)
    for keyer in [k for k in pl.idx.keyers(key) if k.name != near and usable(pl, k)][:1]:
        key_rc = pl.emit(pl.plan(keyer, bind={0: f"&{v}"}, payload=False), into)
        if key_rc is not None:
            into.append(f"if (!({success_test(keyer.name, keyer.return_type, key_rc, False, False)})) "
                        f"{pl.f.fail()}")
    if feed:
        feeders = [f for f in pl.idx.feeders(key) if usable(pl, f)]
        if feeders:
            pl.emit(pl.plan(feeders[0], bind={0: f"&{v}"}), into)
    return obj


def fed_by_init(pl: Planner, key: str) -> bool:
    """Whether a ``key`` set up by its initializer would be handed the payload (or an output)."""
    return bool(pl.idx.feeders(key) or pl.idx.outputs(key))


def configure_made(pl: Planner, obj: Obj, key: str, near: str) -> Obj:
    """An object the library allocated, set up by an initializer that takes more than the object.

    ``entry_t *entry_new(void)`` then ``entry_initialize(entry, tag)``: the initializer
    fills what the tag calls for in memory the constructor prepared (a zeroed stack struct
    lacks it, and the releaser frees the pointer). One taking the object alone
    (``ctx_init(ctx)``) would set up again what the constructor did, so it is not called.
    """
    init = choose_init(pl.idx, key, near, pl.avoid)
    if init is None or len(init.params) < 2 or obj.expr == "NULL" or key in pl.configuring:
        return obj  # (one the target itself sets up is not set up before it)
    rc = pl.emit(pl.plan(init, bind={0: obj.expr}, payload=False), pl.f.setup)
    if rc is not None:
        test = success_test(init.name, init.return_type, rc, ckinds.is_bool(init.return_type), False)
        pl.f.setup.append(f"if (!({test})) {pl.f.fail()}")
    return obj


def made_only_from(idx: ApiIndex, key: str, making: list[str]) -> bool:
    """Whether every constructor of ``key`` takes an object of a type in ``making`` (being built).

    ``ctx_new(alloc, opts, global_ctx_t *global)`` with ``global_ctx_t *make_global(ctx_t *)``:
    a cycle, so the global context is optional to ``ctx_new`` (NULL), or no context could exist.
    """
    life = idx.lifecycle(key)
    makers = [idx.by_name[n] for n in life.create]
    return bool(makers) and not life.init and all(
        any(idx.type_key(p.type) in making for p in f.params) for f in makers)


def choose_init(idx: ApiIndex, key: str, near: str, avoid: set[str]) -> FunctionDecl | None:
    """The initializer of ``key`` that fits function ``near``.

    Same name stem first, then the one with the most tunable options (``lib_decodeInit2`` for
    ``lib_decode``).
    """
    if key in idx.preferred_init:
        return idx.by_name[idx.preferred_init[key]]
    stem = idx.stem(near)
    options = [idx.by_name[n] for n in idx.lifecycle(key).init if n not in avoid and not risky(n)]
    options.sort(
        key=lambda f: (
            idx.stem(f.name) != stem,
            not stem.startswith(idx.stem(f.name)),
            -_tunable(idx, f),
            len(f.params),
            f.name,
        )
    )
    return options[0] if options else None


def _tunable(idx: ApiIndex, f: FunctionDecl) -> int:
    """How many option parameters an initializer has (more options reach more code)."""
    return sum(r.kind == "int" and len(r.choices) != 1 for r in roles(f, idx))
