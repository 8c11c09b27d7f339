"""Result containers: objects a library makes empty for a search to fill.

``md = re_match_data_create(n)`` makes room for a match; ``re_match(code, subject, len, ...,
md)`` fills it; readers (``re_substring_get_byname(md, name, ...)``) walk what the match left
there, and on a container no match has filled they follow a NULL pointer. A container is
recognised by shape: a function named as a search (``match``, ``exec``, ``search``) that
returns a status takes the input and, after it, an object of the type through a non-const
pointer, a type not named as settings (a context, a configuration, an allocator); a lookup
returning what it found (``find_ns(doc, node, name)``) fills nothing. A
container the harness makes for a reader is filled by one such search first (on the input,
or on option text when the reader takes the input itself), and a reader is never called on a
held container nothing filled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents.offline import ckinds
from agents.offline.synth_api import ApiIndex, words
from agents.offline.synth_knowledge import success_test
from agents.offline.synth_roles import payload_slot, roles
from agents.offline.synth_types import Obj, Role
from fuzzkit.api import FunctionDecl

if TYPE_CHECKING:
    from agents.offline.synth_plan import Planner

FILL_WORDS = {"match", "exec", "execute", "search"}
# A settings object passed along (a match context, an allocator) is read, not filled.
SETTINGS_WORDS = {"context", "ctx", "config", "conf", "options", "opts", "settings", "allocator", "alloc"}


def _slot(idx: ApiIndex, fn: FunctionDecl, key: str) -> Role | None:
    rs = roles(fn, idx)
    subject = payload_slot(rs)
    if subject is None or ckinds.is_pointer(fn.return_type) or set(words(key)) & SETTINGS_WORDS:
        return None
    return next((r for r in rs if r.index > subject and r.kind == "object" and r.type_key == key
                 and not ckinds.is_const_target(r.param.type)), None)


def fillers(idx: ApiIndex, key: str) -> list[FunctionDecl]:
    """The searches that fill a ``key`` container, simplest first (none: ``key`` is no container)."""
    cached = idx.filler_cache.get(key)
    if cached is None:
        found = [f for f in idx.api if set(words(f.name)) & FILL_WORDS and _slot(idx, f, key)]
        # the plain search before its variants (a JIT-only one fails on code compiled without it)
        found.sort(key=lambda f: (len(f.params), len(words(f.name)), f.name))
        cached = idx.filler_cache[key] = found
    return cached


def fill(pl: Planner, obj: Obj, near: str, payload: bool) -> bool:
    """Fill the container ``obj`` made for ``near`` with a search; whether one was emitted.

    Only for a reader of the container (it takes it first); nothing when ``near`` is itself
    one of its searches (it fills the container) or every search is to be avoided. A function
    taking the container further on (a substitution that matches on its own) gets it empty.
    """
    reader = pl.idx.by_name.get(near)
    if reader is None or not reader.params or pl.idx.type_key(reader.params[0].type) != obj.type_key:
        return False  # only a reader of the container (its first argument) needs it filled
    found = fillers(pl.idx, obj.type_key)
    if not found or near in {f.name for f in found}:
        return False
    search = next((f for f in found if f.name not in pl.avoid), None)
    slot = _slot(pl.idx, search, obj.type_key) if search is not None else None
    if search is None or slot is None:
        return False
    rc = pl.emit(pl.plan(search, bind={slot.index: obj.expr}, payload=payload), pl.f.setup)
    if rc is not None:
        # A search that stops at a bad option or an error never records what it ran on, and a
        # reader then follows a NULL: read only after a successful one.
        ok = success_test(search.name, search.return_type, rc, ckinds.is_bool(search.return_type), False)
        pl.f.setup.append(f"if (!({ok})) {pl.f.fail()}")
    return True


def unfilled(idx: ApiIndex, obj: Obj, target: FunctionDecl | None = None) -> bool:
    """Whether ``obj`` is a container no search filled (nor ``target``, when it is a search)."""
    found = {f.name for f in fillers(idx, obj.type_key)}
    if not found or obj.filled or obj.origin in found:
        return False
    return target is None or target.name not in found


COMPILE_WORDS = {"compile"}


def compilers(idx: ApiIndex, key: str) -> list[tuple[FunctionDecl, int]]:
    """``(f, slot)`` of the functions that compile text into a ``key`` object, simplest first.

    ``pat_compile(const char *pattern, int len, struct pat_buf *buf, char *err)``: named for
    compiling, it takes text or bytes and a non-const ``key`` pointer it fills, and returns a
    status (one returning a new object, ``ctx_compile(ctx, expr)``, makes that, not ``key``).
    """
    found = []
    for f in idx.api:
        if not set(words(f.name)) & COMPILE_WORDS or ckinds.is_pointer(f.return_type):
            continue
        rs = roles(f, idx)
        slot = next((r.index for r in rs if r.kind == "object" and r.type_key == key
                     and ckinds.is_pointer(r.param.type) and not ckinds.is_const_target(r.param.type)), None)
        if slot is not None and payload_slot(rs) is not None:
            found.append((f, slot))
    return sorted(found, key=lambda fs: (len(fs[0].params), fs[0].name))


def prepare_made(pl: Planner, obj: Obj, near: str, feed: bool, fed_first: bool) -> bool:
    """Ready an object a constructor made for ``near``; whether a search filled it (:func:`fill`).

    A pattern buffer made empty is compiled first (:func:`compile_into`), unless the
    constructor already read the input into it (``fed_first``).
    """
    if not fed_first:
        compile_into(pl, obj, near, payload=feed)
    return fill(pl, obj, near, payload=feed and not fed_first)


def compile_into(pl: Planner, obj: Obj, near: str, payload: bool) -> bool:
    """Compile text into ``obj``, a pattern buffer its constructor made empty; whether it was.

    A search on a buffer nothing compiled follows a NULL program. The text is the input
    (``payload``), else a share of it (the target takes the input as its subject). Nothing
    when ``near`` compiles itself or every compiler is to be avoided.
    """
    found = compilers(pl.idx, obj.type_key)
    usable = [(f, s) for f, s in found if f.name not in pl.avoid]
    if not usable or near in {f.name for f, _ in found}:
        return False
    fn, slot = usable[0]
    rc = pl.emit(pl.plan(fn, bind={slot: obj.expr}, payload=payload), pl.f.setup)
    if rc is not None:
        ok = success_test(fn.name, fn.return_type, rc, ckinds.is_bool(fn.return_type), False)
        pl.f.setup.append(f"if (!({ok})) {pl.f.fail()}")
    return True
