"""Reading usage code without a parser: what libclang cannot read, and documentation blocks.

A documentation block is often a fragment (statements with no function around them, names
declared elsewhere) and a test file may not parse without a generated header. Tokens still
show what matters: the calls of API functions with their arguments, the variable a result is
stored in, the ``if`` that checks it, and the declarations of the variables involved.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from fuzzkit.usage_models import Arg, CallSite, FieldAssignment, UsageFunction
from fuzzkit.usage_sources import UsageSource
from fuzzkit.usage_text import (
    KEPT_CALLS,
    call_site,
    constant_arg,
    cut_source,
    field_assignment,
    join_tokens,
    split_arguments,
)
from fuzzkit.vocabulary import c_words

_TOKEN = re.compile(
    r"""(?P<skip>/\*.*?\*/|//[^\n]*|^[ \t]*\#(?:[^\n]*\\\n)*[^\n]*)"""
    r"""|(?P<str>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')"""
    r"""|(?P<tok>[A-Za-z_]\w*|0[xX][0-9a-fA-F]+\w*|\d[\w.]*|->|<<|>>|&&|\|\||[=!<>]=|\+\+|--|\S)""",
    re.S | re.M,
)
_IDENT = re.compile(r"^[A-Za-z_]\w*$")
_KEYWORDS = c_words("statement")
_TYPE_WORDS = c_words("qualifier", "tag", "sign", "type", "storage")


def tokens(text: str) -> list[tuple[str, int]]:
    """``(token, line)`` of C text, comments and preprocessor lines left out."""
    out = []
    for m in _TOKEN.finditer(text):
        if m.group("skip") is not None:
            continue
        out.append((m.group(0), text.count("\n", 0, m.start()) + 1))
    return out


def _close(toks: Sequence[tuple[str, int]], i: int, open_: str, close: str) -> int:
    """The index of the bracket closing the one at ``i`` (len(toks) if none)."""
    depth = 0
    for j in range(i, len(toks)):
        if toks[j][0] == open_:
            depth += 1
        elif toks[j][0] == close:
            depth -= 1
            if depth == 0:
                return j
    return len(toks)


def _bodies(toks: list[tuple[str, int]]) -> list[tuple[str, int, int]]:
    """``(name, start, end)`` of each function definition (``name ( ... ) {``) at the top level."""
    found, i, depth = [], 0, 0
    while i < len(toks):
        tok = toks[i][0]
        if tok == "{":
            depth += 1
        elif tok == "}":
            depth -= 1
        elif (
            depth == 0
            and _IDENT.match(tok)
            and tok not in _KEYWORDS
            and i + 1 < len(toks)
            and toks[i + 1][0] == "("
        ):
            end = _close(toks, i + 1, "(", ")")
            if end + 1 < len(toks) and toks[end + 1][0] == "{":
                stop = _close(toks, end + 1, "{", "}")
                found.append((tok, i, stop))
                i = stop + 1
                continue
        i += 1
    return found


def lexical_functions(src: UsageSource, names: set[str], known: set[str]) -> list[UsageFunction]:
    """The functions of ``src`` (or the block as one) with their API calls, read from tokens."""
    toks = tokens(src.text)
    lines = src.text.splitlines()
    bodies = _bodies(toks) or [("(snippet)", 0, len(toks) - 1)]
    defined = {name for name, _s, _e in bodies}
    out = []
    for name, start, end in bodies:
        body = toks[start : end + 1]
        fn = _function(body, names, known, defined)
        if not fn.calls:
            continue
        first, last = body[0][1], body[-1][1]
        text = "\n".join(lines[first - 1 : last])
        callbacks = {cb: _source_of(toks, lines, bodies, cb) for cb in _callbacks(fn)}
        out.append(
            fn.model_copy(
                update={
                    "file": src.rel,
                    "name": name,
                    "origin": src.origin,
                    "source": cut_source(text),
                    "lines": last - first + 1,
                    "parsed_by": "lexical",
                    "callbacks": callbacks,
                }
            )
        )
    return out


def _function(
    body: list[tuple[str, int]], names: set[str], known: set[str], defined: set[str]
) -> UsageFunction:
    calls: list[CallSite] = []
    variables: dict[str, str] = {}
    assigned: dict[str, list[str]] = {}
    # A definition's tokens start at its name: the declarations up to the body are its parameters.
    defines = len(body) > 1 and body[1][0] == "("
    opening = next((i for i, (t, _l) in enumerate(body) if t == "{"), 0) if defines else 0
    params: list[str] = []
    fields = []
    for i, (tok, line) in enumerate(body):
        if tok == "=" and (found := _field_statement(body, i, known)) is not None:
            fields.append(found)
        decl = _declaration(body, i)
        if decl:
            variables.setdefault(decl[1], decl[0])
            if i < opening:
                params.append(decl[1])
        if (
            tok in defined
            and i > 0
            and body[i - 1][0] == "="
            and (i + 1 >= len(body) or body[i + 1][0] != "(")
        ):
            target = _lvalue(body, i - 1)
            if target:
                assigned.setdefault(re.split(r"\.|->", target)[0], []).append(tok)
        if not (tok in names or tok in KEPT_CALLS) or i + 1 >= len(body) or body[i + 1][0] != "(":
            continue
        if i > 0 and body[i - 1][0] in (".", "->"):
            continue
        end = _close(body, i + 1, "(", ")")
        written = split_arguments([t for t, _l in body[i + 2 : end]])
        args = [_arg(part, known, defined) for part in written]
        result = _lvalue(body, i - 1) if i > 0 and body[i - 1][0] == "=" else ""
        check, loop = _condition(body, i)
        calls.append(call_site(KEPT_CALLS.get(tok, tok), args, result, check, line, loop))
    return UsageFunction(file="", name="", calls=calls, variables=variables, params=params, assigned=assigned,
                         fields=fields)


