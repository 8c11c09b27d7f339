"""Objects the library itself defines, for parameters nothing else can make.

``int re_new(re_t **re, const uchar *pat, const uchar *end, const re_encoding *enc)``: no
function makes an ``re_encoding``; the header declares the library's own
(``extern re_encoding re_utf8, re_latin1;``), full of function pointers, and a zeroed struct
makes the library call address 0. The Types section lists such variables (only those the
built library defines); the harness picks one per type with an option byte, once, and uses it
for every argument and settings-struct field of that type (a pattern's and a text's encoding
must usually agree). An opaque object nothing can make goes as NULL (:func:`null_opaque`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from agents.offline import ckinds, type_table
from agents.offline.synth_types import Obj, decl_cast

if TYPE_CHECKING:
    from agents.offline.synth_plan import Planner

_DEFAULT = re.compile(r"default", re.I)
_ALLOC_FIELD = re.compile(r"(alloc|free)", re.I)


def instances_of(key: str) -> list[str]:
    """Expressions for the library's own objects of type ``key`` (``&re_utf8``), default first."""
    table = type_table.active()
    want = table.record(key)
    found = []
    for name, ctype in table.instances:
        base = ckinds.base_name(ctype)
        if base == key or (want is not None and table.record(base) is want):
            pointer = ckinds.pointer_depth(ctype) >= 1
            found.append((not _DEFAULT.search(name), name if pointer else f"&{name}"))
    return [expr for _rank, expr in sorted(found, key=lambda f: f[0])]


def library_object(pl: Planner, key: str) -> str | None:
    """A variable holding one of the library's own ``key`` objects, or None if it has none."""
    if key in pl.instances:
        return pl.instances[key]
    found = instances_of(key) or _handed_out(pl, key)
    if not found:
        return None
    v = pl.var(f"{key} *", object_name(key) + "_object", "NULL")
    choices = ", ".join(f"({key} *){e}" for e in found)
    table = pl.f.name("lf_library_objects")
    pick = pl.f.take_int((0, len(found) - 1))
    pl.f.opts.append(f"{{ {key} *const {table}[] = {{{choices}}}; {v} = {table}[{pick}]; }}")
    pl.instances[key] = v
    return v


def _handed_out(pl: Planner, key: str) -> list[str]:
    """Calls of the library's functions that take nothing and hand out one of its ``key`` objects.

    ``acme_mem *acme_get_default_mem_allocator(void)``: the library's own, never the caller's
    to release (an owned result is a constructor's, see ``lifecycle``). Default first.
    """
    found = [(not _DEFAULT.search(f.name), f"{f.name}()") for f in pl.idx.api
             if not f.params and f.name not in pl.avoid and ckinds.is_pointer(f.return_type)
             and pl.idx.type_key(f.return_type) == key and not pl.idx.returns_owned(f)]
    return [expr for _rank, expr in sorted(found)]


def fill_fields(pl: Planner, key: str, var: str) -> None:
    """Point a settings struct's fields at the library's own objects of their types."""
    rec = type_table.active().record(key)
    if rec is None:
        return
    for name, ftype in rec.fields:
        if ckinds.pointer_depth(ftype) != 1 or ckinds.is_function_pointer(ftype):
            continue
        obj = library_object(pl, ckinds.base_name(ftype))
        if obj is not None:
            pl.f.setup.append(f"{var}.{name} = ({decl_cast(ftype)}){obj};")


def object_name(key: str) -> str:
    """A variable name for an object of type ``key`` (``acme_parser_t`` -> ``parser``)."""
    if key.endswith("_t"):
        base = key.split("_")[-2] if "_" in key[:-2] else key[:-2].lower()
    else:
        base = key.lower()
    return base


def null_opaque(pl: Planner, key: str) -> Obj:
    """NULL for an opaque object none of whose constructors the harness may call or knows of.

    Only the library can make one, so a struct of it cannot be declared (incomplete type); an
    optional context takes NULL as "the defaults". (Optional code, an improvement block, gives
    up instead: see ``zeroed``.)
    """
    v = pl.var(f"{key} *", object_name(key), "NULL")
    pl.f.notes.append(f"no usable constructor for the opaque {key}: NULL is passed")
    return Obj(key, v, v, owned=False)


def is_allocator_suite(type_name: str) -> bool:
    """A struct of memory functions (``malloc``/``realloc``/``free`` fields) the caller may supply.

    Passed as NULL the library uses its defaults; zeroed, it holds NULL functions, which a
    library either calls or rejects (returning no object at all).
    """
    record = type_table.active().record(ckinds.base_name(type_name))
    if record is None:
        return False
    names = [*record.functions, *(n for n, t in record.fields if ckinds.is_function_pointer(t))]
    return sum(bool(_ALLOC_FIELD.search(n)) for n in names) >= 2



def draw_documented_fields(pl: Planner, key: str, var: str, into: list[str], depth: int = 1) -> None:
    """Set each field whose comment documents its values from an option byte in that range.

    After the initializer (which sets the defaults), so every configuration the header
    documents is reachable: ``cfg.method`` in 0..6, ``cfg.lossless`` 0 or 1. Fields of a
    struct held by value inside it are drawn too (``cfg.options.bypass``), one level down.
    """
    rec = type_table.active().record(key)
    if rec is None:
        return
    types = dict(rec.fields)
    for name, lo, hi in rec.ranges:
        ctype = types.get(name, "int")
        v = pl.var(ctype, f"{name}_v")
        pl.f.opts.append(f"{v} = ({decl_cast(ctype)}){pl.f.take_int((lo, hi))};")
        into.append(f"{var}.{name} = {v};")
    if depth > 0:
        for name, ftype in rec.fields:
            if ckinds.pointer_depth(ftype) == 0 and (inner := type_table.active().record(ftype)) is not None \
                    and inner is not rec:
                draw_documented_fields(pl, ckinds.base_name(ftype), f"{var}.{name}", into, depth - 1)
