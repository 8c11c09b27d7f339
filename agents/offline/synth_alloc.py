"""An allocator suite argument: the C library's own functions where the types say they fit.

``ctx_new2(struct lib_alloc *alloc, int flags)`` takes a struct of memory functions. Passed as
NULL, some libraries use their defaults and others return no object at all (every call after
the target then sees NULL). When each function field's type (from the Types section) is that of
``malloc``, ``calloc``, ``realloc`` or ``free`` and its name says which, the harness fills a
suite with those: the library's default behaviour, whichever way it treats NULL. A suite whose
functions take a user pointer (``zalloc(opaque, items, size)``), or whose types the Types section
does not give, stays NULL.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from agents.offline import ckinds, type_table
from fuzzkit.vocabulary import libc_prototypes, libc_released_by

if TYPE_CHECKING:
    from agents.offline.synth_plan import Planner

_SIGNATURE = re.compile(r"^(.*?)\s*\(\s*\*?\s*\)\s*\((.*)\)$")


def _shape(ret: str, params: list[str]) -> tuple[bool, str]:
    """Whether a prototype returns a pointer, and its parameters' kinds (``p`` pointer, ``n`` size)."""
    kinds = "".join("p" if ckinds.is_pointer(p) else "n" if ckinds.is_integer(p) else "?" for p in params)
    return ckinds.is_pointer(ret), kinds


def _std() -> dict[str, tuple[bool, str]]:
    """The C library's memory functions, each with the shape of its prototype."""
    out = {}
    for name, proto in libc_prototypes().items():
        head, _, rest = proto.partition("(")
        params = [re.sub(r"\w+\s*$", "", p).strip() for p in rest.rstrip(")").split(",")]
        out[name] = _shape(head.rsplit(name, 1)[0].strip(), params)
    return out


def std_suite(key: str) -> list[tuple[str, str]] | None:
    """``(field, C library function)`` for every function field of ``key``, or None when one does not fit."""
    table = type_table.active()
    rec = table.record(key)
    if rec is None or rec.functions or not rec.fields:
        return None
    out = []
    for name, ftype in rec.fields:
        canon = table.canonical.get(ckinds.base_name(ftype), "")
        sig = _SIGNATURE.match(canon.strip())
        std = [s for s in _std() if s in name.lower()]
        if sig is None or len(std) != 1 or ckinds.pointer_depth(ftype) != 1:
            if ckinds.is_function_pointer(ftype) or sig is not None:
                return None
            continue  # a plain field (a user pointer nothing passes on) stays zero
        returns_ptr, kinds = _std()[std[0]]
        params = [p.strip() for p in sig.group(2).split(",") if p.strip() and p.strip() != "void"]
        ret = sig.group(1).strip()
        if _shape(ret, params) != (returns_ptr, kinds) or not (returns_ptr or ckinds.is_void(ret)):
            return None
        out.append((name, std[0]))
    used = {s for _n, s in out}  # at least `malloc` and what releases its blocks
    return out if "malloc" in used and libc_released_by()["malloc"] in used else None


def allocator_suite(pl: Planner, key: str, base: str) -> str:
    """The argument for a ``key *`` allocator suite: ``&suite`` filled from the C library, else NULL."""
    fields = std_suite(key)
    if not fields:
        return "NULL"  # the library's own allocator (what `init_alloc_funcs(&a)` fills is not)
    v = pl.var(key, base or "alloc", hoist=True)
    pl.f.include("<stdlib.h>")
    pl.f.hoist.extend(f"{v}.{name} = {std};" for name, std in fields)
    return f"&{v}"
