"""The one vocabulary: verbs of making, releasing, parsing, writing and stepping.

Loaded once from ``vocabulary.yaml`` beside this module (a reviewed data file). Every layer
that classes a function by the words of its name asks here, so a word added to the file is
added everywhere.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

import yaml

KINDS = ("make", "init", "release", "parse", "step", "write", "consume", "finish")


@cache
def _load() -> dict[str, tuple[str, ...]]:
    text = resources.files("fuzzkit").joinpath("vocabulary.yaml").read_text()
    data = yaml.safe_load(text) or {}
    missing = [k for k in KINDS if k not in data]
    if missing:
        raise ValueError(f"fuzzkit/vocabulary.yaml lacks {', '.join(missing)}: add the lists")
    return {k: tuple(str(w) for w in data[k]) for k in KINDS}


def words_of(kind: str) -> frozenset[str]:
    """The words of one kind (``release``, ``make``...)."""
    return frozenset(_load()[kind])



def name_words(name: str) -> list[str]:
    """The lower-case words of a C name (``acmeFreeDoc`` -> ``acme``, ``free``, ``doc``)."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name))
    return [w.lower() for w in re.split(r"[_\W]+", spaced) if w]


def has_verb(name: str, kind: str) -> bool:
    """Whether a word of ``name`` is a verb of ``kind``."""
    verbs = words_of(kind)
    return any(w in verbs for w in name_words(name))
