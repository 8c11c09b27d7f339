"""SE-Agent local (working) memory of the coverage loop: metric branch, extraction, tabu rule.

After each measured harness version the memory manager (1) decides the branch from the
line-coverage delta (:func:`branch_for`: a change within the fuzzer's noise is noise), (2) asks
the ``local_memory_extractor`` role with :func:`extraction_variables` (diff, old and new
coverage, current directions), (3) folds the reply in with :func:`apply_extraction`
(``updated_directions`` replaces the list whole, the new lesson is appended; an unusable reply
changes nothing and says why), and (4) calls :func:`compress`. The enhancer and the coverage
analyzer read :func:`render_local_memory`. Every function is pure; the shape is documented in
:mod:`agent_graph.memory.local_memory_schema`.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Literal

from agent_graph.memory.local_memory_compress import compress, failure_mode, item_gain, severity
from agent_graph.memory.local_memory_render import local_memory_tokens, render_local_memory
from agent_graph.memory.local_memory_schema import (
    MAX_DIRECTIONS,
    Direction,
    ExtractionReply,
    MeasurementFacts,
    MemoryItem,
    clip_line,
    copy_memory,
    empty_local_memory,
    same_direction,
)
from fuzzkit.facts_block import render_facts

Branch = Literal["success", "failure", "noise"]
MAX_DIFF_LINES = 200

__all__ = [
    "MEASUREMENT_KIND", "Direction", "ExtractionReply", "MeasurementFacts", "MemoryItem",
    "apply_extraction", "branch_for", "compress",
    "describe_approach", "empty_local_memory", "extraction_variables", "failed_directions",
    "failure_mode", "harness_diff", "is_tabu", "item_gain", "local_memory_tokens",
    "metrics_delta", "record_failed_attempt", "render_local_memory",
    "set_global_status", "severity",
]


def branch_for(old_cov: float, new_cov: float, noise: float) -> Branch:
    """The extraction branch of a measured coverage change.

    ``success`` for a gain of at least ``noise`` points, ``failure`` for a loss of at least
    ``noise`` (with ``noise=0``: any gain / no gain), ``noise`` in between.

    Raises:
        ValueError: ``noise`` is negative.
    """
    if noise < 0:
        raise ValueError(f"noise must be >= 0 coverage points, got {noise}")
    delta = new_cov - old_cov
    if delta > 0 and delta >= noise:
        return "success"
    if delta <= 0 and delta <= -noise:
        return "failure"
    return "noise"


def metrics_delta(old_cov: float, new_cov: float) -> str:
    """The measured delta as lessons store it, e.g. ``line coverage 31.00% -> 33.50% (+2.50 points)``."""
    return f"line coverage {old_cov:.2f}% -> {new_cov:.2f}% ({new_cov - old_cov:+.2f} points)"


def harness_diff(old_code: str, new_code: str, old_name: str = "old/harness.c",
                 new_name: str = "new/harness.c", max_lines: int = MAX_DIFF_LINES) -> str:
    """Unified diff of two harness versions, cut after ``max_lines`` lines (the cut is marked)."""
    lines = list(difflib.unified_diff(old_code.splitlines(), new_code.splitlines(),
                                      old_name, new_name, lineterm="", n=2))
    if not lines:
        return "(no code change)"
    if len(lines) > max_lines:
        lines = lines[:max_lines] + [f"... ({len(lines) - max_lines} more diff lines not shown)"]
    return "\n".join(lines)


def _directions_json(memory: Mapping[str, Any]) -> str:
    rows = [d for d in memory.get("attempted_directions") or [] if isinstance(d, Mapping)]
    if not rows:
        return "[]"
    return "[\n" + ",\n".join(json.dumps(dict(d), ensure_ascii=False) for d in rows) + "\n]"


_OUTCOME: dict[Branch, Literal["Success", "Failed", "Noise"]] = {
    "success": "Success", "failure": "Failed", "noise": "Noise"}
_BRANCH: dict[str, Branch] = {v: k for k, v in _OUTCOME.items()}
MEASUREMENT_KIND = "measurement"
_VERDICT = {
    "success": "SUCCESS (the gain is larger than the measurement noise)",
    "failure": "FAILURE (coverage dropped by more than the measurement noise)",
    "noise": "NOISE (the change is within the measurement noise: neither a gain nor a loss)",
}


def extraction_variables(
    memory: Mapping[str, Any] | None,
    *,
    target: str,
    archetype: str,
    old_code: str,
    new_code: str,
    old_coverage: float,
    new_coverage: float,
    noise: float,
    change: Sequence[str] = (),
    operator: str = "",
    source_ref: str = "",
    parent_ref: str = "",
    iteration: int = 0,
) -> dict[str, str]:
    """Values for ``prompts/local_memory_extraction.txt``.

    Args:
        memory: the current local memory (its directions go into the prompt).
        target: the target function's prototype.
        archetype: the API archetype the analyzer chose.
        old_code: the best harness so far (the parent).
        new_code: the harness just measured.
        old_coverage: the parent's line coverage, percent.
        new_coverage: the new version's line coverage, percent.
        noise: points of line coverage that repeat runs of one harness vary by.
        change: the directions the enhancer said it followed.
        operator: what produced the version (``improve`` or ``fix``).
        source_ref: the new version's id (``v5``).
        parent_ref: the parent's id (``v4``).
        iteration: the phase-2 iteration that measured it.
    """
    ref, parent = source_ref or "new", parent_ref or "old"
    facts = MeasurementFacts(
        outcome=_OUTCOME[branch_for(old_coverage, new_coverage, noise)], old_coverage=old_coverage,
        new_coverage=new_coverage, noise=noise, version=ref, parent=parent, iteration=iteration,
        operator=operator or "improve", directions=[" ".join(c.split()) for c in change if c.strip()],
        archetype=archetype)
    change_text = "\n".join([
        f"Operator: {facts.operator}",
        f"Version: {ref} (parent {parent}, iteration {iteration})",
        "Stated directions:",
        *([f"- {c}" for c in facts.directions] or ["- (none stated)"]),
    ])
    problem = (f"Fuzz target `{' '.join(target.split())}` (archetype: {archetype or 'unknown'}). "
               "The loop changes its libFuzzer harness to raise the library's line coverage.")
    return {
        "problem": problem,
        "metrics": _metrics_text(facts),
        "change": change_text,
        "diff": harness_diff(old_code, new_code, f"{parent}/harness.c", f"{ref}/harness.c"),
        "current_directions": _directions_json(memory or {}),
    }


def _metrics_text(facts: MeasurementFacts) -> str:
    """The Measurement section: its lines, then the same facts as a ``measurement`` block."""
    old, new, noise = facts.old_coverage, facts.new_coverage, facts.noise
    return "\n".join([
        f"- Old line coverage ({facts.parent}): {old:.2f}%",
        f"- New line coverage ({facts.version}): {new:.2f}%",
        f"- Delta: {new - old:+.2f} points; measurement noise: ±{noise:.2f} points",
        f"- Outcome: {_VERDICT[_BRANCH[facts.outcome]]}",
    ]) + "\n\n" + render_facts(MEASUREMENT_KIND, facts)


def apply_extraction(
    memory: dict[str, Any] | None,
    reply: ExtractionReply,
    *,
    source_ref: Mapping[str, Any] | None = None,
    metrics: str = "",
) -> tuple[dict[str, Any], str]:
    """Fold a validated extraction reply into the memory: ``(memory, reason to log)``.

    ``updated_directions`` replaces the direction list whole, except that a ``Failed`` direction
    the reply left out is kept (the tabu list must survive a reply that forgets it; a reply that
    lists the direction again decides its outcome); ``new_memory_item`` (unless null)
    is appended to the reasoning bank, with ``source_ref`` and ``metrics`` (the measured
    :func:`metrics_delta`), when given, overriding what the model wrote. Reading the model's
    text is the extractor role's job (:func:`agents.local_memory_extractor.fold_reply`).
    """
    out = copy_memory(memory)
    before = len(out["attempted_directions"])
    rows = [_with_calls(d.model_dump(), out["attempted_directions"]) for d in reply.updated_directions]
    kept = [row for row in out["attempted_directions"] if isinstance(row, Mapping)
            and row.get("outcome") == "Failed"
            and not any(same_direction(str(row.get("direction", "")), r["direction"]) for r in rows)]
    out["attempted_directions"] = [*rows, *kept][:MAX_DIRECTIONS]
    failed = sum(r.get("outcome") == "Failed" for r in out["attempted_directions"])
    reason = (f"directions {before} -> {len(out['attempted_directions'])} ({failed} failed"
              + (f", {len(kept)} kept that the reply left out)" if kept else ")"))
    item = reply.new_memory_item
    if item is None:
        return out, reason + "; no new lesson"
    record = item.model_dump()
    if source_ref:
        record["source_ref"] = dict(source_ref)
    if metrics:
        record["evidence"]["metrics_delta"] = metrics
    out["reasoning_bank"].append(record)
    return out, reason + f"; lesson added: {item.type} {item.title!r}"


def _with_calls(row: dict[str, Any], before: Sequence[Any]) -> dict[str, Any]:
    """``row`` with the ``calls`` the memory recorded for the same direction (a reply restates its text)."""
    calls = next((old["calls"] for old in before if isinstance(old, Mapping) and old.get("calls")
                  and same_direction(str(old.get("direction", "")), row["direction"])), None)
    return {**row, "calls": list(calls)} if calls else row


def set_global_status(
    memory: Mapping[str, Any] | None, *, iteration: int, best_coverage: float,
    best_harness_id: str, current_approach: str | None = None,
) -> dict[str, Any]:
    """The memory with its global status replaced (``current_approach=None`` keeps the old one)."""
    out = copy_memory(memory)
    status = out["global_status"]
    status.update(iteration=int(iteration), best_coverage=round(float(best_coverage), 2),
                  best_harness_id=str(best_harness_id))
    if current_approach is not None:
        status["current_approach"] = " ".join(current_approach.split())
    return out


def describe_approach(archetype: str, library_calls: Sequence[str], limit: int = 8) -> str:
    """A one-line approach, e.g. ``stateless_parser: acme_parse_len -> acme_free``."""
    calls = list(dict.fromkeys(library_calls))
    chain = " -> ".join(calls[:limit]) + (" -> ..." if len(calls) > limit else "")
    return f"{archetype}: {chain}" if chain else archetype


def record_failed_attempt(
    memory: Mapping[str, Any] | None, direction: str, evidence: str, source_ref: str,
    api_names: Collection[str] = (), calls: Sequence[str] = (),
) -> dict[str, Any]:
    """Record an attempt that was never measured (it did not build or run after the fix rounds).

    The matching direction becomes ``Failed`` with this evidence, or a new one is added.
    ``calls``: the library calls the attempt added, as data (the direction is a sentence).
    """
    out = copy_memory(memory)
    entry: dict[str, Any] = {"direction": clip_line(direction) or "unrecorded change", "outcome": "Failed",
                             "source_ref": source_ref, "evidence": " ".join(evidence.split())}
    if calls:
        entry["calls"] = [str(c) for c in calls]
    rows = out["attempted_directions"]
    for index, row in enumerate(rows):
        if same_direction(str(row.get("direction", "")), entry["direction"], api_names):
            rows[index] = {**entry, "direction": row.get("direction", entry["direction"])}
            return out
    rows.append(entry)
    return out


def failed_directions(memory: Mapping[str, Any] | None) -> list[str]:
    """The tabu list: directions whose recorded outcome is ``Failed``."""
    return [str(d.get("direction", "")) for d in (memory or {}).get("attempted_directions") or []
            if isinstance(d, Mapping) and d.get("outcome") == "Failed"]


def is_tabu(direction: str, memory: Mapping[str, Any] | None, new_evidence: str = "",
            api_names: Collection[str] = ()) -> bool:
    """True when ``direction`` repeats a failed one and ``new_evidence`` adds nothing.

    Evidence counts as new when it is non-blank and not already part of what the failed
    direction recorded.
    """
    fresh = " ".join(new_evidence.split()).casefold()
    for row in (memory or {}).get("attempted_directions") or []:
        if not isinstance(row, Mapping) or row.get("outcome") != "Failed":
            continue
        if not same_direction(str(row.get("direction", "")), direction, api_names):
            continue
        recorded = " ".join(str(row.get("evidence", "")).split()).casefold()
        if not fresh or fresh in recorded:
            return True
    return False
