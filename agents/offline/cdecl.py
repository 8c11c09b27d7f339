"""Parsing normalized C prototypes and classifying C types by what a harness must do with them.

The prototypes come from :meth:`fuzzkit.api.FunctionDecl.prototype` (clang spellings such as
``cJSON * cJSON_Parse(const char * value);``), but hand-written spellings parse too.
"""

from __future__ import annotations

import re
from functools import lru_cache

from fuzzkit.api import FunctionDecl, Param

# Typedefs that hide a pointer; a prototype alone cannot reveal them.
POINTER_TYPEDEFS = {
    "z_streamp": "z_stream *",
    "gz_headerp": "gz_header *",
    "voidp": "void *",
    "voidpf": "void *",
    "voidpc": "const void *",
    "charf": "char",
}
BYTE_TYPES = {
    "char", "signed char", "unsigned char", "uint8_t", "int8_t", "Bytef", "Byte", "u8",
    "u_char", "uchar", "guchar", "guint8", "gchar", "xmlChar", "yaml_char_t", "png_byte",
    "JOCTET", "void", "charf", "uInt8", "UInt8", "BYTE",
}  # fmt: skip
BOOL_TYPES = {"bool", "_Bool", "cJSON_bool", "gboolean", "BOOL", "Bool", "boolean", "XML_Bool"}
FLOAT_TYPES = {"float", "double", "long double"}
INT_TYPES = {
    "char", "signed char", "unsigned char", "short", "unsigned short", "int", "unsigned",
    "unsigned int", "signed", "signed int", "long", "unsigned long", "long long",
    "unsigned long long", "long int", "unsigned long int", "short int", "long long int",
    "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "int64_t", "uint64_t",
    "size_t", "ssize_t", "off_t", "ptrdiff_t", "intptr_t", "uintptr_t", "uInt", "uLong",
    "uLongf", "uIntf", "z_size_t", "z_off_t", "z_off64_t", "z_crc_t", "Byte", "Bytef", "wchar_t",
    "socklen_t", "time_t", "guint", "gint", "gsize", "gssize", "u16", "u32", "u64", "XML_Size",
    "XML_Index", "mode_t", "pid_t", "int_fast32_t", "uint_fast32_t",
}  # fmt: skip
LENGTH_NAME = re.compile(r"(len|size|length|count|nbytes|bytes|sz|capacity|^n$|^num$)", re.IGNORECASE)
_QUALIFIERS = {"const", "volatile", "restrict", "__restrict", "struct", "enum", "union", "register"}
_KEYWORDS = _QUALIFIERS | {
    "unsigned", "signed", "int", "char", "short", "long", "float", "double", "void", "_Bool",
}  # fmt: skip
_IDENT = re.compile(r"[A-Za-z_]\w*")
_EXPORT_WRAPPER = re.compile(r"^[A-Z_][A-Z0-9_]*\s*\((?P<inner>[^()]*)\)\s*")
_STORAGE = re.compile(
    r"\b(extern|static|inline|__inline|__inline__|ZEXTERN|ZEXPORT|ZEXPORTVA|"
    r"OF|FAR|YAML_DECLARE|__attribute__\s*\(\(.*?\)\))\b\s*"
)


@lru_cache(maxsize=8192)
def normalize_type(spelling: str) -> str:
    """Spell a type the way clang prints it: single spaces, one space before each ``*``."""
    text = re.sub(r"\s+", " ", spelling.replace("*", " * ")).strip()
    return re.sub(r"\* (?=\*)", "*", text).replace("* const", "*const")


