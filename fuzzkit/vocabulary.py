"""The one vocabulary: verbs of making, releasing, parsing, writing and stepping; C's words; libc.

Loaded once from ``vocabulary.yaml`` beside this module (a reviewed data file). Every layer
that classes a function by the words of its name, or a C word, or a C library call, asks here,
so a word added to the file is added everywhere. ``tests/unit/test_vocabulary.py`` fails on a
literal elsewhere holding two words of one group.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Any

import yaml

KINDS = ("make", "make_by_reading", "init", "release", "clear", "copy", "open_session", "close_session",
         "parse", "produce", "producer", "step", "edit", "unlink", "feed", "stream_input", "write", "consume",
         "finish")
PATTERNS = ("release_fused", "release_memory", "release_said", "reads_buffer", "counting", "alloc_hook",
            "output_hook", "writes_out", "piecewise", "range_start", "range_end", "entry_reads",
            "entry_writes", "checksum", "not_entry", "ends_process", "accessor", "plumbing", "input_nouns",
            "allocator", "status_more", "status_end", "property_verbs")
C_GROUPS = ("statement", "type", "sign", "qualifier", "tag", "storage")
C_EXTRA = ("extension",)  # asked for by name only: not among `c_words()`'s keywords


def _fail(what: str) -> ValueError:
    return ValueError(f"fuzzkit/vocabulary.yaml: {what}: fix the file (see its header)")


def _entries(node: Any) -> list[Any]:
    """Every leaf entry of the file: list items and mapping values (mapping keys are names)."""
    if isinstance(node, dict):
        return [e for v in node.values() for e in _entries(v)]
    if isinstance(node, list):
        return [e for v in node for e in _entries(v)]
    return [node]


@cache
def _load() -> dict[str, Any]:
    text = resources.files("fuzzkit").joinpath("vocabulary.yaml").read_text()
    data = yaml.safe_load(text) or {}
    verbs, c, libc = data.get("verbs") or {}, data.get("c") or {}, data.get("libc") or {}
    pairs, patterns = data.get("pairs") or {}, data.get("patterns") or {}
    missing = [k for k in KINDS if k not in verbs] + [f"patterns.{k}" for k in PATTERNS if k not in patterns]
    missing += [f"c.{g}" for g in C_GROUPS + C_EXTRA if g not in c]
    unquoted = [w for w in _entries(data) if not isinstance(w, str)]
    if unquoted:
        raise _fail(f"{unquoted[0]!r} is no string (quote it)")
    missing += [f"libc.{k}" for k in ("headers", "released_by", "prototypes") if k not in libc]
    missing += [f"pairs.{k}" for k in ("undone_by", "inverse") if k not in pairs]
    if missing:
        raise _fail(f"lacks {', '.join(missing)}")
    return {
        "verbs": {k: tuple(str(w) for w in (verbs | patterns)[k]) for k in KINDS + PATTERNS},
        "c": {g: tuple(str(w) for w in c[g]) for g in C_GROUPS + C_EXTRA},
        "headers": {str(h): tuple(str(n) for n in names) for h, names in libc["headers"].items()},
        "released_by": {str(k): str(v) for k, v in libc["released_by"].items()},
        "prototypes": {str(k): str(v) for k, v in libc["prototypes"].items()},
        "undone_by": {str(k): str(v) for k, v in pairs["undone_by"].items()},
        "inverse": tuple((str(a), str(b)) for a, b in pairs["inverse"]),
    }


def words_of(kind: str) -> frozenset[str]:
    """The words of one kind (``release``, ``make``...) or pattern (``release_fused``...)."""
    return frozenset(_load()["verbs"][kind])


def ordered(kind: str) -> tuple[str, ...]:
    """The words of one kind in the file's order (most telling first)."""
    return _load()["verbs"][kind]


def undone_by() -> dict[str, str]:
    """Each maker's verb with the verb that undoes it (``open`` -> ``close``)."""
    return dict(_load()["undone_by"])


def inverse_pairs() -> tuple[tuple[str, str], ...]:
    """Word pairs naming a function and its inverse (``print``/``parse``, ``encode``/``decode``)."""
    return _load()["inverse"]


def c_words(*groups: str) -> frozenset[str]:
    """C's own words of the given groups; no group: every C keyword.

    The groups: ``statement``, ``type``, ``sign``, ``qualifier``, ``tag``, ``storage``; and, by
    name only, ``extension`` (``typeof``, ``__attribute__``, ``defined``).
    """
    table = _load()["c"]
    return frozenset(w for g in groups or C_GROUPS for w in table[g])


def c_group(group: str) -> tuple[str, ...]:
    """C's words of one group in the file's order."""
    return _load()["c"][group]


def libc_headers() -> dict[str, str]:
    """Every C library name a harness may use, with the standard header that declares it."""
    return {name: header for header, names in _load()["headers"].items() for name in names}


def libc_released_by() -> dict[str, str]:
    """The C library's allocators, each with the function that releases what it returns."""
    return dict(_load()["released_by"])


def libc_prototypes() -> dict[str, str]:
    """The C library's memory functions with their prototypes (``void *malloc(size_t size)``)."""
    return dict(_load()["prototypes"])


def name_words(name: str) -> list[str]:
    """The lower-case words of a C name (``acmeFreeDoc`` -> ``acme``, ``free``, ``doc``)."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name))
    return [w.lower() for w in re.split(r"[_\W]+", spaced) if w]


def has_verb(name: str, kind: str) -> bool:
    """Whether a word of ``name`` is a verb of ``kind``."""
    verbs = words_of(kind)
    return any(w in verbs for w in name_words(name))


def verb_before(words: Sequence[str], at: int) -> bool:
    """Whether a verb of a property or of work comes before ``words[at]`` (its release verb).

    ``set_end_element_handler`` sets a handler and ``process_until_end_of_stream`` processes: the
    later verb is not what the function does, so neither releases anything.
    """
    return bool(set(words[:at]) & (words_of("property_verbs") | words_of("feed") | words_of("parse")))


def alternation(kind: str) -> str:
    """The words of one kind as a regular-expression group (``(?:free|delete|...)``)."""
    return "(?:" + "|".join(map(re.escape, ordered(kind))) + ")"
