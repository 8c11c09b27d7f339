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
from collections.abc import Mapping, Sequence
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


def name_unnamed(api: Sequence[FunctionDecl], index: UsageIndex,
                 canonical: Mapping[str, str] | None = None) -> list[FunctionDecl]:
    """``api`` with each unnamed parameter named as most of the library's own calls name its argument.

    One the calls leave unnamed, of a type named for a size right after a pointer (``canonical``:
    typedef -> canonical type, so ``lib_SPTR`` is one), is ``length``.
    """
    votes: dict[str, list[Counter[str]]] = {}
    arity = {d.name: len(d.params) for d in api if any(not p.name for p in d.params)}
    # one vote per file and name: a file calling it ten times is one author's spelling;
    # the library's tests, examples, tools and docs count twice what other code does
    cast: dict[tuple[str, str, int, str], int] = {}
    for fn in index.functions:
        weight = 1 if fn.origin == "other" else 2
        for call in fn.calls:
            if arity.get(call.function) != len(call.args) or _placeholders(call.args):
                continue
            for i, arg in enumerate(call.args):
                if name := argument_name(arg):
                    # a plain variable's name counts more than a field's
                    plain = 2 if arg.text.strip().lstrip("&").strip() == name else 1
                    key = (fn.file, call.function, i, name)
                    cast[key] = max(cast.get(key, 0), weight * plain)
    for (_file, function, i, name), vote in cast.items():
        votes.setdefault(function, [Counter() for _ in range(arity[function])])[i][name] += vote
    canon = canonical or {}
    return [_named(d, votes.get(d.name) or [Counter() for _ in d.params], canon) if d.name in arity else d
            for d in api]


def _placeholders(args: Sequence[Arg]) -> bool:
    """``F(G(b,8),c,(T **)d,e)``: a macro's parameters passed on (``#define CALL(a,b,c,d,e) ...``), no names.

    Most of the arguments are single letters: a call written by a person names its values.
    """
    letters = sum(bool(_LETTER.fullmatch(a.text.strip())) for a in args)
    return letters >= 2 and 2 * letters > len(args)


# A single letter, cast (`(T **)e`) or wrapped in a macro with constants (`G(b,8)`).
_LETTER = re.compile(r"(?:\([^()]*\)\s*)?[&*]?\s*[A-Za-z]|\w+\(\s*[A-Za-z]\s*(?:,\s*\w+\s*)*\)")


def _named(decl: FunctionDecl, votes: list[Counter[str]], canonical: Mapping[str, str]) -> FunctionDecl:
    taken = {p.name for p in decl.params if p.name}
    params = []
    for i, (p, counts) in enumerate(zip(decl.params, votes, strict=True)):
        # the most common first, then the longer (more telling) name
        ranked = sorted(counts, key=lambda n: (-counts[n], -len(n), n))
        name = next((n for n in ranked if n not in taken), "") if not p.name else p.name
        before = decl.params[i - 1].type.strip() if i else ""
        if not name and "length" not in taken and _sized_by_type(canonical.get(before, before), p.type):
            name = "length"  # `compile(lib_SPTR, size_t, ...)`: the buffer's length, by its type
        taken.add(name)
        params.append(replace(p, name=name) if name != p.name else p)
    return replace(decl, params=tuple(params))


# A type named for a size (`lib_SIZE`, `foo_len_t`): after a pointer, what it holds is that buffer's length.
_SIZE_TYPE = re.compile(r"(?:^|_)(?:size|len|length)(?:_t)?$", re.I)


def _sized_by_type(before: str, ctype: str) -> bool:
    """Whether an unnamed ``ctype`` right after a ``before`` pointer is named for a size by its type."""
    return "*" in before and "(*)" not in before and bool(_SIZE_TYPE.search(ctype.strip()))
