"""Consolidating session memory: repeated facts merged, each category capped (seed 002).

The supervisor runs it every ``Context.consolidate_every`` loop iterations. Pure and
idempotent, like everything in :mod:`agent_graph.memory.session_memory`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agent_graph.memory.session_memory import (
    CONFIDENCE_RANK,
    CONFIDENCES,
    LIST_CATEGORIES,
    Memory,
    copy_session_memory,
    rank_of,
    when_of,
)


def _key(text: Any) -> str:
    """Content compared case-, whitespace- and punctuation-insensitively."""
    return " ".join(re.sub(r"[^\w\s]|_", " ", str(text).casefold()).split())


def _merge(group: list[dict[str, Any]], category: str) -> dict[str, Any]:
    """One entry standing for several records of the same fact."""
    if category == "known_fixes" and any(e.get("success") for e in group):
        # A fix that worked supersedes records of it failing: they are no evidence that it works.
        winners = [e for e in group if e.get("success")]
    else:
        winners = group
    recorded = max(CONFIDENCE_RANK.get(str(e.get("recorded_confidence", e.get("confidence"))).upper(), 0)
                   for e in winners)
    count = sum(int(e.get("count", 1)) for e in winners)
    sources = sorted({s for e in winners for s in (e.get("sources") or [e.get("source", "")]) if s})
    bumped = recorded + 1 if len(sources) >= 2 or count >= 3 else recorded
    best = max(winners, key=lambda e: (rank_of(e), when_of(e)))
    merged = dict(best)
    merged.update({
        "confidence": CONFIDENCES[min(bumped, len(CONFIDENCES) - 1)],
        "recorded_confidence": CONFIDENCES[recorded], "count": count, "sources": sources,
        "timestamp": max(group, key=when_of).get("timestamp", best.get("timestamp")),
    })
    if category == "known_fixes" and not merged.get("error_signature"):
        merged["error_signature"] = next((e["error_signature"] for e in group
                                          if e.get("error_signature")), "")
    rules = {repr(sorted(r.items())): r for e in winners for r in e.get("rules") or []}
    if rules:
        merged["rules"] = list(rules.values())
    if category == "coverage_strategies":
        merged["target_functions"] = list(dict.fromkeys(
            f for e in group for f in e.get("target_functions") or []))
    return merged


def consolidate_session_memory(memory: Mapping[str, Any] | None,
                               max_per_category: int = 10) -> Memory:
    """Merge repeated facts and cap each list; pure and idempotent.

    Entries whose content matches case-, whitespace- and punctuation-insensitively become one:
    it keeps the highest recorded confidence, raised one step (LOW→MEDIUM→HIGH) when the fact
    came from two or more sources or was recorded three or more times, a ``count``, the
    ``sources`` and the newest timestamp; for known fixes a fix that worked supersedes records of
    the same fix failing (they count neither for ``count`` nor for the raise). Each list is then
    cut to ``max_per_category`` by (confidence, recency) and kept in chronological order.
    Decisions are a log: not merged, the newest are kept.
    """
    if max_per_category < 0:
        raise ValueError(f"max_per_category must be >= 0, got {max_per_category}")
    out = copy_session_memory(memory)
    for cat in LIST_CATEGORIES:
        entries = out[cat]
        if cat == "decisions":
            kept = sorted(entries, key=when_of)[max(0, len(entries) - max_per_category):]
        else:
            groups: dict[str, list[dict[str, Any]]] = {}
            for entry in entries:
                groups.setdefault(_key(entry.get("content", "")), []).append(entry)
            merged = [_merge(g, cat) for g in groups.values()]
            ranked = sorted(merged, key=lambda e: (rank_of(e), when_of(e), _key(e.get("content"))),
                            reverse=True)
            kept = sorted(ranked[:max_per_category],
                          key=lambda e: (when_of(e), _key(e.get("content"))))
        out[cat] = kept
    return out
