"""Which of a library's public headers a harness includes: the umbrella, not the parts it pulls in.

A library may split its API over part headers and ship one header that includes them all. Parts
written to be reached only through it often have no include guard of their own: a harness that
includes the umbrella and a part as well gets every struct of the part twice ("redefinition of
..."). A header another listed header includes unconditionally (outside any ``#if``, the other's
own include guard apart) is left to that header; one included only under a condition is kept, as
the condition may not hold.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

__all__ = ["harness_headers", "unconditional_includes"]

_DIRECTIVE = re.compile(r"^\s*#\s*(\w+)\s*(.*?)\s*$")
_NAMED = re.compile(r'[<"]([^>"]+)[>"]')
_OPENS = {"if", "ifdef", "ifndef"}


def unconditional_includes(text: str) -> set[str]:
    """File names (last path part) the header's text includes outside any conditional block.

    The header's include guard (a first ``#ifndef X`` or ``#if !defined(X)`` followed by
    ``#define X``) does not count as a condition.
    """
    directives = [(m.group(1), m.group(2)) for m in map(_DIRECTIVE.match, text.splitlines()) if m]
    guard = _guard(directives)
    found: set[str] = set()
    depth = 0
    for i, (name, rest) in enumerate(directives):
        if name in _OPENS:
            depth += 0 if i == guard else 1
        elif name == "endif":
            depth = max(0, depth - 1)
        elif name == "include" and depth == 0:
            named = _NAMED.search(rest)
            if named:
                found.add(Path(named.group(1)).name)
    return found


def _guard(directives: list[tuple[str, str]]) -> int:
    """Index of the include guard's opening directive, or -1."""
    if len(directives) < 2 or directives[1][0] != "define":
        return -1
    name, rest = directives[0]
    macro = directives[1][1].split()[0] if directives[1][1] else ""
    guarded = (name == "ifndef" and rest == macro) or (
        name == "if" and re.fullmatch(rf"!\s*defined\s*\(?\s*{re.escape(macro)}\s*\)?", rest) is not None)
    return 0 if macro and guarded else -1


def harness_headers(headers: Sequence[str | Path]) -> list[str]:
    """File names of ``headers`` to include, in order, without those another kept one includes."""
    paths = [Path(h) for h in headers]
    includes = {p.name: unconditional_includes(_read(p)) for p in paths}
    dropped: set[str] = set()
    kept: list[str] = []
    for p in paths:
        if p.name in kept:
            continue
        if any(p.name in includes[o.name] for o in paths if o.name != p.name and o.name not in dropped):
            dropped.add(p.name)
        else:
            kept.append(p.name)
    return kept


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""
