"""Does the fuzz input reach the library? A conservative taint check on a harness's source.

A harness can build, call the target and run for its budget while no library call ever sees
the fuzz input (a decoder context created and decoded without being handed the buffer): the
fuzzer then explores nothing. :func:`input_reaches_api` follows ``data``/``size`` through
assignments, declarations, initializers, ``memcpy``-style copies and calls (a call's result and
its pointer arguments are tainted when any argument is) and answers whether some call of a
library function takes a tainted argument. It errs towards "reaches": it is a gate against the
obvious miss, not a proof.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from fuzzkit.api import FunctionDecl
from fuzzkit.vocabulary import c_words

INPUT_PROBLEM = "no library call receives the fuzz input"
# The harness returns before any call on the empty input (``if (size == 0) return 0;``).
EMPTY_GUARD = re.compile(r"\bif\s*\(\s*(size\s*==\s*0|size\s*<\s*[1-9]\d*|!\s*size)\s*\)\s*return\b")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_STRING = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'')
_KEYWORDS = c_words("statement")
_TYPE_WORDS = c_words("qualifier", "sign", "type", "tag") | {"size_t", "uint8_t", "int8_t"}


_DEFINITION = re.compile(r"^(?!(?:if|for|while|switch|return|do|else)\b)[\w\s\*]+?\b\w+\s*\([^=]*\)$", re.S)


def _statements(code: str) -> list[str]:
    """Statements and conditions, without function headers, comments, strings, preprocessor lines."""
    text = _STRING.sub('""', _COMMENT.sub(" ", code))
    text = re.sub(r"^\s*#.*$", " ", text, flags=re.M)
    text = re.sub(r"=\s*\{([^{}]*)\}", r"= (\1)", text)  # braced initializers are expressions
    parts = re.split(r"([;{}])", text)
    out = []
    for stmt, end in zip(parts[::2], [*parts[1::2], ""], strict=False):
        stmt = stmt.strip()
        if stmt and not (end == "{" and _DEFINITION.match(stmt)):
            out.append(stmt)
    return out


def _calls(stmt: str) -> list[tuple[str, str]]:
    """``(function, argument text)`` of each call in a statement, innermost included."""
    out = []
    for match in re.finditer(r"\b([A-Za-z_]\w*)\s*\(", stmt):
        name = match.group(1)
        if name in _KEYWORDS:
            continue
        depth, start = 1, match.end()
        pos = start
        while pos < len(stmt) and depth:
            depth += {"(": 1, ")": -1}.get(stmt[pos], 0)
            pos += 1
        out.append((name, stmt[start:pos - 1]))
    return out


_OPTION_TAKE = re.compile(r"\blf_take_\w+\s*\([^()]*\)")


def _payload_refs(expr: str, tainted: set[str]) -> set[str]:
    """Tainted names an expression uses as the payload, not as an option byte or a length.

    ``data[0]``, ``*data``, ``size`` and the harness helpers that take option values from the
    input (``lf_take_int(&in, 0, 9)``) carry options; anything else carries the input.
    """
    names = "|".join(map(re.escape, tainted)) or "_"
    expr = _OPTION_TAKE.sub("0", expr)
    expr = re.sub(rf"\b(?:{names})\s*\[[^\]]*\]", "0", expr)
    expr = re.sub(rf"\*\s*\(?\s*(?:\([^()]*\)\s*)?(?:{names})\b(?!\s*[+\-])", "0", expr)
    return set(_IDENT.findall(expr)) & tainted


def _arguments(args: str) -> list[str]:
    """A call's argument texts, split at its own commas (not those of nested calls)."""
    out, depth, start = [], 0, 0
    for pos, ch in enumerate(args):
        depth += {"(": 1, ")": -1, "[": 1, "]": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            out.append(args[start:pos])
            start = pos + 1
    return [*out, args[start:]]


def _bare_name(arg: str) -> str:
    """The variable an argument passes as it is (under casts), else ""."""
    arg = arg.strip()
    while (cast := re.match(r"^\([\w\s\*]+\)\s*", arg)) and cast.end() < len(arg):
        arg = arg[cast.end():].strip()
    return arg if re.fullmatch(r"[A-Za-z_]\w*", arg) and arg not in _TYPE_WORDS else ""


def tainted_names(code: str, sources: Iterable[str] = ("data",)) -> set[str]:
    """Every variable that may hold, point at or carry (a descriptor, a struct) the fuzz input."""
    tainted = set(sources)
    statements = _statements(code)
    # Arrays and pointers declared in the harness (`char path[512]`, `uint8_t *buf = NULL`).
    pointers = set(re.findall(r"\b([A-Za-z_]\w*)\s*\[[^\]]*\]\s*[=;,]", code))
    pointers |= set(re.findall(r"\*\s*([A-Za-z_]\w*)\s*[=;,)]", code))
    for _ in range(6):
        before = len(tainted)
        for stmt in statements:
            if not set(_IDENT.findall(stmt)) & tainted:
                continue
            # `T x = <input>`, `x = <input>`, `s.field = <input>`: the variable is tainted.
            assign = re.match(r"^(?P<lhs>[^=(]*?)(?<![=!<>])(?:[+\-*/|&^]?=)(?!=)(?P<rhs>.*)$", stmt, re.S)
            if assign and _payload_refs(assign["rhs"], tainted):
                lhs = [w for w in _IDENT.findall(assign["lhs"]) if w not in _TYPE_WORDS]
                if lhs:
                    member = re.search(r"(\.|->)", assign["lhs"])
                    tainted.add(lhs[0] if member else lhs[-1])
            for _name, args in _calls(stmt):
                if _payload_refs(args, tainted):
                    # A call given the input may keep it in, or copy it to, what it was handed.
                    # Its first argument, what it is handed by address, and the arrays and
                    # pointers it is handed by name (`write_tmpfile(data, size, path, n)`
                    # leaves the input behind `path`).
                    handed = {m.group(1) for m in re.finditer(r"&\s*([A-Za-z_]\w*)", args)}
                    handed |= set(_IDENT.findall(args.split(",")[0]))
                    handed |= {a for a in map(_bare_name, _arguments(args)) if a in pointers}
                    tainted |= handed - _TYPE_WORDS
        if len(tainted) == before:
            break
    return tainted


def input_reaches_api(code: str, api_names: Iterable[str]) -> bool:
    """Whether some call of a library function in ``code`` takes an argument made from the input."""
    api = set(api_names)
    tainted = tainted_names(code)
    for stmt in _statements(code):
        for name, args in _calls(stmt):
            if name in api and _payload_refs(args, tainted):
                return True
    return False


_DATA_TYPE = re.compile(r"\b(char|uint8_t|int8_t|void|byte|u8)\b", re.I)


def _base(ctype: str) -> str:
    return " ".join(w for w in ctype.replace("*", " ").split() if w not in c_words("qualifier", "tag"))


def _takes_data(decl: FunctionDecl) -> bool:
    """A ``const`` byte/char/void pointer parameter: input (a non-const one is an output)."""
    return any("*" in p.type and "const" in p.type.split("*")[0] and _DATA_TYPE.search(_base(p.type))
               for p in decl.params)


def feeder_exists(target: FunctionDecl, api: Iterable[FunctionDecl]) -> bool:
    """Whether the input should reach the target's object through another function.

    True when the target takes no buffer itself but its first object parameter's type, or the
    type of the object it makes (``ctx_new2(alloc, flags)``), has a function that takes one
    (``set_buffer(ctx, buf, len)``): the case where forgetting that call leaves the fuzzer
    with nothing to explore.
    """
    if _takes_data(target):
        return False
    api = list(api)
    return bool(feeders_of(target, api) or feeders_of(target, api, made_type(target)))


def made_type(target: FunctionDecl) -> str:
    """The object type a function returns a pointer to (``codec_ctx *codec_new(int)``), else ""."""
    ret = target.return_type
    return _base(ret) if "*" in ret and not _DATA_TYPE.search(_base(ret)) else ""


def feeders_of(target: FunctionDecl, api: Iterable[FunctionDecl],
               obj: str | None = None) -> list[FunctionDecl]:
    """Functions shaped ``f(T *obj, const bytes *data[, size])``.

    ``T`` is ``obj`` where given, else the type of the target's first object parameter.
    """
    if obj is None:
        obj = next((_base(p.type) for p in target.params
                    if "*" in p.type and not _DATA_TYPE.search(_base(p.type))), None)
    if not obj:
        return []
    return [f for f in api if f.name != target.name and 2 <= len(f.params) <= 3
            and _base(f.params[0].type) == obj and "*" in f.params[0].type and _takes_data(f)
            and all("*" not in p.type for p in f.params[2:])]
