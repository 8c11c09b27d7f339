"""Signature twins: API functions used the same way, by their canonical signature and their names.

A call that crashed by misuse teaches about its family: functions taking and returning the same
canonical types, named alike (``doc_parse_file(ctx)`` and ``doc_parse_entity(ctx)``,
``obj_convert_number(obj)`` and ``obj_convert_string(obj)``), are set up the same way and fail
the same way. The canonical types come from the library's header (typedef name -> the type
behind it), so two typedef names of one struct are one type.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from fuzzkit.api import FunctionDecl


def signature_twins(name: str, api: Sequence[FunctionDecl], canonical: Mapping[str, str]) -> list[str]:
    """The API functions with ``name``'s signature whose names share a word with it past the prefix.

    Functions without a pointer parameter have no twins (a family by shape needs an object).
    """
    decl = next((f for f in api if f.name == name), None)
    if decl is None or not any("*" in canonical_type(p.type, canonical) for p in decl.params):
        return []
    key, words = _signature(decl, canonical), set(name_words(name))
    return [f.name for f in api if f.name != name and _signature(f, canonical) == key
            and words & set(name_words(f.name))]


def resolve_typedefs(ctype: str, canonical: Mapping[str, str]) -> str:
    """``ctype`` with a typedef name followed to the type behind it (qualifiers and stars kept)."""
    text = ctype.strip()
    for _ in range(4):  # typedef chains are short
        name = re.sub(r"\b(const|volatile|restrict)\b|\*", " ", text).split()
        if len(name) != 1 or name[0] not in canonical:
            break
        text = text.replace(name[0], canonical[name[0]], 1)
    return " ".join(text.split())


def canonical_type(spelling: str, canonical: Mapping[str, str]) -> str:
    """A type spelling with typedefs followed to their canonical type, qualifiers and tags left out."""
    resolved = resolve_typedefs(spelling, canonical)
    return re.sub(r"\b(const|volatile|restrict|struct|union|enum)\b|\s+", "", resolved)


def _signature(decl: FunctionDecl, canonical: Mapping[str, str]) -> tuple[str, ...]:
    types = (decl.return_type, *(p.type for p in decl.params))
    return tuple(canonical_type(t, canonical) for t in types)


def name_words(name: str) -> list[str]:
    """The words of a function name after its first (the library's prefix), digits left out."""
    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+", name)
    return [w.lower() for w in words[1:]]
