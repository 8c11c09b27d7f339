"""MaTTS, memory-aware test-time scaling: more trajectories per target, better lessons from them.

Parallel scaling runs the same target N times (``matts.n``, default 3) at a higher temperature
(``matts.temperature``), keeps the best attempt as the target's result, and extracts lessons
from all N at once with the contrastive prompt. Sequential scaling (the paper's
self-refinement) asks the model, for ``matts.refine_rounds`` rounds, to re-examine its previous
attempt within one trajectory; the rounds are steps of that one trajectory. Off by default.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from long_term_memory.experience.config import ExperienceConfig
from long_term_memory.experience.extraction import ExtractionKind, extraction_kind
from long_term_memory.experience.models import Outcome
from long_term_memory.experience.trajectory import Trajectory

REFINE_INSTRUCTION = (
    "Important: before you answer, re-examine your previous attempt for this target step by step: "
    "the build errors, the fuzz run, the coverage and any crash it produced. Keep what the "
    "measurements show worked, change what they show failed, and say in your notes what you "
    "changed and why."
)


@dataclass(frozen=True)
class AttemptSpec:
    """One trajectory to run for a target."""

    attempt: int
    temperature: float | None  # None: the run's own sampling settings
    max_tokens: int | None
    refine_rounds: int = 0


def attempt_specs(config: ExperienceConfig) -> list[AttemptSpec]:
    """The attempts for one target: one plain attempt unless MaTTS is on."""
    m = config.matts
    if not m.enabled:
        return [AttemptSpec(0, None, None)]
    if m.mode == "sequential":
        return [AttemptSpec(0, None, m.max_tokens, refine_rounds=m.refine_rounds)]
    return [AttemptSpec(i, m.temperature, m.max_tokens) for i in range(m.n)]


def refinement_prompt(round_index: int, previous_summary: str) -> str:
    """The extra instruction for a sequential self-refinement round (1-based)."""
    return (
        f"## Self-refinement (round {round_index})\n"
        f"Previous attempt: {' '.join(previous_summary.split())}\n\n{REFINE_INSTRUCTION}"
    )


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
