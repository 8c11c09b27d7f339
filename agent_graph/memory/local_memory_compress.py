"""Compression of the reasoning bank once the rendered local memory passes its token threshold.

What the SE-Agent seed keeps: the top-3 successes by coverage gain and the top-2 failures by
severity; similar lessons are merged into one (same operator, same change), but failures of
different kinds (does not build, crashes, slows the fuzzer, loses coverage) stay apart; lessons
whose measured effect is within the fuzzer's noise are dropped. Directions are not touched:
they are the tabu list, maintained whole by each extraction.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agent_graph.memory.local_memory_render import local_memory_tokens
from agent_graph.memory.local_memory_schema import copy_memory, same_direction

TOP_SUCCESSES = 3
TOP_FAILURES = 2
MAX_MERGED_TEXT = 600
_PERCENT_PAIR = re.compile(r"(-?\d+(?:\.\d+)?)\s*%\s*(?:->|→|to)\s*(-?\d+(?:\.\d+)?)\s*%")
_POINTS = re.compile(r"([+-]\d+(?:\.\d+)?)\s*(?:points?|pts?|pp)\b")
# A change that cannot be measured because it crashes or does not build is worse than any
# coverage loss; among those, a crash costs more (it hides the rest of the run).
MODE_WEIGHT = {"crash": 200.0, "compile": 100.0, "timeout": 50.0, "regression": 0.0}
_MODE_WORDS = (
    ("compile", ("does not compile", "did not compile", "compile error", "build fail",
                 "undeclared", "implicit declaration", "undefined reference", "link error")),
    ("crash", ("crash", "segv", "sanitizer", "asan", "leak", "overflow", "use-after-free",
               "double free", "abort")),
    ("timeout", ("timeout", "timed out", "hang", "exec/s", "slower", "slow unit")),
)


def item_gain(item: Mapping[str, Any]) -> float | None:
    """Line-coverage change (points) a lesson records, from ``a% -> b%`` or ``+N points``."""
    delta = str((item.get("evidence") or {}).get("metrics_delta") or "")
    pair = _PERCENT_PAIR.search(delta)
    if pair:
        return round(float(pair.group(2)) - float(pair.group(1)), 4)
    points = _POINTS.search(delta)
    return float(points.group(1)) if points else None


def failure_mode(item: Mapping[str, Any]) -> str:
    """``compile``, ``crash``, ``timeout`` or ``regression`` (a measured coverage loss)."""
    evidence = item.get("evidence") or {}
    text = " ".join(str(v) for v in (item.get("title"), item.get("description"), item.get("content"),
                                     *evidence.values())).casefold()
    for mode, words in _MODE_WORDS:
        if any(w in text for w in words):
            return mode
    return "regression"


def severity(item: Mapping[str, Any]) -> float:
    """How bad a failure was: its failure mode's weight plus the coverage points it lost."""
    gain = item_gain(item)
    return MODE_WEIGHT[failure_mode(item)] + (max(0.0, -gain) if gain is not None else 0.0)


def is_trivial(item: Mapping[str, Any], noise: float) -> bool:
    """A lesson whose effect is unmeasured or within the noise.

    Failures that broke the build, crashed or slowed the fuzzer are never trivial.
    """
    if item.get("type") == "Failure":
        return failure_mode(item) == "regression" and severity(item) < noise
    gain = item_gain(item)
    return gain is None or gain < noise


def _rank(item: Mapping[str, Any]) -> float:
    return severity(item) if item.get("type") == "Failure" else item_gain(item) or 0.0


def _similar(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    if a.get("type") != b.get("type"):
        return False
    if str(a.get("related_operator", "")).casefold() != str(b.get("related_operator", "")).casefold():
        return False
    if a.get("type") == "Failure" and failure_mode(a) != failure_mode(b):
        return False
    return same_direction(str(a.get("title", "")), str(b.get("title", "")))


def _joined(values: list[Any], sep: str) -> str:
    seen: list[str] = []
    for value in values:
        text = " ".join(str(value or "").split())
        if text and text not in seen:
            seen.append(text)
    return sep.join(seen)[:MAX_MERGED_TEXT]


def merge_items(group: list[dict[str, Any]]) -> dict[str, Any]:
    """One lesson standing for several similar ones.

    It keeps the strongest member's title and numbers and folds in the others' content,
    code changes and contexts.
    """
    if len(group) == 1:
        return group[0]
    ordered = sorted(group, key=_rank, reverse=True)
    base = ordered[0]
    evidence = {
        "code_change": _joined([(i.get("evidence") or {}).get("code_change") for i in ordered], "; "),
        "metrics_delta": (base.get("evidence") or {}).get("metrics_delta", ""),
        "context": _joined([(i.get("evidence") or {}).get("context") for i in ordered], "; "),
    }
    return {**base, "content": _joined([i.get("content") for i in ordered], " "),
            "source_ref": {**(base.get("source_ref") or {}), "merged": len(group)},
            "evidence": evidence}


def compress(
    memory: dict[str, Any], token_threshold: int = 1500, noise: float = 1.0, model: str = ""
) -> dict[str, Any]:
    """The memory with its reasoning bank compressed, if its rendering passes the threshold.

    Returns ``memory`` itself when the rendering is within ``token_threshold`` tokens (counted
    with :func:`agent_graph.memory.tokens.count_text_tokens`); otherwise a new memory whose bank is:
    trivial lessons dropped (see :func:`is_trivial`), similar ones merged (see
    :func:`merge_items`), then the top-3 successes by gain and the top-2 failures by severity,
    in that order, strongest first. Deterministic: ties keep the newer lesson.
    """
    if local_memory_tokens(memory, model) <= token_threshold:
        return memory
    out = copy_memory(memory)
    bank = [i for i in out["reasoning_bank"] if isinstance(i, dict) and not is_trivial(i, noise)]
    groups: list[list[dict[str, Any]]] = []
    for item in bank:
        home = next((g for g in groups if _similar(g[0], item)), None)
        if home is None:
            groups.append([item])
        else:
            home.append(item)
    merged = [(index, merge_items(g)) for index, g in enumerate(groups)]
    # Ties go to the group whose first record is newer (a higher index).
    by_rank = sorted(merged, key=lambda pair: (_rank(pair[1]), pair[0]), reverse=True)
    successes = [i for _n, i in by_rank if i.get("type") == "Success"][:TOP_SUCCESSES]
    failures = [i for _n, i in by_rank if i.get("type") == "Failure"][:TOP_FAILURES]
    out["reasoning_bank"] = successes + failures
    return out
