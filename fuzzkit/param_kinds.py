"""What a function's parameters hold, for choosing fuzz targets (:mod:`fuzzkit.select_functions`).

A function is a ``buffer`` target when it takes data with a length (or a stream struct the
caller drives), a ``string`` target when it takes text, an ``object`` target when it works on a
handle; types are judged as spelled and by their canonical spelling (typedefs resolved).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping

from fuzzkit.api import FunctionDecl, Param

INPUT_NAMES = re.compile(r"(path|filename|fname|file$|^fd$|^mode$|^dir|^fmt$|^format$|version)", re.I)
_LENGTH_NAMES = re.compile(
    r"(^|_)(len|length|size|sz|n|count|nbytes|bytes)$|(Len|Length|Size|Bytes?)$|len$", re.I
)
_SIZE_TYPE = re.compile(r"^(const )?(\w*size_t|\w*_size)$")
INTEGER = re.compile(
    r"^(const )?(size_t|ssize_t|int|unsigned|unsigned int|long|unsigned long|long long|"
    r"unsigned long long|u?int\d+_t)$"
)
_DATA = re.compile(r"^const (char|unsigned char|signed char|uint8_t|u_char|void|int8_t|\w*char\w*) \*$")
_STRING = re.compile(r"^const (unsigned |signed )?char \*$")


def spellings(param: Param, canonical: Mapping[str, str]) -> tuple[str, str]:
    """The parameter's type as spelled and with typedefs resolved (``uint8_t`` -> ``unsigned char``)."""
    return param.type, canonical.get(param.type, param.type)


def is_type(pattern: re.Pattern[str], param: Param, canonical: Mapping[str, str]) -> bool:
    """Whether the parameter's type, as spelled or canonical, matches ``pattern``."""
    return any(pattern.match(t) for t in spellings(param, canonical))


def archetype(decl: FunctionDecl, canonical: Mapping[str, str] | None = None,
              streams: Collection[str] = ()) -> str:
    """``buffer`` (input data + size), ``string``, ``object`` (takes a struct pointer) or ``other``.

    Args:
        decl: The function.
        canonical: Type spellings mapped to their canonical types
            (:func:`fuzzkit.headers.canonical_types`), so a library's own byte and length
            typedefs count as bytes and lengths.
        streams: Struct names the caller drives as a stream (input cursor fields,
            :func:`fuzzkit.header_facts.stream_types`): passing one is passing data.
    """
    canon = canonical or {}
    params = decl.params
    if params and "*" in canon.get(params[0].type, params[0].type) and (
        re.sub(r"^(const\s+)?(struct\s+)?|\s*\*.*$", "", canon.get(params[0].type, params[0].type)) in streams
        or re.sub(r"^(const\s+)?(struct\s+)?|\s*\*.*$", "", params[0].type) in streams
    ):
        return "buffer"
    for i, param in enumerate(params):
        if not is_type(_DATA, param, canon) or INPUT_NAMES.search(param.name):
            continue
        after = params[i + 1] if i + 1 < len(params) else None
        if (after and is_type(INTEGER, after, canon) and _is_length(after)) or any(
            is_type(INTEGER, p, canon) and _LENGTH_NAMES.search(p.name) for p in params
        ):
            return "buffer"
    if any(_is_string(p, canon) and not INPUT_NAMES.search(p.name) for p in params):
        return "string"
    if (
        params
        and params[0].type.endswith("*")
        and not re.search(r"\b(char|void)\b", spellings(params[0], canon)[1])
    ):
        return "object"
    if params and not is_type(INTEGER, params[0], canon) and "*" not in params[0].type:
        return "object"  # an opaque handle typedef (``acme_stream_p``, ``acme_file``)
    return "other"


def _is_string(param: Param, canonical: Mapping[str, str]) -> bool:
    """``const char *``, or a library's own character typedef (``const xchar *``) of bytes."""
    spelled, canon = spellings(param, canonical)
    return spelled == "const char *" or (spelled != canon and bool(_STRING.match(canon)))


def names_other_input(param: Param, canonical: Mapping[str, str] | None = None) -> bool:
    """Whether the name says the parameter is a path, file, descriptor or format string, not the data.

    ``fmt``, ``format`` and ``mode`` say so only of text (``const char *fmt``, ``fopen``'s
    ``mode``): an integer of that name picks a pixel format or an enum value
    (``decode_image(ctx, out, len, int fmt, int flags)`` is a decoder, not a printf).
    """
    if not INPUT_NAMES.search(param.name):
        return False
    text = _char_pointer(param, canonical or {})
    return text or not re.fullmatch(r"fmt|format|mode", param.name, re.I)


def _char_pointer(param: Param, canonical: Mapping[str, str]) -> bool:
    """``char *`` or ``const char *`` (a typedef of one included)."""
    canon = spellings(param, canonical)[1]
    return bool(re.fullmatch(r"(const )?(unsigned |signed )?char \*", canon) or _is_string(param, canonical))


def _is_length(param: Param) -> bool:
    """An integer right after a data pointer is its length unless named otherwise (``nArg``)."""
    return not param.name or bool(_LENGTH_NAMES.search(param.name) or _SIZE_TYPE.match(param.type))


_SCALAR = re.compile(r"^(unsigned |signed )?(char|short|int|long|long long|void|float|double|_Bool)$")


def object_type(ctype: str, canonical: Mapping[str, str]) -> str:
    """The object type behind ``ctype`` (const and pointers dropped), or ``""`` for plain data."""
    text = re.sub(r"^const |\s*\*+\s*(const)?$", "", canonical.get(ctype, ctype)).strip()
    return "" if _SCALAR.match(text) or text.startswith("enum ") else text
