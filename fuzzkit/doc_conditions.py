r"""Conditions a library's documentation asserts on a function's parameters.

Doxygen comments state them in an ``\assert`` (or ``\pre``, ``@pre``) section, each as code:
``\code object->type == X_TYPE_COMMENT \endcode``. A condition on a field of an argument says
which kind of object the function accepts; a harness handing it another kind (one made from a
type drawn from the input, say) breaks the contract, and what the call then does is no library
bug. Read at prepare time beside the other parameter facts (:mod:`fuzzkit.param_docs`); kept
only where the condition names one of the function's parameters. Nothing here knows any
particular library.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from fuzzkit.api import FunctionDecl

_COMMENT = re.compile(r"/\*(.*?)\*/", re.S)
_LEAD = re.compile(r"^[ \t]*\*+[ \t]?", re.M)
# The section: from its tag to the next tag other than inline code and text markup, or a blank line.
_SECTION = re.compile(r"[@\\](?:assert|pre)\b(?P<body>(?:(?![@\\](?!code\b|endcode\b|c\b|a\b|p\b)\w)"
                      r"(?!\n[ \t]*\n).)*)", re.S)
_CODE = re.compile(r"[@\\]code\b(?P<expr>.*?)[@\\]endcode\b", re.S)
# `param->field == CONSTANT`: the kind of object a function accepts (a type tag, a mode).
OBJECT_KIND = re.compile(r"\(?\s*(\w+)\s*(?:->|\.)\s*(\w+)\s*==\s*([A-Z][A-Z0-9_]*)\s*\)?")
_EXPRESSION = re.compile(r"^[\w\s.>\-!=<()&|+*/%\[\]']+$")


def documented_conditions(texts: Iterable[str], api: Sequence[FunctionDecl]) -> dict[str, list[str]]:
    """``{function: [condition, ...]}``: the C conditions each function's comment asserts.

    A comment documents the API function whose declaration follows it. A condition is kept when
    it is one C expression naming a parameter of that function.
    """
    params = {d.name: [p.name for p in d.params if p.name] for d in api}
    found: dict[str, list[str]] = {}
    for text in texts:
        if "\\assert" not in text and "pre" not in text:
            continue
        for m in _COMMENT.finditer(text):
            body = _LEAD.sub("", m.group(1))
            sections = list(_SECTION.finditer(body))
            fn = _declared_after(text, m.end(), params) if sections else None
            if fn is None:
                continue
            for section in sections:
                for code in _CODE.finditer(section["body"]):
                    cond = " ".join(code["expr"].split())
                    named = any(re.search(rf"(?<![.>\w]){re.escape(p)}\b", cond) for p in params[fn])
                    if cond and named and _EXPRESSION.match(cond) and cond not in found.setdefault(fn, []):
                        found[fn].append(cond)
    return {fn: conds for fn, conds in found.items() if conds}


def _declared_after(text: str, end: int, params: dict[str, list[str]]) -> str | None:
    """The API function declared or defined right after a comment, if any."""
    after = text[end:end + 400]
    stop = re.search(r"[;{]|/\*", after)
    head = after[: stop.start() if stop else len(after)]
    return next((c for c in re.findall(r"\b(\w+)\s*\(", head) if c in params), None)


def field_conditions(conditions: Iterable[str], params: Iterable[str]) -> list[tuple[str, str, str]]:
    """``(parameter, field, constant)`` of each condition ``param->field == CONSTANT``.

    Such a condition names the kind of object the function accepts (a type tag, a mode), and the
    constant is one of the header's.
    """
    names = set(params)
    out = []
    for cond in conditions:
        m = OBJECT_KIND.fullmatch(cond)
        if m and m.group(1) in names:
            out.append((m.group(1), m.group(2), m.group(3)))
    return out
