"""Small text helpers the usage readers share: tokens back into C, constant arguments, call sites."""

from __future__ import annotations

import re
from collections.abc import Sequence

from fuzzkit.usage_models import Arg, CallSite

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
