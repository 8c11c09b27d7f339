"""Classifying C types by what a harness must do with them.

A type spelling is read through the prompt's ``## Types`` section (the active
:mod:`agents.offline.type_table`): a library's typedef is what its canonical type is.
Spellings and prototypes are parsed by :mod:`agents.offline.cdecl`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import TypeVar

from agents.offline import cdecl, type_table
from agents.offline.cdecl import normalize_type
from fuzzkit.api import Param

T = TypeVar("T")


def _cached(fn: Callable[[str], T]) -> Callable[[str], T]:
    """Memoize a classifier per type table: the same spelling means what the active table says."""
    memo: dict[tuple[int, str], T] = {}

    @functools.wraps(fn)
    def wrapper(ctype: str) -> T:
        key = (type_table.active().key, ctype)
        if key not in memo:
            if len(memo) > 50_000:
                memo.clear()
            memo[key] = fn(ctype)
        return memo[key]

    return wrapper


@_cached
def resolve(ctype: str) -> str:
    """The type with pointer-hiding typedefs expanded (``lib_handle_p`` -> ``lib_handle *``).

    Which typedefs hide a pointer comes from the prompt's ``## Types`` section.
    """
    table = type_table.active()
    text = normalize_type(ctype)
    for _ in range(8):
        core = strip_const(text).replace("*", "").strip()
        under = table.typedefs.get(core, "")
        if under in table.typedefs and _hides_pointer(table, under):
            pass  # `typedef node_p doc_p;`: an alias of a pointer typedef, followed
        # `typedef struct s *handle_t` names a handle (it stays the library's name for it);
        # `typedef node_t *node_p`, `void *ptr_t`, a pointer to a record to fill: spellings.
        elif "*" not in under or "(*)" in under or table.names_handle(core, under):
            break
        prefix = "const " if text.startswith("const ") else ""
        stars = strip_const(text).count("*")
        text = normalize_type(prefix + table.spelling(core, under) + " *" * stars)
    return text


def _hides_pointer(table: type_table.TypeTable, name: str) -> bool:
    """Whether typedef ``name`` is (an alias chain ending in) a spelling of ``node_t *``."""
    for _ in range(8):
        under = table.typedefs.get(name, "")
        if under in table.typedefs:
            name = under
            continue
        return "*" in under and "(*)" not in under and not table.names_handle(name, under)
    return False


@_cached
def canonical_base(ctype: str) -> str:
    """The base name with value typedefs followed to the standard type behind them.

    ``lib_u8`` -> ``unsigned char`` when the Types section says ``typedef unsigned char lib_u8;``;
    names the table does not know stay as they are.
    """
    table = type_table.active()
    base = base_name(ctype)
    for _ in range(8):
        canon = table.canonical.get(base)
        if not canon or "*" in canon or "(" in canon or canon.startswith(("struct ", "union ")):
            break
        base = strip_const(canon)
    return base


def is_enum_typedef(base: str) -> bool:
    """A typedef the Types section gives as an enum (or lists the members of)."""
    table = type_table.active()
    return table.canonical.get(base, "").startswith("enum ") or base in table.enum_members


@_cached
def strip_const(ctype: str) -> str:
    """The type without ``const``/``volatile``/``struct`` words and trailing ``*const``."""
    words = [w for w in normalize_type(ctype).replace("*const", "*").split() if w not in cdecl.QUALIFIERS]
    return normalize_type(" ".join(words))


@_cached
def is_function_pointer(ctype: str) -> bool:
    """A function pointer spelled out (``int (*)(void *)``) or a handler-like typedef."""
    if "(*)" in ctype.replace(" ", ""):
        return True
    base = strip_const(ctype).replace("*", "").strip()
    known = type_table.active().canonical.get(base)
    if known is not None:
        return "(*)" in known
    if re.search(r"(_handler|_callback|_cb|_fn|_func|func|_hook|_proc)(_t)?$", base):
        return True
    # CamelCase handler typedefs are passed by value; a pointer to a `...Handler` is a struct.
    return "*" not in ctype and bool(re.search(r"(Handler|Callback|Func|Proc|Hook)$", base))


@_cached
def pointer_depth(ctype: str) -> int:
    """How many ``*`` the type has after expanding pointer typedefs."""
    if is_function_pointer(ctype) and ("(*)" in ctype or "*" not in ctype):
        return 0
    return resolve(ctype).count("*")


@_cached
def is_pointer(ctype: str) -> bool:
    """Whether the type is a data pointer (function pointers excluded)."""
    return pointer_depth(ctype) > 0 and not is_function_pointer(ctype)


@_cached
def pointee(ctype: str) -> str:
    """The type one ``*`` down, qualifiers kept (``const char *`` -> ``const char``)."""
    text = resolve(ctype).replace("*const", "*").rstrip()
    return normalize_type(text[: text.rindex("*")]) if "*" in text else text


@_cached
def base_name(ctype: str) -> str:
    """The named type under all pointers and qualifiers (``const node_t *const`` -> ``node_t``)."""
    return strip_const(resolve(ctype)).replace("*", "").strip()


@_cached
def is_const_target(ctype: str) -> bool:
    """Whether what the pointer points to is const."""
    return pointee(ctype).startswith("const ") or " const" in pointee(ctype)


@_cached
def is_string(ctype: str) -> bool:
    """``char *`` or ``const char *`` (one level)."""
    base = base_name(ctype)
    if pointer_depth(ctype) != 1:
        return False
    # A typedef of char, or of unsigned char named like a character, holds text.
    canon = canonical_base(ctype)
    return base == "char" or canon == "char" or (
        base != canon and canon in ("unsigned char", "signed char")
        and bool(re.search(r"char", base, re.I)))


@_cached
def is_bytes(ctype: str) -> bool:
    """A one-level pointer to bytes or to void (``const lib_u8 *``, ``void *``, ``lib_char *``)."""
    base = base_name(ctype)
    return pointer_depth(ctype) == 1 and (
        base in cdecl.BYTE_TYPES or canonical_base(ctype) in cdecl.BYTE_TYPES
        or bool(re.search(r"_?[Cc]har(_t)?$", base)))


@_cached
def is_bool(ctype: str) -> bool:
    """A boolean typedef used by value."""
    base = base_name(ctype)
    if is_pointer(ctype):
        return False
    return base in cdecl.BOOL_TYPES or (canonical_base(ctype) in cdecl.INT_TYPES | cdecl.BOOL_TYPES
                                  and bool(re.search(r"bool", base, re.I)))


@_cached
def is_float(ctype: str) -> bool:
    """``float``/``double`` by value."""
    return not is_pointer(ctype) and base_name(ctype) in cdecl.FLOAT_TYPES


@_cached
def is_integer(ctype: str) -> bool:
    """A known integer type by value (booleans included)."""
    base = canonical_base(ctype)
    return not is_pointer(ctype) and (base in cdecl.INT_TYPES or base in cdecl.BOOL_TYPES)


@_cached
def is_enum_like(ctype: str) -> bool:
    """An enum, or an unknown named type used by value that reads like one (``lib_mode_t``)."""
    base = base_name(ctype)
    scalar = canonical_base(ctype) in cdecl.INT_TYPES | cdecl.FLOAT_TYPES
    if is_pointer(ctype) or is_function_pointer(ctype) or scalar:
        return False
    return ctype.strip().startswith("enum ") or is_enum_typedef(base) or bool(
        re.search(
            r"(style|encoding|break|type|kind|mode|flag|level|error|status|format|"
            r"option|strategy|order|policy)s?(_t|_e)?$",
            base,
            re.I,
        )
    )


@_cached
def is_void(ctype: str) -> bool:
    """``void`` (not ``void *``)."""
    return strip_const(ctype) == "void"


@_cached
def is_file(ctype: str) -> bool:
    """``FILE *``."""
    return pointer_depth(ctype) == 1 and base_name(ctype) == "FILE"


def is_length(param: Param) -> bool:
    """An integer parameter whose name says it is a size or length."""
    return is_integer(param.type) and not is_bool(param.type) and bool(cdecl.LENGTH_NAME.search(param.name))


@_cached
def is_struct_pointer(ctype: str) -> bool:
    """A pointer to a named non-scalar type (``node_t *``, ``struct ctx *``, ``lib_handle_p``)."""
    base = base_name(ctype)
    scalars = cdecl.BYTE_TYPES | cdecl.INT_TYPES | cdecl.FLOAT_TYPES | cdecl.BOOL_TYPES | {"FILE"}
    return (
        pointer_depth(ctype) == 1
        and not is_function_pointer(ctype)
        and base not in scalars
        and canonical_base(ctype) not in scalars
    )


def is_opaque(type_name: str) -> bool:
    """Whether the Types section says the record is incomplete (only pointers to it exist)."""
    record = type_table.active().record(base_name(type_name))
    return record is not None and record.opaque


@_cached
def struct_type(ctype: str) -> str | None:
    """The struct's type name for a struct pointer, else None."""
    return base_name(ctype) if is_struct_pointer(ctype) else None


