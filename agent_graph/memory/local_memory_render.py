"""Local memory as the compact Markdown the enhancer and coverage analyzer read.

Heavy storage, light display: the JSON is flattened to values only (no keys), one bullet per
direction and per lesson (``- [Outcome] direction (evidence)``); the failed directions follow as
a ``directions`` facts block, the tabu list the offline model reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agent_graph.memory.tokens import count_text_tokens
from long_term_memory.directions_facts import DirectionsFacts, render_directions

EMPTY = "(none yet)"
TABU_RULE = (
    "Do not propose a [Failed] direction again unless you state new evidence that it can work now."
)
SUBHEADINGS = ("### Progress", "### Directions tried", "### Lessons", "### New evidence")


def _clean(value: Any) -> str:
    return " ".join(str(value or "").split())


def _status_line(status: Mapping[str, Any]) -> str:
    parts = []
    if status.get("iteration"):
        parts.append(f"iteration {int(status['iteration'])}")
    if status.get("best_harness_id") or status.get("best_coverage"):
        best = f"best line coverage {float(status.get('best_coverage') or 0.0):.2f}%"
        if status.get("best_harness_id"):
            best += f" (harness {_clean(status['best_harness_id'])})"
        parts.append(best)
    if status.get("current_approach"):
        parts.append(f"approach: {_clean(status['current_approach'])}")
    line = "; ".join(parts)
    return line[:1].upper() + line[1:]


def direction_line(entry: Mapping[str, Any]) -> str:
    """``- [Outcome] direction (source: evidence)``."""
    ref, why = _clean(entry.get("source_ref")), _clean(entry.get("evidence"))
    detail = f"{ref}: {why}" if ref and why else ref or why
    text = f"- [{_clean(entry.get('outcome')) or '?'}] {_clean(entry.get('direction'))}"
    return f"{text} ({detail})" if detail else text


def lesson_line(item: Mapping[str, Any]) -> str:
    """``- [Type] title: description content (change; delta; when)``."""
    evidence = item.get("evidence") or {}
    body = " ".join(p for p in (_clean(item.get("description")), _clean(item.get("content"))) if p)
    backing = [_clean(evidence.get("code_change")), _clean(evidence.get("metrics_delta"))]
    if evidence.get("context"):
        backing.append(f"applies when {_clean(evidence['context'])}")
    if item.get("related_operator"):
        backing.append(f"by {_clean(item['related_operator'])}")
    tail = "; ".join(b for b in backing if b)
    line = f"- [{_clean(item.get('type')) or '?'}] {_clean(item.get('title'))}: {body}"
    return f"{line} ({tail})" if tail else line


def render_local_memory(memory: Mapping[str, Any] | None, new_evidence: Sequence[str] = (),
                        facts: bool = True) -> str:
    """The memory as Markdown subsections (no JSON keys); ``(none yet)`` when it is empty.

    Args:
        memory: the state's ``local_memory``.
        new_evidence: facts learned since directions failed (a new API constraint, a fix
            that now builds); listed so a failed direction may be retried when they name it.
        facts: end with the failed directions and the new evidence as a ``directions`` facts
            block (:mod:`long_term_memory.directions_facts`), which the offline engine reads.
    """
    memory = memory or {}
    blocks = []
    status = _status_line(memory.get("global_status") or {})
    if status:
        blocks.append(f"{SUBHEADINGS[0]}\n{status}")
    directions = [d for d in memory.get("attempted_directions") or [] if isinstance(d, Mapping)]
    if directions:
        lines = [direction_line(d) for d in directions]
        if any(d.get("outcome") == "Failed" for d in directions):
            lines.append(TABU_RULE)
        blocks.append("\n".join([SUBHEADINGS[1], *lines]))
    items = [i for i in memory.get("reasoning_bank") or [] if isinstance(i, Mapping)]
    if items:
        blocks.append("\n".join([SUBHEADINGS[2], *(lesson_line(i) for i in items)]))
    evidence = [_clean(e) for e in new_evidence if _clean(e)]
    if evidence:
        blocks.append("\n".join([SUBHEADINGS[3], *(f"- {e}" for e in evidence)]))
    failed = [_clean(d.get("direction")) for d in directions
              if _clean(d.get("outcome")).casefold() == "failed"]
    block = render_directions(DirectionsFacts(failed=failed, new_evidence=evidence)) if facts else ""
    return "\n\n".join([*blocks, block] if block else blocks) if blocks else EMPTY


def local_memory_tokens(memory: Mapping[str, Any] | None, model: str = "") -> int:
    """Tokens of the rendered memory: what compression keeps under its threshold."""
    return count_text_tokens(render_local_memory(memory, facts=False), model)
