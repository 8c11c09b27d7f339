"""Handle types: values a library makes and releases, passed around by value.

``lib_file lib_open(...)`` / ``lib_close(lib_file)``: a harness can only get one from its
constructor. A typedef of a character or number pointer that the library makes and releases
(``lib_name`` standing for ``const char *``, from ``lib_name_make``, freed by
``lib_name_free``) is one too: a string from the input is not a valid one, since the library
reads what its constructor laid out after it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from agents.offline import cdecl, ckinds, type_releasers, type_table
from fuzzkit.api import FunctionDecl

if TYPE_CHECKING:
    from agents.offline.synth_api import ApiIndex


def by_name(ctype: str) -> bool:
    """A type spelled as a plain name, not with ``*``, and no struct pointer's typedef.

    A typedef of a pointer to characters or numbers counts; one of a struct pointer
    (``doc_ptr``) is an object pointer, not a handle.
    """
    return "*" not in ctype and not ckinds.is_function_pointer(ctype) and not ckinds.is_struct_pointer(ctype)


def handle_name(ctype: str) -> str:
    """The name a handle type goes by: its own typedef name when it stands for a pointer."""
    return ckinds.strip_const(ctype) if ckinds.is_pointer(ctype) else ckinds.base_name(ctype)


def handle_types(
    api: Iterable[FunctionDecl],
    destroys: Callable[[FunctionDecl], bool],
    makes: Callable[[FunctionDecl], bool] = lambda f: False,
) -> set[str]:
    """Types spelled by name that a function returns and another (or the header) releases.

    A handle hiding a record pointer that a constructor writes out (``int lib_init(lib_chan
    *out)``) counts as returned: its functions need one made there, not a zeroed (NULL) value.
    """
    api = list(api)
    returned = {
        handle_name(f.return_type)
        for f in api
        if by_name(f.return_type)
        and not ckinds.is_void(f.return_type)
        and not ckinds.is_integer(f.return_type)
        and not ckinds.is_float(f.return_type)
        and not ckinds.is_enum_like(f.return_type)
        and not f.return_type.strip().startswith(("struct ", "union ", "enum "))
        # of pointer typedefs, only strings: a byte buffer type is how input data comes in
        and (not ckinds.is_pointer(f.return_type) or ckinds.is_string(f.return_type))
    }
    returned |= {handle_name(ckinds.pointee(p.type)) for f in api if makes(f) for p in f.params[:1]
                 if out_handle(p.type)}
    # A handle is closed by someone (lib_close(lib_file)); a plain value struct is not, and
    # neither is an error code a predicate reads (lib_is_error(lib_error_code_t)).
    closed = {handle_name(f.params[0].type) for f in api
              if len(f.params) == 1 and by_name(f.params[0].type) and destroys(f)}
    # A releaser the Types section names for what a function returns counts too (the
    # prompt's API list may leave it out), but only by documentation: a releaser of the same
    # canonical type (`void free_pattern(uint8_t *)`) does not make every `typedef const
    # uint8_t *str_t` the library hands back a handle.
    closed |= {handle_name(f.return_type) for f in api if type_releasers.producer_releaser(f.name)}
    return {t for t in returned if t not in cdecl.INT_TYPES and t in closed}


def out_handle(ctype: str) -> bool:
    """Whether ``ctype`` is a writable pointer to a handle hiding a record pointer (``lib_chan *``)."""
    if ckinds.pointer_depth(ctype) != 1 or ckinds.is_const_target(ctype):
        return False
    inner = ckinds.pointee(ctype)
    canon = type_table.active().canonical.get(ckinds.strip_const(inner), "")
    return by_name(inner) and bool(re.fullmatch(r"(const )?(struct|union) \w+ ?\*", canon))


def out_slot(fn: FunctionDecl, kind: str, is_handle: Callable[[str], bool]) -> int | None:
    """The parameter a create- or init-kind function writes its new object through.

    A handle hiding a record pointer comes out through ``H *`` (``lib_init(lib_chan *out)``),
    from either kind; an opaque record through the one ``T **`` of a constructor.
    """
    first = fn.params[0].type if fn.params else ""
    if out_handle(first) and is_handle(handle_name(ckinds.pointee(first))):
        return 0
    slots = [
        i
        for i, p in enumerate(fn.params)
        if ckinds.pointer_depth(p.type) == 2
        and not ckinds.is_function_pointer(p.type)
        and not ckinds.is_const_target(p.type)
        and ckinds.is_struct_pointer(ckinds.pointee(p.type))
    ]
    return slots[0] if len(slots) == 1 and kind == "create" else None


def takes_own(idx: ApiIndex, fn: FunctionDecl, key: str) -> bool:
    """Whether constructor ``fn`` takes an existing ``key`` object (not the slot it fills).

    Such a constructor (an element made from a tree of definitions) cannot make the first
    one: another is preferred, and with none the recursion limit makes optional code give up.
    """
    return any(idx.type_key(p.type) == key and ckinds.pointer_depth(p.type) == 1 for p in fn.params)
