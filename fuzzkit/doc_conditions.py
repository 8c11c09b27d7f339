r"""Conditions a library's documentation asserts on a function's parameters.

Doxygen comments state them in an ``\assert`` (or ``\pre``, ``@pre``) section, each as code:
``\code object->type == X_TYPE_COMMENT \endcode``. A condition on a field of an argument says
which kind of object the function accepts; a harness handing it another kind (one made from a
type drawn from the input, say) breaks the contract, and what the call then does is no library
bug. :mod:`fuzzkit.param_docs` reads them at prepare time beside the other parameter facts, a
comment at a time (:func:`asserted`). Nothing here knows any particular library.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

# The section: from its tag to the next tag other than inline code and text markup, or a blank line.
_SECTION = re.compile(r"[@\\](?:assert|pre)\b(?P<body>(?:(?![@\\](?!code\b|endcode\b|c\b|a\b|p\b)\w)"
                      r"(?!\n[ \t]*\n).)*)", re.S)
_CODE = re.compile(r"[@\\]code\b(?P<expr>.*?)[@\\]endcode\b", re.S)
# `param->field == CONSTANT`: the kind of object a function accepts (a type tag, a mode).
OBJECT_KIND = re.compile(r"\(?\s*(\w+)\s*(?:->|\.)\s*(\w+)\s*==\s*([A-Z][A-Z0-9_]*)\s*\)?")
_EXPRESSION = re.compile(r"^[\w\s.>\-!=<()&|+*/%\[\]']+$")


def asserted(comment: str, params: Sequence[str]) -> list[str]:
    """The C conditions a documentation comment asserts on ``params`` (its assert or pre code).

    ``comment``: the comment's text without its leading ``*``. A condition is kept when it is
    one C expression naming one of the parameters.
    """
    found: list[str] = []
    for section in _SECTION.finditer(comment):
        for code in _CODE.finditer(section["body"]):
            cond = " ".join(code["expr"].split())
            named = any(re.search(rf"(?<![.>\w]){re.escape(p)}\b", cond) for p in params)
            if cond and named and _EXPRESSION.match(cond) and cond not in found:
                found.append(cond)
    return found


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
