"""Release calls written with one argument for releasers that take a flag after the object.

``void x_region_free(x_region *region, int free_self)``: the Types section lists it as the
releaser of ``x_region *``, and the code that releases an object writes ``release(obj)``.
The flag says whether the object itself goes too (without it, the struct leaks; for an
object on the stack, ``&region``, it must not); any other trailing integer gets 0. Applied
to the finished harness, so every place that releases an object is covered.
"""

from __future__ import annotations

import re

from agents.offline import ckinds
from fuzzkit.api import FunctionDecl, Param

_WHOLE = re.compile(r"(self|all|deep|recurs|whole|struct|free|segment)", re.I)


def complete_release_calls(code: str, api: list[FunctionDecl]) -> str:
    """``release(obj)`` -> ``release(obj, 1)`` for releasers with trailing integer flags."""
    for fn in api:
        extra = fn.params[1:]
        if (len(fn.params) < 2 or not ckinds.is_pointer(fn.params[0].type)
                or not all(ckinds.is_integer(p.type) or ckinds.is_bool(p.type) for p in extra)):
            continue
        def complete(m: re.Match[str], fn: FunctionDecl = fn, extra: tuple[Param, ...] = extra) -> str:
            # An object on the stack (`&region`) keeps its own memory: only its contents go.
            whole = "0" if m.group(1).strip().startswith("&") else "1"
            flags = ", ".join(whole if _WHOLE.search(p.name or "") else "0" for p in extra)
            return f"{fn.name}({m.group(1)}, {flags})"

        code = re.sub(rf"\b{re.escape(fn.name)}\(([^(),;]*)\)", complete, code)
    return code