def _field_statement(body: list[tuple[str, int]], eq: int, known: set[str]) -> FieldAssignment | None:
    """The statement ``var.field = value;`` whose ``=`` is ``body[eq]``, if it is one."""
    j = eq - 1
    while j >= 2 and body[j - 1][0] in (".", "->") and _IDENT.match(body[j - 2][0]):
        j -= 2
    if j == eq - 1 or j > 0 and body[j - 1][0] not in (";", "{", "}", ")"):
        return None
    end = eq
    depth = 0
    while end < len(body) and not (body[end][0] == ";" and depth == 0):
        depth += body[end][0] in "([{"
        depth -= body[end][0] in ")]}"
        end += 1
    return field_assignment([t for t, _l in body[j:end]], known, body[eq][1])


def _arg(part: list[str], known: set[str], defined: set[str]) -> Arg:
    text = join_tokens(part)
    if part[0].startswith('"'):
        return Arg(text=text, kind="string")
    if part in (["NULL"], ["0"]) or text in ("(void *)0", "(void*)0"):
        return Arg(text=text, kind="null")
    if len(part) == 1 and part[0] in defined:
        return Arg(text=text, kind="callback")
    consts = constant_arg(part, known)
    if consts is not None:
        return Arg(text=text, kind="constant", constants=consts,
                   public=bool(consts) and all(c in known for c in consts))
    if len(part) == 2 and part[0] == "&" and _IDENT.match(part[1]):
        return Arg(text=text, var=part[1], address=True, kind="variable")
    if len(part) == 1 and _IDENT.match(part[0]):
        return Arg(text=text, var=part[0], kind="variable")
    idents = [t for t in part if _IDENT.match(t) and t not in _KEYWORDS]
    var = idents[1] if part[0] in ("strlen", "sizeof") and len(idents) > 1 else ""
    return Arg(text=text, var=var)


def _lvalue(body: list[tuple[str, int]], eq: int) -> str:
    """The text assigned to at ``body[eq] == '='`` (``h``, ``obj->err``, ``cfg.mode``, ``v[2]``)."""
    parts: list[str] = []
    j = eq - 1
    while j >= 0:
        tok = body[j][0]
        if tok == "]":
            depth, k = 0, j
            while k >= 0:
                depth += body[k][0] == "]"
                depth -= body[k][0] == "["
                if depth == 0:
                    break
                k -= 1
            parts += [t for t, _l in reversed(body[k : j + 1])]
            j = k - 1
            continue
        if not _IDENT.match(tok) or tok in _KEYWORDS:
            break
        parts.append(tok)
        j -= 1
        if j >= 0 and body[j][0] in (".", "->"):
            parts.append(body[j][0])
            j -= 1
            continue
        break
    return join_tokens(list(reversed(parts))) if parts and _IDENT.match(parts[-1]) else ""


def _condition(body: list[tuple[str, int]], i: int) -> tuple[str, bool]:
    """The condition of the ``if``/``while`` the call at ``i`` sits in, and whether it loops."""
    depth = 0
    for j in range(i - 1, -1, -1):
        tok = body[j][0]
        if tok == ")":
            depth += 1
        elif tok == "(":
            if depth == 0:
                if j > 0 and body[j - 1][0] in ("if", "while"):
                    end = _close(body, j, "(", ")")
                    return join_tokens([t for t, _l in body[j + 1 : end]]), body[j - 1][0] == "while"
            else:
                depth -= 1
        elif tok in (";", "{", "}"):
            return "", False
    return "", False


def _declaration(body: list[tuple[str, int]], i: int) -> tuple[str, str] | None:
    """``(type, name)`` when a declaration starts at ``i`` (``struct s *x = ...;``, ``acme_h h;``)."""
    if i > 0 and (
        body[i - 1][0] not in (";", "{", "}", ")", "(", ",") or i > 1 and body[i - 2][0] == "sizeof"
    ):
        return None
    j, words = i, []
    while j < len(body) and (body[j][0] in _TYPE_WORDS or _IDENT.match(body[j][0])):
        words.append(body[j][0])
        j += 1
    stars = 0
    while j < len(body) and body[j][0] == "*":
        stars += 1
        j += 1
    if stars and j < len(body) and _IDENT.match(body[j][0]):
        words.append(body[j][0])
        j += 1
    if (
        len(words) < 2
        or words[0] in _KEYWORDS
        or j >= len(body)
        or body[j][0] not in ("=", ";", "[", ",", ")")
    ):
        return None
    if any(w in _KEYWORDS for w in words):
        return None
    name = words[-1]
    ctype = join_tokens(words[:-1]) + (" " + "*" * stars if stars else "")
    return ctype, name


def _callbacks(fn: UsageFunction) -> set[str]:
    found = {a.text for c in fn.calls for a in c.args if a.kind == "callback"}
    return found | {cb for cbs in fn.assigned.values() for cb in cbs}


def _source_of(
    toks: list[tuple[str, int]], lines: list[str], bodies: list[tuple[str, int, int]], name: str
) -> str:
    for fn, start, end in bodies:
        if fn == name:
            first = toks[start][1]
            # the return type sits on the line before, or before the name on the same line
            text = "\n".join(lines[max(first - 2, 0) : toks[end][1]])
            return cut_source(text)
    return ""
