"""What a callee hands back through a ``T **`` parameter: released after use.

The releaser comes from the Types section (by parameter type, by the producer's name, or by
the documentation, ``free`` included); a string or number buffer the header names no releaser
for goes to the library's generic releaser, else ``free``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from agents.offline import cdecl, ckinds, type_releasers, type_table
from agents.offline.synth_init import stack_releaser, zeroed
from fuzzkit.api import FunctionDecl

if TYPE_CHECKING:
    from agents.offline.synth_plan import Planner


def release_out(pl: Planner, fn: FunctionDecl, ptype: str, v: str, param_name: str = "") -> None:
    """Release what the callee returned through ``T **``, with the releaser the header names.

    A parser's result list leaks on every input otherwise (LeakSanitizer); which function
    releases it comes from the Types section (by parameter type, by name, or because the
    documentation says so, ``free`` included). A ``const`` pointee points into the input; what
    the header says the library keeps, or a buffer an object's getter hands back, is not freed.
    """
    if ckinds.is_const_target(ckinds.pointee(ptype)) or ckinds.is_const_target(ptype):
        return
    inner = ckinds.pointee(ptype)
    returns_block = ckinds.is_pointer(fn.return_type)
    whole = whole_list_releaser(fn, ptype)
    if whole:
        pl.f.cleanup.append(f"if ({v} != NULL) {whole}(&{v});")
        return
    if returns_block and pl.idx.returns_owned(fn) and (
        cdecl.normalize_type(inner) == cdecl.normalize_type(fn.return_type)
    ):
        return  # `u = f(..., &v)`: a view into the block the call returns, released with it
    # "X releases what f allocates" is about f's result: its out-parameters only when it
    # returns no pointer.
    releaser = type_releasers.type_releaser(inner, producer="" if returns_block else fn.name)
    if releaser is None and fn.name in type_table.active().borrows:
        return  # the header says the library keeps what it hands back
    if releaser is None:
        key = pl.idx.type_key(inner)
        releaser = pl.idx.destructor(key, fn.name) if key else None
    if releaser is None and (ckinds.is_bytes(inner) or ckinds.is_string(inner) or _numbers(inner)):
        # A string or buffer of bytes or numbers handed back: the library's generic releaser,
        # else free(); not when the name says it points into the input (`end`, `rest`).
        if re.search(r"(end|next|rest|pos|cursor|remain)", param_name, re.I):
            return
        if "get" in pl.idx.verbs(fn.name) and fn.params and pl.idx.type_key(fn.params[0].type):
            return  # `obj_get_frame(obj, &buf)`: the object's own buffer, as for a returned one
        releaser = pl.idx.generic_free() or "free"
    if releaser is None:
        return
    if releaser == "free":
        pl.f.include("<stdlib.h>")
    pl.f.cleanup.append(f"if ({v} != NULL) {releaser}({v});")


def written_out(pl: Planner, key: str, name: str, callee: str, after: list[str]) -> str:
    """A caller's ``key`` the callee writes its result into, released after the call.

    A record is zeroed and released by address; a handle hiding a record pointer is a NULL
    handle the callee makes (``lib_dup(lib_chan *dest, lib_chan src)``), destroyed if it did.
    """
    if pl.idx.is_handle(key):
        v = pl.var(key, name, "NULL", hoist=True)
        if dtor := pl.idx.destructor(key, callee):
            after.append(f"if ({v} != NULL) {dtor}({v});")
        return f"&{v}"
    v = zeroed(pl, key, name, hoist=True)
    if dtor := stack_releaser(pl.idx, key, callee):
        after.append(f"{dtor}(&{v});")
    return f"&{v}"


def whole_list_releaser(fn: FunctionDecl, ptype: str) -> str | None:
    """The header's releaser of ``T **`` for what ``fn`` builds through that parameter, or None.

    A list built through its head (`kv_parse(&head, text)`): the releaser of `T **` takes the
    whole list; the one of `T *` may free one node's contents only. Not for a call returning a
    pointer (other than the node it put in the list: `node = kv_store(&head, key, value)`), one
    the header pairs with its own releaser, or a string or byte buffer.
    """
    inner = ckinds.pointee(ptype)
    node = cdecl.normalize_type(fn.return_type) == cdecl.normalize_type(inner)
    if ckinds.pointer_depth(ptype) != 2 or ckinds.is_pointer(fn.return_type) and not node:
        return None
    if type_releasers.producer_releaser(fn.name) or ckinds.is_bytes(inner) or ckinds.is_string(inner):
        return None
    return next(iter(type_releasers.releasers_of(ptype)), None)


def returns_list_node(fn: FunctionDecl) -> bool:
    """Whether ``fn`` returns the node it put in a list it was given by its head (``T **``).

    The list then holds the node: releasing the list releases it, and the node is not released
    on its own (``node = kv_store(&head, key, value)``).
    """
    return ckinds.is_pointer(fn.return_type) and any(
        whole_list_releaser(fn, p.type) for p in fn.params
        if cdecl.normalize_type(ckinds.pointee(p.type)) == cdecl.normalize_type(fn.return_type))


def _numbers(ctype: str) -> bool:
    """A pointer to plain numbers (``uint32_t *``, ``float *``), not to an object."""
    inner = ckinds.pointee(ctype)
    return ckinds.pointer_depth(ctype) == 1 and (ckinds.is_integer(inner) or ckinds.is_float(inner))
