"""Parsing normalized C prototypes, and the standard C type names they are read with.

The prototypes come from :meth:`fuzzkit.api.FunctionDecl.prototype` (clang spellings such as
``acme_node * acme_parse(const char * value);``), but hand-written spellings parse too. What
a type means for a harness is :mod:`agents.offline.ckinds`.
"""

from __future__ import annotations

import re
from functools import lru_cache

from fuzzkit.api import FunctionDecl, Param
from fuzzkit.vocabulary import c_words

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
LENGTH_NAME = re.compile(r"(len|size|length|count|nbytes|bytes|byte$|sz|capacity|^n$|^num$)", re.IGNORECASE)
QUALIFIERS = c_words("qualifier", "tag") | {"__restrict", "register"}
_KEYWORDS = QUALIFIERS | c_words("type", "sign")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_EXPORT_WRAPPER = re.compile(r"^[A-Z_][A-Z0-9_]*\s*\((?P<inner>[^()]*)\)\s*")
_STORAGE = re.compile(r"\b(extern|static|inline|__inline|__inline__|__attribute__\s*\(\(.*?\)\))\b\s*")


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
    array = re.match(r"^(?P<rest>.*?)\s*\[(?P<bound>[^\]]*)\]$", text)
    if array:
        text = array["rest"]
    tokens = _IDENT.findall(text)
    name = ""
    last = re.search(r"([A-Za-z_]\w*)\s*$", text)
    if last and len(tokens) >= 2 and last.group(1) not in _KEYWORDS:
        before = text[: last.start()].strip()
        prev = _IDENT.findall(before)
        # `struct foo` and `enum bar` end in the tag, not in a parameter name.
        if before and not (prev and prev[-1] in c_words("tag") and before[-1] != "*"):
            name, text = last.group(1), before
    if array and array["bound"].strip().isdigit() and "[" not in text:
        # `const unsigned char input[16]`: a pointer that reads (or writes) that many, spelled as
        # clang spells it; the bound is what keeps a short input from being read past its end
        return Param(name=name or f"arg{index}", type=f"{normalize_type(text)}[{array['bound'].strip()}]")
    if array:  # an array parameter without a plain bound is a pointer
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
