"""Names for the parameters a prototype leaves unnamed, from the arguments the library's own code passes.

``void x_read_image(x_handle *, uint32_t, uint32_t, uint32_t *, int)`` says nothing about
what its integers and its buffer are; the library's own tools call it as ``x_read_image(h,
width, height, raster, 0)``. Naming the parameters after those arguments lets every rule that
reads a parameter's name (lengths, rasters, sizes) and every reader of the prompt see them.
Only a parameter with no name is named; the name is the one most of the calls pass (a variable,
``&variable`` or, counted half, the last field of ``a->field``), never a constant, a literal or an
expression.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from fuzzkit.api import FunctionDecl
from fuzzkit.usage_models import Arg, UsageIndex
from fuzzkit.vocabulary import c_words

_CAST = re.compile(r"^\(\s*[A-Za-z_][\w\s]*\**\s*\)\s*")
_NAMED = re.compile(r"&?\s*(?:[A-Za-z_]\w*\s*(?:->|\.)\s*)*([A-Za-z_]\w*)")
_NOT_A_NAME = ("constant", "string", "null", "callback")


def argument_name(arg: Arg) -> str:
    """The name an argument as written gives its parameter (``&h`` -> ``h``, ``img->width`` -> ``width``)."""
    if arg.kind in _NOT_A_NAME:
        return ""
    text = _CAST.sub("", arg.text.strip())
    found = _NAMED.fullmatch(text)
    name = found.group(1) if found else ""
    if not name or name in c_words() or name.isupper():  # a macro the index did not know
        return ""
    return name


def name_unnamed(api: Sequence[FunctionDecl], index: UsageIndex) -> list[FunctionDecl]:
    """``api`` with each unnamed parameter named as most of the library's own calls name its argument."""
    votes: dict[str, list[Counter[str]]] = {}
    arity = {d.name: len(d.params) for d in api if any(not p.name for p in d.params)}
    # one vote per file and name: a file calling it ten times is one author's spelling;
    # the library's tests, examples, tools and docs count twice what other code does
    cast: dict[tuple[str, str, int, str], int] = {}
    for fn in index.functions:
        weight = 1 if fn.origin == "other" else 2
        for call in fn.calls:
            if arity.get(call.function) != len(call.args):
                continue
            for i, arg in enumerate(call.args):
                if name := argument_name(arg):
                    # a plain variable's name counts more than a field's
                    plain = 2 if arg.text.strip().lstrip("&").strip() == name else 1
                    key = (fn.file, call.function, i, name)
                    cast[key] = max(cast.get(key, 0), weight * plain)
    for (_file, function, i, name), vote in cast.items():
        votes.setdefault(function, [Counter() for _ in range(arity[function])])[i][name] += vote
    return [_named(d, votes[d.name]) if d.name in votes else d for d in api]


def _named(decl: FunctionDecl, votes: list[Counter[str]]) -> FunctionDecl:
    taken = {p.name for p in decl.params if p.name}
    params = []
    for p, counts in zip(decl.params, votes, strict=True):
        # the most common first, then the longer (more telling) name
        ranked = sorted(counts, key=lambda n: (-counts[n], -len(n), n))
        name = next((n for n in ranked if n not in taken), "") if not p.name else p.name
        taken.add(name)
        params.append(replace(p, name=name) if name != p.name else p)
    return replace(decl, params=tuple(params))
