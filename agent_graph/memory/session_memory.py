"""Session memory: what the agents learn about one target during one run, as plain JSON data.

The state's ``session_memory`` value is a dict with four lists of entries and one archetype::

    {"api_constraints": [entry], "known_fixes": [entry], "decisions": [entry],
     "coverage_strategies": [entry],
     "archetype": {"identified_archetype", "confidence", "reasoning", "source", "timestamp"}}

    entry = {"type", "content", "confidence": "HIGH" | "MEDIUM" | "LOW", "source", "timestamp"}
    # api_constraints and known_fixes may add "rules" (fuzzkit.guidance_facts.Rule dumps),
    # shown as a rules block under the category's bullets;
    # known_fixes add "success" and "error_signature"; decisions add "decision_type";
    # coverage_strategies add "target_functions"; consolidated entries add "count",
    # "sources" and "recorded_confidence" (the highest confidence recorded before any bump).

Every function here is pure: it returns a new dict and never changes its argument, so a node
returns ``{"session_memory": add_...(state["session_memory"], ...)}``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from agent_graph.memory.tokens import count_text_tokens
from fuzzkit.guidance_facts import Rule, render_rules, rules_of

CATEGORIES = ("api_constraints", "archetype", "known_fixes", "decisions", "coverage_strategies")
LIST_CATEGORIES = ("api_constraints", "known_fixes", "decisions", "coverage_strategies")
CONFIDENCES = ("LOW", "MEDIUM", "HIGH")
HEADERS = {
    "api_constraints": "### API constraints",
    "archetype": "### Archetype",
    "known_fixes": "### Known fixes",
    "decisions": "### Decisions",
    "coverage_strategies": "### Coverage strategies",
}
CONFIDENCE_RANK = {c: i for i, c in enumerate(CONFIDENCES)}

Memory = dict[str, Any]


def empty_session_memory() -> Memory:
    """A session memory with every category present and empty."""
    return {c: ({} if c == "archetype" else []) for c in CATEGORIES}


def copy_session_memory(memory: Mapping[str, Any] | None) -> Memory:
    """A deep copy with every category present, so results share nothing with their input."""
    out: Memory = copy.deepcopy(dict(memory or {}))
    for cat in LIST_CATEGORIES:
        out[cat] = list(out.get(cat) or [])
    out["archetype"] = dict(out.get("archetype") or {})
    return out


def _confidence(value: str) -> str:
    norm = str(value).strip().upper()
    if norm not in CONFIDENCE_RANK:
        raise ValueError(f"confidence must be one of HIGH, MEDIUM, LOW; got {value!r}")
    return norm


def _text(value: str, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{what} must be a non-empty string; got {value!r}")
    return value.strip()


def _stamp(now: datetime | None) -> str:
    moment = now or datetime.now(UTC)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="seconds")


def _append(memory: Mapping[str, Any] | None, category: str, entry: dict[str, Any]) -> Memory:
    out = copy_session_memory(memory)
    out[category].append(entry)
    return out


def add_api_constraint(
    memory: Mapping[str, Any] | None,
    constraint: str,
    confidence: str = "MEDIUM",
    source: str = "function_analyzer",
    now: datetime | None = None,
    rules: Sequence[Rule] = (),
) -> Memory:
    """Record an API usage rule, e.g. "call acme_free on every parsed object".

    ``rules``: what it asks as data (:class:`fuzzkit.guidance_facts.Rule`); the prompt carries
    them in a rules block under the constraints.
    """
    entry: dict[str, Any] = {"type": "api_constraint", "content": _text(constraint, "constraint"),
             "confidence": _confidence(confidence), "source": source, "timestamp": _stamp(now)}
    if rules:
        entry["rules"] = [r.model_dump(exclude_defaults=True) for r in rules]
    return _append(memory, "api_constraints", entry)


def set_archetype(
    memory: Mapping[str, Any] | None,
    archetype: str,
    confidence: str,
    reasoning: str,
    source: str = "function_analyzer",
    now: datetime | None = None,
) -> Memory:
    """Set the identified API archetype (replaces any earlier one)."""
    out = copy_session_memory(memory)
    out["archetype"] = {
        "identified_archetype": _text(archetype, "archetype"),
        "confidence": _confidence(confidence), "reasoning": reasoning.strip(),
        "source": source, "timestamp": _stamp(now),
    }
    return out


def add_known_fix(
    memory: Mapping[str, Any] | None,
    fix_description: str,
    success: bool,
    confidence: str = "MEDIUM",
    source: str = "enhancer",
    error_signature: str = "",
    now: datetime | None = None,
    rules: Sequence[Rule] = (),
) -> Memory:
    """Record a fix that was tried, whether it worked, and the error it addressed.

    ``rules``: what a later draft should repeat, as data; only a fix that worked shows them.
    """
    entry: dict[str, Any] = {"type": "known_fix", "content": _text(fix_description, "fix_description"),
             "confidence": _confidence(confidence), "source": source, "timestamp": _stamp(now),
             "success": bool(success), "error_signature": error_signature.strip()}
    if rules:
        entry["rules"] = [r.model_dump(exclude_defaults=True) for r in rules]
    return _append(memory, "known_fixes", entry)


def add_fix_results(memory: Mapping[str, Any] | None, fixes: Iterable[str], built: bool,
                    rules: Iterable[Mapping[str, Any] | Rule] = ()) -> Memory:
    """Each claimed fix, judged by whether the harness it produced built (LOW confidence if not).

    Each rule goes with the fix whose line it comes with (its ``text``); the others with the first.
    """
    out = copy_session_memory(memory)
    lines = list(filter(None, (f.strip() for f in fixes)))
    given = rules_of(rules)
    for i, fix in enumerate(lines):
        own = [r for r in given if r.text.strip() == fix or (i == 0 and r.text.strip() not in lines)]
        out = add_known_fix(out, fix, success=built, confidence="HIGH" if built else "LOW", rules=own)
    return out


def add_decision(
    memory: Mapping[str, Any] | None,
    decision_type: str,
    reasoning: str,
    source: str = "supervisor",
    now: datetime | None = None,
) -> Memory:
    """Log a decision (e.g. a route and why); decisions are facts, so confidence is HIGH."""
    return _append(memory, "decisions", {
        "type": "decision", "decision_type": _text(decision_type, "decision_type"),
        "content": _text(reasoning, "reasoning"), "confidence": "HIGH", "source": source,
        "timestamp": _stamp(now),
    })


def add_coverage_strategy(
    memory: Mapping[str, Any] | None,
    strategy: str,
    confidence: str = "MEDIUM",
    source: str = "coverage_analyzer",
    target_functions: Sequence[str] = (),
    now: datetime | None = None,
) -> Memory:
    """Record a way to reach more code, optionally naming the functions it aims at."""
    return _append(memory, "coverage_strategies", {
        "type": "coverage_strategy", "content": _text(strategy, "strategy"),
        "confidence": _confidence(confidence), "source": source, "timestamp": _stamp(now),
        "target_functions": [str(f) for f in target_functions],
    })


def when_of(entry: Mapping[str, Any]) -> float:
    """The entry's timestamp in seconds (-inf when it has none or an unreadable one: oldest)."""
    try:
        moment = datetime.fromisoformat(str(entry.get("timestamp", "")))
    except ValueError:
        return float("-inf")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def rank_of(entry: Mapping[str, Any]) -> int:
    """The entry's confidence as a number: LOW 0, MEDIUM 1, HIGH 2."""
    return CONFIDENCE_RANK.get(str(entry.get("confidence", "")).upper(), 0)


