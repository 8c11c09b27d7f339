"""Small text helpers the usage readers share: tokens back into C, constant arguments, call sites."""

from __future__ import annotations

import re
from collections.abc import Sequence

from fuzzkit.usage_models import Arg, CallSite, FieldAssignment, ValueKind

MAX_SOURCE = 80  # lines of a usage function kept for snippets
_CONSTANT_TOKEN = re.compile(
    r"^(?:[A-Z_][A-Z0-9_]*|0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*|[|+\-()<>~&*]|<<|>>|sizeof)$"
)


# Calls of the C library a usage sequence keeps, by the name it records them under: the release
# of a block, and the setjmp that catches a library's longjmp on error (a macro of _setjmp).
KEPT_CALLS = {"free": "free", "setjmp": "setjmp", "_setjmp": "setjmp", "sigsetjmp": "setjmp",
              "__sigsetjmp": "setjmp"}


def constant_arg(tokens: Sequence[str], known: set[str]) -> list[str] | None:
    """The constants an argument combines, if it is made of constants only (else None)."""
    names: list[str] = []
    for tok in tokens:
        if tok in known:
            names.append(tok)
        elif not _CONSTANT_TOKEN.match(tok):
            return None
        elif re.match(r"^[A-Z_][A-Z0-9_]*$", tok):
            names.append(tok)
    return names


_UNARY_AFTER = frozenset(
    {"(", ",", "=", "|", "+", "-", "return", "[", "!", "?", ":", "&&", "||", "==", "!=", "<", ">", "{"}
)


def join_tokens(tokens: Sequence[str]) -> str:
    """C tokens back into text, spaced the way people write it (``f(&x, A | B)``)."""
    text, seen = "", list[str]()
    for tok in tokens:
        if seen:
            prev, before = seen[-1], (seen[-2] if len(seen) > 1 else "")
            unary = prev in ("&", "*", "-", "!", "~") and (before == "" or before in _UNARY_AFTER)
            glue = (
                tok in (")", "]", ",", ";", ".", "->", "[")
                or prev in ("(", "[", ".", "->")
                or (tok == "(" and bool(re.match(r"[A-Za-z_]\w*$", prev)) and prev != "return")
                or unary
            )
            if not glue:
                text += " "
        text += tok
        seen.append(tok)
    return text


def cut_source(text: str) -> str:
    """A function's text, cut at :data:`MAX_SOURCE` lines."""
    lines = text.splitlines()
    if len(lines) <= MAX_SOURCE:
        return text
    return "\n".join(lines[:MAX_SOURCE] + ["    /* ... */"])


def call_site(
    function: str, args: list[Arg], result: str = "", check: str = "", line: int = 0, loop: bool = False
) -> CallSite:
    """A :class:`CallSite`, the variable behind ``result`` filled in."""
    base = re.match(r"^\(*\s*\**\s*([A-Za-z_]\w*)", result)
    return CallSite(
        function=function,
        args=args,
        result=result,
        result_var=base.group(1) if base else "",
        check=check,
        line=line,
        loop=loop and bool(check),
    )


def split_arguments(tokens: Sequence[str]) -> list[list[str]]:
    """The tokens of each argument of a call, from the ones after its ``(``; stops at its ``)``."""
    parts: list[list[str]] = [[]]
    depth = 0
    for tok in tokens:
        if tok in "([{":
            depth += 1
        elif tok in ")]}":
            if depth == 0:
                break
            depth -= 1
        if tok == "," and depth == 0:
            parts.append([])
        else:
            parts[-1].append(tok)
    return [p for p in parts if p]


_NAME = re.compile(r"^[A-Za-z_]\w*$")
_LITERAL = re.compile(r"^(?:0[xX][0-9a-fA-F]+|\d[\w.]*|true|false|[-+~()<>|&*]|<<|>>|'(?:\\.|[^'])*')$")


def value_kind(tokens: Sequence[str], public: set[str]) -> ValueKind:
    """What an assigned value is: a constant of the headers (``public``), a literal, or other."""
    if len(tokens) == 1 and tokens[0].startswith('"'):
        return "literal"
    names = constant_arg(tokens, public)
    if names is not None and names and all(n in public for n in names):
        return "constant"
    numeric = any(t[0].isdigit() or t[0] == "'" for t in tokens)
    if tokens and numeric and all(_LITERAL.match(t) for t in tokens):
        return "literal"
    return "other"


def field_assignment(tokens: Sequence[str], public: set[str], line: int = 0) -> FieldAssignment | None:
    """``var.field = value`` (``var->a.b = value``) from a statement's tokens, else None."""
    tokens = list(tokens[:-1] if tokens and tokens[-1] == ";" else tokens)
    if "=" not in tokens:
        return None
    eq = tokens.index("=")
    lhs, rhs = tokens[:eq], tokens[eq + 1 :]
    if len(lhs) < 3 or len(lhs) % 2 == 0 or not rhs or not _NAME.match(lhs[0]) or lhs[1] not in (".", "->"):
        return None
    path = lhs[2::2]
    if any(not _NAME.match(p) for p in path) or any(op != "." for op in lhs[3::2]):
        return None
    return FieldAssignment(var=lhs[0], field=".".join(path), value=join_tokens(rhs),
                           kind=value_kind(rhs, public), line=line)