def is_out_param(param: Param) -> bool:
    """A non-const pointer to a scalar, or a pointer-to-pointer, that the callee writes."""
    if is_function_pointer(param.type) or not is_pointer(param.type) or is_const_target(param.type):
        return pointer_depth(param.type) == 2 and not is_function_pointer(param.type)
    inner = pointee(param.type)
    return (
        pointer_depth(param.type) == 2
        or (is_integer(inner) and not is_bytes(param.type))
        or (is_float(inner))
    )


@_cached
def integer_bits(ctype: str) -> int:
    """An estimate of an integer type's width in bits (for clamping lengths)."""
    base = canonical_base(ctype)
    if base in ("char", "signed char", "unsigned char", "int8_t", "uint8_t"):
        return 8
    if "short" in base or base.endswith("16_t") or base == "u16":
        return 16
    if "long" in base or base.endswith("64_t") or base in ("size_t", "ssize_t"):
        return 64
    return 32


@_cached
def is_unsigned(ctype: str) -> bool:
    """Whether an integer type is unsigned (by spelling)."""
    base = canonical_base(ctype)
    return base.startswith(("unsigned", "uint", "size_t")) or base in ("u8", "u16", "u32", "u64")


def blob_fields(type_name: str) -> tuple[str, str] | None:
    """``(pointer field, length field)`` of a struct that is just a byte buffer and its length.

    ``struct { const uint8_t *bytes; size_t size; }``: passing one is passing data.
    """
    rec = type_table.active().record(type_name)
    if rec is None or rec.opaque or len(rec.fields) != 2:
        return None
    (n1, t1), (n2, t2) = rec.fields
    for (pn, pt), (ln, lt) in (((n1, t1), (n2, t2)), ((n2, t2), (n1, t1))):
        data = is_pointer(pt) and (is_bytes(pt) or is_string(pt) or strip_const(pt) == "void *")
        # `{ x_id id; void *options; }` is a tagged pointer: the integer must be a length
        if data and is_integer(lt) and not is_pointer(lt) and is_length(Param(ln, lt)):
            return pn, ln
    return None