def _one_line(text: Any) -> str:
    return " ".join(str(text).split())


def _rules_shown(category: str, entries: Sequence[Mapping[str, Any]]) -> list[Rule]:
    """The rules a category's entries carry, in order (of the known fixes, those that worked)."""
    kept = [e for e in entries if category != "known_fixes" or e.get("success")]
    return rules_of(r for e in kept for r in e.get("rules") or [])


def _render(category: str, entry: Mapping[str, Any]) -> str:
    conf = str(entry.get("confidence", "")).upper() or "?"
    if category == "archetype":
        line = f"- [{conf}] {entry.get('identified_archetype', '')}"
        reasoning = _one_line(entry.get("reasoning", ""))
        return f"{line}: {reasoning}" if reasoning else line
    line = f"- [{conf}] "
    if category == "known_fixes":
        line += "worked: " if entry.get("success") else "failed: "
    if category == "decisions":
        line += f"{entry.get('decision_type', '')}: "
    line += _one_line(entry.get("content", ""))
    notes = []
    if entry.get("error_signature"):
        notes.append(f"error: {_one_line(entry['error_signature'])}")
    if entry.get("target_functions"):
        notes.append("targets: " + ", ".join(entry["target_functions"]))
    if int(entry.get("count", 1)) > 1:
        notes.append(f"seen {entry['count']}x")
    return line + (f" ({'; '.join(notes)})" if notes else "")


def format_session_memory(memory: Mapping[str, Any] | None, categories: Iterable[str]) -> str:
    """The requested categories as a Markdown prompt section; ``""`` when none has content.

    Sections come in :data:`CATEGORIES` order whatever the order asked; entries are ordered
    highest confidence first, then newest (decisions: newest first).

    Raises:
        ValueError: a requested category is not one of :data:`CATEGORIES`.
    """
    wanted = set(categories)
    unknown = sorted(wanted - set(CATEGORIES))
    if unknown:
        raise ValueError(f"unknown session memory categories {unknown}; valid: {CATEGORIES}")
    memory = memory or {}
    sections: list[str] = []
    for cat in CATEGORIES:
        if cat not in wanted:
            continue
        if cat == "archetype":
            entries = [memory["archetype"]] if (memory.get("archetype") or {}).get(
                "identified_archetype") else []
        elif cat == "decisions":
            entries = sorted(memory.get(cat) or [], key=when_of, reverse=True)
        else:
            entries = sorted(memory.get(cat) or [], key=lambda e: (rank_of(e), when_of(e)),
                             reverse=True)
        if entries:
            lines = [HEADERS[cat], *(_render(cat, e) for e in entries)]
            block = render_rules(_rules_shown(cat, entries))
            sections.append("\n".join([*lines, block] if block else lines))
    if not sections:
        return ""
    return "## Session memory\n\n" + "\n\n".join(sections) + "\n"


def memory_size_tokens(memory: Mapping[str, Any] | None, model: str = "") -> int:
    """Tokens the whole memory takes when rendered into a prompt (all categories)."""
    return count_text_tokens(format_session_memory(memory, CATEGORIES), model)
