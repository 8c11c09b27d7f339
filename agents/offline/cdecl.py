"""Parsing normalized C prototypes and classifying C types by what a harness must do with them.

The prototypes come from :meth:`fuzzkit.api.FunctionDecl.prototype` (clang spellings such as
``acme_node * acme_parse(const char * value);``), but hand-written spellings parse too.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from functools import lru_cache
from typing import TypeVar

from agents.offline import type_table
from fuzzkit.api import FunctionDecl, Param

T = TypeVar("T")

# Standard C and POSIX names only: a library's own typedefs come from the prompt's `## Types`
# section (agents.offline.type_table), read through their canonical types.
BYTE_TYPES = {"char", "signed char", "unsigned char", "uint8_t", "int8_t", "void"}
BOOL_TYPES = {"bool", "_Bool"}
FLOAT_TYPES = {"float", "double", "long double"}
INT_TYPES = {
    "char", "signed char", "unsigned char", "short", "unsigned short", "int", "unsigned",
    "unsigned int", "signed", "signed int", "long", "unsigned long", "long long",
    "unsigned long long", "long int", "unsigned long int", "short int", "long long int",
    "short unsigned int", "long unsigned int", "long long unsigned int",
    "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "int64_t", "uint64_t",
    "size_t", "ssize_t", "off_t", "ptrdiff_t", "intptr_t", "uintptr_t", "wchar_t",
    "socklen_t", "time_t", "mode_t", "pid_t", "int_fast32_t", "uint_fast32_t",
}  # fmt: skip
LENGTH_NAME = re.compile(r"(len|size|length|count|nbytes|bytes|sz|capacity|^n$|^num$)", re.IGNORECASE)
_QUALIFIERS = {"const", "volatile", "restrict", "__restrict", "struct", "enum", "union", "register"}
_KEYWORDS = _QUALIFIERS | {
    "unsigned", "signed", "int", "char", "short", "long", "float", "double", "void", "_Bool",
}  # fmt: skip
_IDENT = re.compile(r"[A-Za-z_]\w*")
_EXPORT_WRAPPER = re.compile(r"^[A-Z_][A-Z0-9_]*\s*\((?P<inner>[^()]*)\)\s*")
_STORAGE = re.compile(r"\b(extern|static|inline|__inline|__inline__|__attribute__\s*\(\(.*?\)\))\b\s*")


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


@lru_cache(maxsize=8192)
def normalize_type(spelling: str) -> str:
    """Spell a type the way clang prints it: single spaces, one space before each ``*``."""
    text = re.sub(r"\s+", " ", spelling.replace("*", " * ")).strip()
    return re.sub(r"\* (?=\*)", "*", text).replace("* const", "*const")


def split_top(text: str, sep: str = ",") -> list[str]:
    """``text`` split at ``sep`` outside parentheses, brackets and braces; parts stripped.

    The one splitter for argument and parameter lists: an empty text gives ``[""]``.
    """
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts]


def parse_param(text: str, index: int = 0) -> Param | None:
    """One parameter's text (``const char * value``) as a :class:`Param`; None for ``...``."""
    text = text.strip()
    if not text or text == "..." or text == "void":
        return None
    fnptr = re.match(r"^(?P<ret>.*?)\(\s*\*\s*(?P<name>\w*)\s*\)\s*(?P<args>\(.*\))$", text)
    if fnptr:
        ctype = f"{normalize_type(fnptr['ret'])} (*){fnptr['args']}"
        return Param(name=fnptr["name"] or f"arg{index}", type=ctype)
    array = re.match(r"^(?P<rest>.*?)\s*\[[^\]]*\]$", text)
    if array:
        text = array["rest"]
    tokens = _IDENT.findall(text)
    name = ""
    last = re.search(r"([A-Za-z_]\w*)\s*$", text)
    if last and len(tokens) >= 2 and last.group(1) not in _KEYWORDS:
        before = text[: last.start()].strip()
        prev = _IDENT.findall(before)
        # `struct foo` and `enum bar` end in the tag, not in a parameter name.
        if before and not (prev and prev[-1] in ("struct", "enum", "union") and before[-1] != "*"):
            name, text = last.group(1), before
    if array:  # an array parameter is a pointer
        text += " *"
    return Param(name=name or f"arg{index}", type=normalize_type(text))


