"""The steppers of what the offered functions make, for the improve prompt's API list.

The improve prompt offers functions to call next (:func:`nodes.enhancer.uncovered_text`); one
of them may make a new object (a reader on the parsed document) that reaches little until its
own stepper (``int reader_read(reader *)``) walks it. The API list a prompt shows is trimmed to
the functions related to the target, which can leave that stepper out: then neither a model nor
the offline engine can drive what the offered maker makes. These are added to the list.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from fuzzkit.api import FunctionDecl
from fuzzkit.api_twins import resolve_typedefs
from fuzzkit.header_facts import HeaderFacts
from fuzzkit.header_releasers import RELEASE_VERBS
from fuzzkit.vocabulary import ordered

# The words of a stepper's name, most telling first (the offline engine ranks by this order).
STEP_WORDS = ordered("step")
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def steppers_for(state: Mapping[str, Any], names: Iterable[str], limit: int = 8) -> list[FunctionDecl]:
    """One stepper per object type the functions ``names`` return (the plainest name first).

    Then the one-argument releasers of those types.
    """
    api = [FunctionDecl.from_dict(d) for d in state.get("api") or []]
    canonical = {t.name: t.canonical for t in HeaderFacts.from_dict(state.get("header_facts")).typedefs}
    by_name = {d.name: d for d in api}
    made = {_object(by_name[n].return_type, canonical) for n in names if n in by_name} - {""}
    best: dict[str, FunctionDecl] = {}
    for d in api:
        if len(d.params) != 1 or not _is_step(d, canonical):
            continue
        key = _object(d.params[0].type, canonical)
        if key in made and (key not in best or len(_words(d.name)) < len(_words(best[key].name))):
            best[key] = d
    # And what releases each: the offline engine owns a maker's object only where the API it is
    # shown frees that type, and a model needs the name to free it.
    ends = [d for d in api if len(d.params) == 1 and set(_words(d.name)) & set(RELEASE_VERBS)
            and d.return_type == "void" and _object(d.params[0].type, canonical) in best]
    return [*list(best.values())[:limit], *ends[:limit]]


def _is_step(d: FunctionDecl, canonical: Mapping[str, str]) -> bool:
    """``int reader_read(reader *)``: a number back from a call on one mutable object."""
    ret = resolve_typedefs(d.return_type, canonical)
    return ("*" not in ret and ret != "void" and not ret.startswith(("struct ", "union "))
            and "const" not in resolve_typedefs(d.params[0].type, canonical).split("*")[0]
            and bool(set(_words(d.name)) & set(STEP_WORDS)))


def _object(ctype: str, canonical: Mapping[str, str]) -> str:
    """The record a pointer type points at (through typedefs), or '' for anything else."""
    resolved = resolve_typedefs(ctype, canonical)
    if resolved.count("*") != 1:
        return ""
    base = re.sub(r"\b(const|struct|union|volatile)\b|\*", " ", resolved).split()
    return base[0] if len(base) == 1 else ""


def _words(name: str) -> list[str]:
    return [w.lower() for part in name.split("_") for w in _WORD.findall(part)]
