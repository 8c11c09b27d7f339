"""MaTTS, memory-aware test-time scaling: more trajectories per target, better lessons from them.

Parallel scaling runs the same target N times (``matts.n``, default 3) at a higher temperature
(``matts.temperature``), keeps the best attempt as the target's result, and extracts lessons
from all N at once with the contrastive prompt. Sequential scaling (the paper's
self-refinement) runs one trajectory as ``1 + matts.refine_rounds`` rounds: round r > 0 starts
from round r - 1's best harness, and the roles that write code get a ``## Self-refinement``
section (:func:`refinement_seed` builds it) that summarizes the earlier rounds' measured outcomes
and asks the model to re-examine its previous attempt. The best round is the target's result and
one self-contrast extraction (:func:`refinement_extraction_prompt`) learns from all rounds. Off
by default.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from long_term_memory.directions_facts import DirectionsFacts, render_directions
from long_term_memory.experience.config import ExperienceConfig
from long_term_memory.experience.extraction import (
    ExtractionKind,
    build_extraction_prompt,
    extraction_kind,
)
from long_term_memory.experience.models import Outcome
from long_term_memory.experience.trajectory import Trajectory

REFINE_INSTRUCTION = (
    "Important: before you answer, re-examine your previous attempt for this target step by step: "
    "the build errors, the fuzz run, the coverage and any crash it produced. Keep what the "
    "measurements show worked, change what they show failed, and say in your notes what you "
    "changed and why."
)
REFINEMENT_KEY = "refinement"  # the ``extras`` entry a refinement round is seeded with
MAX_DIRECTIONS = 12  # directions of earlier rounds shown in the refinement section
_ERROR = re.compile(r"\berror: .*")


@dataclass(frozen=True)
class AttemptSpec:
    """One trajectory to run for a target."""

    attempt: int
    temperature: float | None  # None: the run's own sampling settings
    max_tokens: int | None
    refine_rounds: int = 0


def attempt_specs(config: ExperienceConfig) -> list[AttemptSpec]:
    """The attempts for one target: one plain attempt unless MaTTS is on.

    Parallel: ``n`` attempts at ``matts.temperature``. Sequential: one trajectory carrying
    ``refine_rounds`` (its rounds come from :func:`round_specs`), at the run's own temperature.
    """
    m = config.matts
    if not m.enabled:
        return [AttemptSpec(0, None, None)]
    if m.mode == "sequential":
        return [AttemptSpec(0, None, m.max_tokens, refine_rounds=m.refine_rounds)]
    return [AttemptSpec(i, m.temperature, m.max_tokens) for i in range(m.n)]


def round_specs(spec: AttemptSpec) -> list[AttemptSpec]:
    """The rounds of a sequential trajectory: the first attempt, then ``refine_rounds`` refinements."""
    return [AttemptSpec(r, spec.temperature, spec.max_tokens) for r in range(spec.refine_rounds + 1)]


def _one_line(text: Any, limit: int = 0) -> str:
    line = " ".join(str(text or "").split())
    return line[:limit].rstrip() + "..." if limit and len(line) > limit else line


def refinement_prompt(
    round_index: int,
    previous_summary: str,
    earlier: Sequence[str] = (),
    directions: Sequence[str] = (),
    start: str = "",
    failed: Sequence[str] = (),
) -> str:
    """The ``## Self-refinement`` section of a sequential refinement round (1-based).

    Args:
        round_index: The refinement round (round 0 is the first attempt).
        previous_summary: The measured outcome of the round before.
        earlier: One line per round before that one.
        directions: ``- [Outcome] direction (evidence)`` bullets of the earlier rounds.
        start: What the round starts from (the previous best harness, or nothing).
        failed: The failed directions of ``directions``, which follow them as a ``directions``
            facts block (the tabu list the offline model reads).
    """
    parts = [f"## Self-refinement (round {round_index})\nPrevious attempt: {_one_line(previous_summary)}"]
    if earlier:
        parts.append("Earlier rounds:\n" + "\n".join(f"- {_one_line(line)}" for line in earlier))
    if directions:
        parts.append("Directions tried in earlier rounds:\n" + "\n".join(directions))
    if block := render_directions(DirectionsFacts(failed=list(failed))):
        parts.append(block)
    if start:
        parts.append(_one_line(start))
    return "\n\n".join([*parts, REFINE_INSTRUCTION])


def round_summary(state: Mapping[str, Any], outcome: Outcome) -> str:
    """One line of a finished round: the measured outcome, best version, error or crash, stop."""
    parts = [outcome.summary()]
    best = state.get("best") or {}
    if best.get("version"):
        parts.append(f"best harness v{best['version']}")
    errors = _ERROR.findall(str((state.get("build") or {}).get("errors") or ""))
    if not outcome.compiles and errors:
        parts.append(f"last build error: {_one_line(errors[0], 200)}")
    crash = state.get("crash") or {}
    if crash:
        what = crash.get("summary") or crash.get("signature") or ""
        parts.append(f"crash {crash.get('kind') or '?'}: {_one_line(what, 160)}")
    if outcome.termination_reason:
        parts.append(f"stopped: {_one_line(outcome.termination_reason, 160)}")
    return "; ".join(parts)


def _direction_line(entry: Mapping[str, Any], index: int, best_version: int) -> tuple[str, bool]:
    """``- [Outcome] direction (round i: evidence)``, and whether it is shown as failed.

    A direction measured after its round's best version gained nothing for the trajectory (the
    round ended on an earlier version): it is shown as failed, with the round's own label kept.
    """
    outcome = _one_line(entry.get("outcome")) or "?"
    notes = []
    found = re.fullmatch(r"v(\d+)", _one_line(entry.get("source_ref")))
    if best_version and found and int(found.group(1)) > best_version and outcome != "Failed":
        notes.append(f"{outcome}, no gain over the round's best v{best_version}")
        outcome = "Failed"
    if _one_line(entry.get("evidence")):
        notes.append(_one_line(entry.get("evidence"), 160))
    detail = f"round {index}" + (f": {'; '.join(notes)}" if notes else "")
    return (f"- [{outcome}] {_one_line(entry.get('direction'), 200)} ({detail})",
            outcome.casefold() == "failed")


def _directions(states: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[str]]:
    """The earlier rounds' directions, one bullet each, a later record winning; the failed ones' texts."""
    seen: dict[str, tuple[str, bool, str]] = {}
    for index, state in enumerate(states):
        best_version = int((state.get("best") or {}).get("version") or 0)
        for entry in (state.get("local_memory") or {}).get("attempted_directions") or []:
            if not isinstance(entry, Mapping) or not _one_line(entry.get("direction")):
                continue
            key = _one_line(entry["direction"], 200).casefold()
            seen.pop(key, None)
            seen[key] = (*_direction_line(entry, index, best_version), _one_line(entry["direction"], 200))
    kept = list(seen.values())[-MAX_DIRECTIONS:]
    return [line for line, _, _ in kept], [text for _, failed, text in kept if failed]


def start_harness(states: Sequence[Mapping[str, Any]]) -> tuple[str, int, int, bool]:
    """Where the next round starts: ``(code, round, version, ran)``; ``("", -1, 0, False)`` for none.

    The previous round's best harness; when that round measured none, the latest earlier best;
    when no round ever ran a harness, the previous round's last harness (it gets repaired).
    """
    for index in range(len(states) - 1, -1, -1):
        best = states[index].get("best") or {}
        if best.get("code"):
            return str(best["code"]), index, int(best.get("version") or 0), True
    if states and states[-1].get("harness_code"):
        last = states[-1]
        return str(last["harness_code"]), len(states) - 1, int(last.get("harness_version") or 0), False
    return "", -1, 0, False


def refinement_seed(
    states: Sequence[Mapping[str, Any]], outcomes: Sequence[Outcome], rounds: int
) -> dict[str, Any]:
    """State values that start refinement round ``len(states)`` of a sequential trajectory.

    The round starts from :func:`start_harness` as its version 1 (unless no round wrote any
    harness: then the prototyper writes one), and ``extras[REFINEMENT_KEY]["section"]`` is the
    ``## Self-refinement`` section the prototyper and enhancer prompts show.

    Raises:
        ValueError: no finished round to refine, or states and outcomes that do not match.
    """
    if not states or len(states) != len(outcomes):
        raise ValueError(
            f"a refinement round needs the finished rounds and their outcomes "
            f"({len(states)} states, {len(outcomes)} outcomes)"
        )
    round_index = len(states)
    lines = [
        f"round {i}: {round_summary(s, o)}" for i, (s, o) in enumerate(zip(states, outcomes, strict=True))
    ]
    code, source, version, ran = start_harness(states)
    if not code:
        start = "No earlier round wrote a harness: write a new one that avoids what failed."
    elif ran:
        start = (
            f"This round starts from the best harness of round {source} (its v{version}), "
            "shown as the current harness and measured again; improve it rather than start over."
        )
    else:
        start = (
            f"No earlier round ran a harness: this round starts from round {source}'s last "
            f"harness (its v{version}), which did not work; repair it."
        )
    directions, failed = _directions(states)
    section = refinement_prompt(round_index, lines[-1], lines[:-1], directions, start, failed)
    seed: dict[str, Any] = {
        "extras": {
            REFINEMENT_KEY: {
                "round": round_index,
                "rounds": rounds,
                "start": {"round": source, "version": version, "ran": ran},
                "previous": lines[-1],
                "section": section,
            }
        }
    }
    if code:
        seed.update(harness_code=code, harness_version=1, counters={"harness_versions": 1})
    return seed


def refinement_section(state: Mapping[str, Any]) -> str:
    """The ``## Self-refinement`` section of a refinement round's prompts ('' in any other run)."""
    return str(((state.get("extras") or {}).get(REFINEMENT_KEY) or {}).get("section") or "")