def _split_top(text: str, sep: str = ",") -> list[str]:
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
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
    """Parse one prototype line such as ``int inflate(z_streamp strm, int flush);``.

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
    for i, part in enumerate(_split_top(args)):
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


@lru_cache(maxsize=8192)
def resolve(ctype: str) -> str:
    """The type with known pointer-hiding typedefs expanded (``z_streamp`` -> ``z_stream *``)."""
    core = strip_const(ctype)
    if core in POINTER_TYPEDEFS:
        prefix = "const " if ctype.strip().startswith("const ") else ""
        return normalize_type(prefix + POINTER_TYPEDEFS[core])
    return normalize_type(ctype)


@lru_cache(maxsize=8192)
def strip_const(ctype: str) -> str:
    """The type without ``const``/``volatile``/``struct`` words and trailing ``*const``."""
    words = [w for w in normalize_type(ctype).replace("*const", "*").split() if w not in _QUALIFIERS]
    return normalize_type(" ".join(words))


@lru_cache(maxsize=8192)
def is_function_pointer(ctype: str) -> bool:
    """A function pointer spelled out (``int (*)(void *)``) or a handler-like typedef."""
    if "(*)" in ctype.replace(" ", ""):
        return True
    base = strip_const(ctype).replace("*", "").strip()
    if re.search(r"(_handler|_callback|_cb|_fn|_func|func|_hook|_proc)(_t)?$", base):
        return True
    # CamelCase handler typedefs (expat) are passed by value; `xmlSAXHandler *` is a struct.
    return "*" not in ctype and bool(re.search(r"(Handler|Callback|Func|Proc|Hook)$", base))


@lru_cache(maxsize=8192)
def pointer_depth(ctype: str) -> int:
    """How many ``*`` the type has after expanding pointer typedefs."""
    return 0 if is_function_pointer(ctype) and "(*)" in ctype else resolve(ctype).count("*")


@lru_cache(maxsize=8192)
def is_pointer(ctype: str) -> bool:
    """Whether the type is a data pointer (function pointers excluded)."""
    return pointer_depth(ctype) > 0 and not is_function_pointer(ctype)


@lru_cache(maxsize=8192)
def pointee(ctype: str) -> str:
    """The type one ``*`` down, qualifiers kept (``const char *`` -> ``const char``)."""
    text = resolve(ctype).replace("*const", "*").rstrip()
    return normalize_type(text[: text.rindex("*")]) if "*" in text else text


@lru_cache(maxsize=8192)
def base_name(ctype: str) -> str:
    """The named type under all pointers and qualifiers (``const cJSON *const`` -> ``cJSON``)."""
    return strip_const(resolve(ctype)).replace("*", "").strip()


@lru_cache(maxsize=8192)
def is_const_target(ctype: str) -> bool:
    """Whether what the pointer points to is const."""
    return pointee(ctype).startswith("const ") or " const" in pointee(ctype)


@lru_cache(maxsize=8192)
def is_string(ctype: str) -> bool:
    """``char *`` or ``const char *`` (one level)."""
    return pointer_depth(ctype) == 1 and base_name(ctype) in ("char", "gchar", "xmlChar")


@lru_cache(maxsize=8192)
def is_bytes(ctype: str) -> bool:
    """A one-level pointer to bytes or to void (``const Bytef *``, ``void *``, ``XML_Char *``)."""
    base = base_name(ctype)
    return pointer_depth(ctype) == 1 and (base in BYTE_TYPES or bool(re.search(r"_?[Cc]har(_t)?$", base)))


@lru_cache(maxsize=8192)
def is_bool(ctype: str) -> bool:
    """A boolean typedef used by value."""
    return not is_pointer(ctype) and base_name(ctype) in BOOL_TYPES


@lru_cache(maxsize=8192)
def is_float(ctype: str) -> bool:
    """``float``/``double`` by value."""
    return not is_pointer(ctype) and base_name(ctype) in FLOAT_TYPES


@lru_cache(maxsize=8192)
def is_integer(ctype: str) -> bool:
    """A known integer type by value (booleans included)."""
    base = base_name(ctype)
    return not is_pointer(ctype) and (base in INT_TYPES or base in BOOL_TYPES)


@lru_cache(maxsize=8192)
def is_enum_like(ctype: str) -> bool:
    """An unknown named type used by value that reads like an enum (``yaml_encoding_t``)."""
    base = base_name(ctype)
    if is_pointer(ctype) or is_function_pointer(ctype) or base in INT_TYPES | FLOAT_TYPES:
        return False
    return ctype.strip().startswith("enum ") or bool(
        re.search(
            r"(style|encoding|break|type|kind|mode|flag|level|error|status|format|"
            r"option|strategy|order|policy)s?(_t|_e)?$",
            base,
            re.I,
        )
    )


@lru_cache(maxsize=8192)
def is_void(ctype: str) -> bool:
    """``void`` (not ``void *``)."""
    return strip_const(ctype) == "void"


@lru_cache(maxsize=8192)
def is_file(ctype: str) -> bool:
    """``FILE *``."""
    return pointer_depth(ctype) == 1 and base_name(ctype) == "FILE"


def is_length(param: Param) -> bool:
    """An integer parameter whose name says it is a size or length."""
    return is_integer(param.type) and not is_bool(param.type) and bool(LENGTH_NAME.search(param.name))


@lru_cache(maxsize=8192)
def is_struct_pointer(ctype: str) -> bool:
    """A pointer to a named non-scalar type (``cJSON *``, ``z_streamp``, ``yaml_parser_t *``)."""
    base = base_name(ctype)
    return (
        pointer_depth(ctype) == 1
        and not is_function_pointer(ctype)
        and base not in BYTE_TYPES | INT_TYPES | FLOAT_TYPES | BOOL_TYPES | {"FILE"}
    )


@lru_cache(maxsize=8192)
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


@lru_cache(maxsize=8192)
def integer_bits(ctype: str) -> int:
    """An estimate of an integer type's width in bits (for clamping lengths)."""
    base = base_name(ctype)
    if base in ("char", "signed char", "unsigned char", "int8_t", "uint8_t", "Byte", "Bytef"):
        return 8
    if "short" in base or base.endswith("16_t") or base == "u16":
        return 16
    if "long" in base or base.endswith("64_t") or base in ("size_t", "ssize_t", "z_size_t"):
        return 64
    return 32


@lru_cache(maxsize=8192)
def is_unsigned(ctype: str) -> bool:
    """Whether an integer type is unsigned (by spelling)."""
    base = base_name(ctype)
    return base.startswith(("unsigned", "u", "size_t", "z_size_t", "Byte", "gsize", "guint"))
