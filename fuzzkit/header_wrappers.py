"""Calls a library's headers make themselves, in static inline wrappers and function-like macros.

Many C headers export ``x_init_internal(cfg, int version)`` and document only the wrapper
``static inline int x_init(cfg) { return x_init_internal(cfg, X_ABI_VERSION); }`` (or a macro
``#define x_init(cfg) x_init_internal((cfg), X_ABI_VERSION, sizeof(x_cfg))``). The wrapper is
not part of the linkable API, but its fixed arguments are exactly what the library checks:
an ABI version, a struct size, a default preset. :func:`wrapper_call` reads one wrapper's
tokens; the arguments that are not the wrapper's own parameters are the fixed ones, and
:mod:`fuzzkit.header_facts` renders the calls so every agent passes the same values.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

MAX_WRAPPERS = 40
_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|[A-Za-z_]\w*|\.?\d[\w.]*|->|\S')
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


@dataclass(frozen=True)
class Wrapper:
    """``function(args)`` as written inside ``caller(params)``, a header's inline wrapper or macro."""

    function: str
    args: tuple[str, ...]
    caller: str
    params: tuple[str, ...]

    def fixed(self) -> dict[int, str]:
        """Argument index -> expression, for the arguments that use none of the caller's parameters."""
        own = set(self.params)
        return {i: a for i, a in enumerate(self.args) if a and not own & set(_identifiers(a))}


def fixed_arguments(wrappers: Sequence[Wrapper]) -> dict[str, dict[int, str]]:
    """Per API function, the arguments every one of its wrappers fixes to the same expression.

    A value one wrapper lets its caller choose (``x_config_preset(cfg, preset, quality)``
    beside ``x_config_init(cfg)``) is an option, not a check: only what all agree on is fixed.
    """
    out: dict[str, dict[int, str]] = {}
    for w in wrappers:
        fixed = w.fixed()
        seen = out.get(w.function)
        out[w.function] = fixed if seen is None else {i: e for i, e in seen.items() if fixed.get(i) == e}
    return {fn: fixed for fn, fixed in out.items() if fixed}


def argument_names(wrappers: Sequence[Wrapper]) -> dict[str, dict[int, str]]:
    """Per API function, names its wrappers give arguments the prototype leaves unnamed.

    ``x_config_preset(cfg, preset, quality)`` calling ``x_config_init_internal(cfg, preset,
    quality, X_ABI)`` names the third argument ``quality``: an unnamed ``float`` becomes a
    quality setting with its range. The first wrapper that passes its own parameter wins.
    """
    out: dict[str, dict[int, str]] = {}
    for w in wrappers:
        names = out.setdefault(w.function, {})
        for i, arg in enumerate(w.args):
            if arg in w.params and i not in names:
                names[i] = arg
    return {fn: names for fn, names in out.items() if names}


def _identifiers(expr: str) -> list[str]:
    out, word = [], ""
    for ch in expr + " ":
        if ch.isalnum() or ch == "_":
            word += ch
        else:
            if word and not word[0].isdigit():
                out.append(word)
            word = ""
    return out


def _join(tokens: Sequence[str]) -> str:
    """Tokens back to C text, spaces only where two words would otherwise merge."""
    text = ""
    for tok in tokens:
        if text and (text[-1].isalnum() or text[-1] == "_") and (tok[0].isalnum() or tok[0] == "_"):
            text += " "
        text += tok
    return _unwrap(text)


def _unwrap(text: str) -> str:
    """``(cfg)`` -> ``cfg``: a macro's defensive parentheses around one argument."""
    while text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        text = text[1:-1]
    return text


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def _arguments(tokens: Sequence[str], start: int) -> tuple[str, ...] | None:
    """The comma-separated arguments of the call whose ``(`` is ``tokens[start]``."""
    args: list[list[str]] = [[]]
    depth = 0
    for tok in tokens[start + 1 :]:
        if tok in "([{":
            depth += 1
        elif tok in ")]}":
            if depth == 0:
                return tuple(_join(a) for a in args) if any(args) else ()
            depth -= 1
        elif tok == "," and depth == 0:
            args.append([])
            continue
        args[-1].append(tok)
    return None


def call_arguments(text: str) -> tuple[str, ...] | None:
    """``a, f(b, c), 2`` -> ``("a", "f(b,c)", "2")``: a rendered argument list read back."""
    tokens = ["(", *_TOKEN.findall(text), ")"]
    return _arguments(tokens, 0)


def wrapper_calls(caller: str, params: Sequence[str], body: Sequence[str],
                  api: Collection[str]) -> list[Wrapper]:
    """The calls to ``api`` functions in a wrapper's body tokens that fix at least one argument."""
    found: list[Wrapper] = []
    for i, tok in enumerate(body[:-1]):
        if tok in api and tok != caller and body[i + 1] == "(":
            args = _arguments(body, i + 1)
            if args is None:
                continue
            call = Wrapper(tok, args, caller, tuple(params))
            if call.fixed():
                found.append(call)
    return found


def macro_wrapper(tokens: Sequence[str], adjacent_paren: bool, api: Collection[str]) -> list[Wrapper]:
    """Calls in a function-like macro (``NAME(a, b) body``; ``adjacent_paren``: no space before ``(``)."""
    if len(tokens) < 4 or tokens[1] != "(" or not adjacent_paren:
        return []
    try:
        close = tokens.index(")", 2)
    except ValueError:
        return []
    params = [t for t in tokens[2:close] if t not in (",", "...")]
    return wrapper_calls(tokens[0], params, tokens[close + 1 :], api)


def body_tokens(text: str, offset: int) -> list[str]:
    """The tokens of the ``{ ... }`` body that follows a declarator ending at ``offset``.

    Empty when a ``;`` comes first (a prototype). Headers are parsed with function bodies
    skipped, so a definition's body is read from the file text.
    """
    rest = text[offset:]
    lead = re.match(r"(\s|/\*.*?\*/|//[^\n]*)*", rest, re.S)
    start = lead.end() if lead else 0
    if not rest.startswith("{", start):
        return []
    depth = 0
    for i in range(start, len(rest)):
        depth += {"{": 1, "}": -1}.get(rest[i], 0)
        if depth == 0:
            return _TOKEN.findall(_COMMENT.sub(" ", rest[start : i + 1]))
    return []


def function_wrapper(name: str, params: Sequence[str], body: Sequence[str],
                     api: Collection[str]) -> list[Wrapper]:
    """Calls in the body tokens of a function defined in a header."""
    return wrapper_calls(name, params, body, api) if body else []