def outcome_rank(outcome: Outcome) -> tuple[float, ...]:
    """Best-of-N order: real bug, then running harness, coverage, then fewer fixes and calls."""
    return (
        float(outcome.crashed_real),
        float(outcome.compiles and outcome.runs),
        outcome.lines_percent,
        outcome.branches_percent,
        -float(outcome.fix_rounds),
        -float(outcome.model_calls),
        -float(outcome.attempt),
    )


def best_attempt(outcomes: Sequence[Outcome]) -> int:
    """Index of the attempt whose result the target reports.

    Raises:
        ValueError: no outcomes.
    """
    if not outcomes:
        raise ValueError("no attempts to choose from")
    return max(range(len(outcomes)), key=lambda i: outcome_rank(outcomes[i]))


def matts_extraction_kind(trajectories: Sequence[Trajectory]) -> ExtractionKind:
    """Contrastive for several parallel trajectories, else the single trajectory's label."""
    return extraction_kind(trajectories)


def refinement_extraction_prompt(
    trajectories: Sequence[Trajectory], max_chars: int = 6000
) -> tuple[str, dict[str, str]]:
    """The contrastive prompt over the rounds of one sequential trajectory (self-contrast).

    Trajectory k + 1 is refinement round k; the summary says so, and each block names its round,
    so the model compares what each refinement changed with what the measurements did.

    Raises:
        ValueError: fewer than two rounds (a single trajectory is not refined).
    """
    if len(trajectories) < 2:
        raise ValueError(f"self-contrast needs at least two rounds, got {len(trajectories)}")
    template, variables = build_extraction_prompt("contrastive", trajectories, max_chars)
    variables["summary"] = (
        f"{len(trajectories)} successive self-refinement rounds of one trajectory: trajectory 1 is "
        "the first attempt; trajectory k+1 is refinement round k, which started from the best "
        "harness of the rounds before and was asked to re-examine the previous attempt. Compare "
        "consecutive rounds: what each refinement changed and whether the measurements improved. "
        + variables["summary"].split(": ", 1)[-1]
    )

    def name(match: re.Match[str]) -> str:
        n = int(match.group(2))
        what = "the first attempt" if n == 1 else f"refinement round {n - 1}"
        return f"{match.group(1)}\nRound {n - 1}: {what}"

    variables["trajectories"] = re.sub(
        r"^(### Trajectory (\d+): [A-Z]+)$", name, variables["trajectories"], flags=re.M
    )
    return template, variables


def matts_record(mode: str, outcomes: Sequence[Outcome], best: int) -> dict[str, Any]:
    """The ``matts`` entry of a target's ``result.json``."""
    return {
        "mode": mode,
        "rounds" if mode == "sequential" else "attempts": len(outcomes),
        "best": best,
        "lines": [o.lines_percent for o in outcomes],
        "model_calls": [o.model_calls for o in outcomes],
    }
