"""The offline model's local-memory skills: the extraction job, and the tabu list it honours.

:func:`extract` answers ``prompts/local_memory_extraction.txt`` from what the prompt shows: the
measurement block (outcome, coverage, versions, the directions the change followed; never the
lines beside it), the calls the diff adds and removes, and the current direction list (updated
in place, merged, never duplicated).
:func:`tabu_names` reads the ``directions`` facts block a rendered local memory carries: the API
functions of failed directions, except those the prompt's new evidence names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

from agent_graph.memory.code_memory_c import C_KEYWORDS, LIBC, blank_comments_and_literals, called_names
from agent_graph.memory.local_memory import MEASUREMENT_KIND
from agent_graph.memory.local_memory_schema import MeasurementFacts, api_tokens, clip_line, same_direction
from agents.offline.prompt_reader import PromptFacts, identifiers
from fuzzkit.facts_block import read_facts
from long_term_memory.directions_facts import read_directions

Reply = tuple[dict[str, Any], None]
_PARENS = re.compile(r"\([^()]*\)")  # in a direction a model wrote
_MAX_EVIDENCE = 300


def _measured(facts: PromptFacts) -> MeasurementFacts | None:
    """The measurement block of the prompt (None when it has none).

    Raises:
        FactsBlockError: the block does not fit :class:`MeasurementFacts`.
    """
    return read_facts(facts.text("Measurement"), MEASUREMENT_KIND, MeasurementFacts)


def _numbers(measured: MeasurementFacts | None) -> tuple[str, str]:
    if measured is None:
        return "?", "?"
    return f"{measured.old_coverage:.2f}", f"{measured.new_coverage:.2f}"


def _version(measured: MeasurementFacts | None) -> tuple[str, str, str]:
    """(version id, parent id, operator) of the measured change."""
    if measured is None:
        return "new", "old", "improve"
    return measured.version, measured.parent, measured.operator


def diff_calls(diff: str) -> tuple[list[str], list[str]]:
    """Functions the new version calls that the old did not, and those it no longer calls."""
    sides: dict[str, list[str]] = {"+": [], "-": []}
    for line in diff.splitlines():
        if line[:1] in sides and not line.startswith(("+++", "---")):
            sides[line[0]].append(line[1:])
    code = {k: blank_comments_and_literals("\n".join(v)) for k, v in sides.items()}
    plus = [c for c in called_names(code["+"]) if c not in LIBC and c not in C_KEYWORDS]
    minus = [c for c in called_names(code["-"]) if c not in LIBC and c not in C_KEYWORDS]
    return [c for c in plus if c not in minus], [c for c in minus if c not in plus]


def _stated(measured: MeasurementFacts | None, added: list[str]) -> list[str]:
    stated = measured.directions if measured else []
    if stated:
        return stated
    return [f"call {name}" for name in added] or ["unrecorded change"]


def _current(facts: PromptFacts) -> list[dict[str, Any]]:
    try:
        rows = json.loads(facts.code("Current directions") or "[]")
    except json.JSONDecodeError:
        return []
    return [dict(r) for r in rows if isinstance(r, dict) and str(r.get("direction", "")).strip()]


def _merge_duplicates(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per direction: a later record of the same direction updates the earlier one."""
    out: list[dict[str, Any]] = []
    for row in rows:
        twin = next((k for k, kept in enumerate(out) if same_direction(kept["direction"],
                                                                        row["direction"])), None)
        if twin is None:
            out.append(row)
        else:
            out[twin] = {**row, "direction": out[twin]["direction"]}
    return out


def _change_text(added: list[str], removed: list[str]) -> str:
    parts = []
    if added:
        parts.append("now calls " + ", ".join(added))
    if removed:
        parts.append("no longer calls " + ", ".join(removed))
    return "; ".join(parts) or "same API calls, different arguments or control flow"


def extract(facts: PromptFacts) -> Reply:
    """Local memory extractor: updated directions and at most one lesson, as the prompt asks."""
    measured = _measured(facts)
    outcome = measured.outcome if measured else "Noise"
    old, new = _numbers(measured)
    version, parent, operator = _version(measured)
    diff = facts.code("Code diff")
    added, removed = diff_calls(diff)
    change = _change_text(added, removed)
    rows = _merge_duplicates(_current(facts))
    repeated_failure = False
    for direction in _stated(measured, added):
        evidence = f"line coverage {old}% -> {new}%; {change}"
        index = next((k for k, r in enumerate(rows) if same_direction(r["direction"], direction)),
                     None)
        if index is None:
            rows.append({"direction": direction, "outcome": outcome, "source_ref": version,
                         "evidence": evidence[:_MAX_EVIDENCE]})
            continue
        previous = rows[index]
        if previous.get("outcome") == "Failed" and outcome != "Success":
            # Retried without the result changing: it stays on the tabu list, now twice backed.
            repeated_failure = True
            outcome_here = "Failed"
            evidence = f"failed again in {version} ({evidence}); before: {previous.get('evidence', '')}"
        else:
            outcome_here = outcome
        rows[index] = {"direction": previous["direction"], "outcome": outcome_here,
                       "source_ref": version, "evidence": evidence[:_MAX_EVIDENCE]}
    item = None
    if outcome != "Noise" and diff.strip() not in ("", "(no code change)") and not repeated_failure:
        item = _lesson(measured, outcome, _stated(measured, added)[0], change, operator,
                       (old, new, version, parent))
    rows = [{**row, "direction": clip_line(str(row["direction"]))} for row in rows]  # the schema's limit
    return {"updated_directions": rows, "new_memory_item": item}, None


def _lesson(measured: MeasurementFacts | None, outcome: str, direction: str, change: str, operator: str,
            refs: tuple[str, str, str, str]) -> dict[str, Any]:
    old, new, version, parent = refs
    context = f"the target is a {measured.archetype or 'unknown'}" if measured else "the same target"
    verb = "raised" if outcome == "Success" else "lowered"
    title = direction[:1].upper() + direction[1:80]
    insight = ("Calling more of the API on objects the harness already builds executes library "
               "code the input alone does not reach." if outcome == "Success" else
               "Do not repeat it unless new evidence says why it would work now.")
    return {
        "type": "Success" if outcome == "Success" else "Failure",
        "title": title if outcome == "Success" else f"Avoid: {title}",
        "description": f"{verb.capitalize()} line coverage from {old}% to {new}% "
                       f"({version}, parent {parent}).",
        "content": f"The harness {change}. {insight}",
        "related_operator": operator,
        "evidence": {"code_change": change, "metrics_delta": f"line coverage {old}% -> {new}%",
                     "context": context},
    }


def tabu_names(facts: PromptFacts, api_names: Collection[str]) -> list[str]:
    """API functions named by failed directions and not by any new evidence.

    Reads the ``directions`` facts blocks of every section of the prompt (the rendered local
    memory, a MaTTS round's earlier directions), wherever they are put; never their lines.

    Raises:
        FactsBlockError: a directions block does not fit :class:`DirectionsFacts`.
    """
    names = {n.casefold(): n for n in api_names}
    failed: set[str] = set()
    cleared: set[str] = set()
    for section in facts.sections.values():
        for block in read_directions(section):
            for direction in block.failed:
                # the direction without its parenthesized parts: a type it names, then its detail
                bare = _PARENS.sub(" ", _PARENS.sub(" ", direction))
                failed |= {names[t] for t in api_tokens(bare, names) if t in names}
            for evidence in block.new_evidence:
                cleared |= {names[t.casefold()] for t in identifiers(evidence) if t.casefold() in names}
    return sorted(failed - cleared)