def parse_prototype(line: str) -> FunctionDecl:
    """Parse one prototype line such as ``int lib_decode(lib_streamp strm, int flush);``.

    Raises:
        ValueError: The line is not a function prototype; the message quotes it.
    """
    text = re.sub(r"/\*.*?\*/|//.*$", " ", line.strip()).strip().rstrip(";").strip()
    text = _STORAGE.sub("", text).strip()
    wrapped = _EXPORT_WRAPPER.match(text)
    if wrapped:
        text = wrapped["inner"] + " " + text[wrapped.end() :]
    if not text.endswith(")") or "(" not in text:
        raise ValueError(f"not a C function prototype: {line.strip()!r} (expected `type name(args);`)")
    depth, start = 0, -1
    for pos in range(len(text) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(text[pos], 0)
        if depth == 0:
            start = pos
            break
    head, args = text[:start].strip(), text[start + 1 : -1]
    match = re.search(r"([A-Za-z_]\w*)\s*$", head)
    if not match or match.group(1) in _KEYWORDS:
        raise ValueError(f"no function name in prototype {line.strip()!r}")
    ret = normalize_type(head[: match.start()]) or "int"
    params = []
    for i, part in enumerate(split_top(args)):
        param = parse_param(part, i)
        if param is not None:
            params.append(param)
    return FunctionDecl(name=match.group(1), return_type=ret, params=tuple(params))


def parse_prototypes(text: str) -> list[FunctionDecl]:
    """Every prototype in ``text`` (one per line or ``;``-separated); other lines are skipped."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.DOTALL)
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("#")]
    decls, seen = [], set()
    for chunk in " ".join(lines).split(";"):
        chunk = chunk.strip().lstrip("-*• ").strip()
        if "(" not in chunk or chunk.startswith(("typedef", "return", "{", "}")) or "=" in chunk:
            continue
        try:
            decl = parse_prototype(chunk + ";")
        except ValueError:
            continue
        if decl.name not in seen:
            seen.add(decl.name)
            decls.append(decl)
    return decls


# ----- type classification -------------------------------------------------------------------


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
        # `typedef struct s *handle_t` names an opaque handle: it stays the library's name for
        # it; `typedef node_t *node_p` and `typedef void *ptr_t` are only spellings.
        elif "*" not in under or "(*)" in under or re.match(r"(const\s+)?(struct|union)\b", under):
            break
        prefix = "const " if text.startswith("const ") else ""
        stars = strip_const(text).count("*")
        text = normalize_type(prefix + under + " *" * stars)
    return text


def _hides_pointer(table: type_table.TypeTable, name: str) -> bool:
    """Whether typedef ``name`` is (an alias chain ending in) a spelling of ``node_t *``."""
    for _ in range(8):
        under = table.typedefs.get(name, "")
        if under in table.typedefs:
            name = under
            continue
        return "*" in under and "(*)" not in under and not re.match(r"(const\s+)?(struct|union)\b", under)
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


def _is_enum_typedef(base: str) -> bool:
    canon = type_table.active().canonical.get(base, "")
    return canon.startswith("enum ")


@_cached
def strip_const(ctype: str) -> str:
    """The type without ``const``/``volatile``/``struct`` words and trailing ``*const``."""
    words = [w for w in normalize_type(ctype).replace("*const", "*").split() if w not in _QUALIFIERS]
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
        base in BYTE_TYPES or canonical_base(ctype) in BYTE_TYPES
        or bool(re.search(r"_?[Cc]har(_t)?$", base)))


@_cached
def is_bool(ctype: str) -> bool:
    """A boolean typedef used by value."""
    base = base_name(ctype)
    if is_pointer(ctype):
        return False
    return base in BOOL_TYPES or (canonical_base(ctype) in INT_TYPES | BOOL_TYPES
                                  and bool(re.search(r"bool", base, re.I)))


@_cached
def is_float(ctype: str) -> bool:
    """``float``/``double`` by value."""
    return not is_pointer(ctype) and base_name(ctype) in FLOAT_TYPES


@_cached
def is_integer(ctype: str) -> bool:
    """A known integer type by value (booleans included)."""
    base = canonical_base(ctype)
    return not is_pointer(ctype) and (base in INT_TYPES or base in BOOL_TYPES)


@_cached
def is_enum_like(ctype: str) -> bool:
    """An enum, or an unknown named type used by value that reads like one (``lib_mode_t``)."""
    base = base_name(ctype)
    if is_pointer(ctype) or is_function_pointer(ctype) or canonical_base(ctype) in INT_TYPES | FLOAT_TYPES:
        return False
    return ctype.strip().startswith("enum ") or _is_enum_typedef(base) or bool(
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
    return is_integer(param.type) and not is_bool(param.type) and bool(LENGTH_NAME.search(param.name))


@_cached
def is_struct_pointer(ctype: str) -> bool:
    """A pointer to a named non-scalar type (``node_t *``, ``struct ctx *``, ``lib_handle_p``)."""
    base = base_name(ctype)
    scalars = BYTE_TYPES | INT_TYPES | FLOAT_TYPES | BOOL_TYPES | {"FILE"}
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
        if data and is_integer(lt) and not is_pointer(lt):
            return pn, ln
    return None
