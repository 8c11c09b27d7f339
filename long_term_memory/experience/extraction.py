"""Extraction prompts: a finished trajectory (or N of them, for MaTTS) in, template variables out.

Labels come from the measured outcome, never from the model: a successful trajectory can only
go to ``experience_success``, a failed one only to ``experience_failure``, several only to
``experience_contrastive``; asking otherwise is an error (the swapped-label bug of published
implementations).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from long_term_memory.experience.trajectory import Step, Trajectory
from long_term_memory.experience.trajectory_steps import TrajectoryFacts, render_trajectory, step_line

ExtractionKind = Literal["success", "failure", "contrastive"]
TEMPLATES: dict[str, str] = {
    "success": "experience_success",
    "failure": "experience_failure",
    "contrastive": "experience_contrastive",
}
HARNESS_CHARS = 2500


class ExtractionLabelError(ValueError):
    """The requested prompt contradicts the measured outcome of the trajectories."""


def extraction_kind(trajectories: Sequence[Trajectory]) -> ExtractionKind:
    """The prompt the trajectories call for: one success, one failure, or contrastive."""
    if not trajectories:
        raise ValueError("no trajectory to extract from")
    if len(trajectories) > 1:
        return "contrastive"
    return "success" if trajectories[0].is_success else "failure"


def label(trajectory: Trajectory) -> str:
    """``SUCCESS`` or ``FAILURE`` from the measured outcome."""
    return "SUCCESS" if trajectory.is_success else "FAILURE"


def _kept(steps: Sequence[Step], budget: int) -> tuple[list[Step], int]:
    """The steps a prompt shows within ``budget`` characters of lines: ``(steps, index of the cut)``.

    A long trajectory keeps its beginning (how it started) and its end (how it finished); the
    index says where the steps left out were (``len(steps)`` when none were).
    """
    lines = [step_line(step) for step in steps]
    if len("\n".join(lines)) <= budget:
        return list(steps), len(steps)
    half = max(0, budget - 40) // 2
    head = used = 0
    for line in lines:
        if used + len(line) + 1 > half:
            break
        head, used = head + 1, used + len(line) + 1
    tail = used = 0
    for line in reversed(lines[head:]):
        if used + len(line) + 1 > half:
            break
        tail, used = tail + 1, used + len(line) + 1
    return [*steps[:head], *steps[len(steps) - tail:]], head


def trajectory_text(trajectory: Trajectory, budget: int) -> str:
    """A trajectory's steps as tagged lines, then the same steps as a ``trajectory`` facts block.

    The lines are what a person or a model reads; the block (:mod:`long_term_memory.experience.
    trajectory_steps`) is what the offline extractor reads, with the target and the measured outcome.
    """
    kept, cut = _kept(trajectory.steps, budget)
    omitted = len(trajectory.steps) - len(kept)
    lines = [step_line(step) for step in kept]
    if omitted:
        lines.insert(cut, f"- [...] {omitted} steps omitted")
    facts = TrajectoryFacts(success=trajectory.is_success, target=trajectory.target,
                            function=trajectory.function, archetype=trajectory.archetype,
                            outcome=trajectory.outcome, steps=kept, omitted=omitted)
    return "\n".join(lines or ["(no steps recorded)"]) + "\n\n" + render_trajectory(facts)


def _harness_excerpt(code: str, limit: int = HARNESS_CHARS) -> str:
    """The harness for an extraction prompt: multi-line comments out, then cut to ``limit``.

    A skeleton's documentation would otherwise fill the excerpt before the declarations a
    lesson's scope and action name.
    """
    code = re.sub(r"/\*.*?\*/", lambda m: "" if "\n" in m.group(0) else m.group(0), code, flags=re.S)
    code = re.sub(r"\n\s*\n(\s*\n)+", "\n\n", code).strip()
    if not code:
        return "(no harness)"
    return code if len(code) <= limit else code[:limit].rsplit("\n", 1)[0] + "\n/* ... truncated ... */"


def build_extraction_prompt(
    kind: ExtractionKind, trajectories: Sequence[Trajectory], max_chars: int = 6000
) -> tuple[str, dict[str, str]]:
    """``(template name, variables)`` for ``prompts.render``.

    Raises:
        ExtractionLabelError: ``kind`` contradicts the trajectories' measured outcomes (e.g.
            ``success`` for a failed target, or a single-trajectory kind for several).
        ValueError: no trajectories, or an unknown kind.
    """
    if kind not in TEMPLATES:
        raise ValueError(f"extraction kind must be one of {sorted(TEMPLATES)}, got {kind!r}")
    expected = extraction_kind(trajectories)
    if kind != expected:
        raise ExtractionLabelError(
            f"asked for {kind!r} extraction, but the measured outcome calls for {expected!r} "
            f"({', '.join(label(t) for t in trajectories)})"
        )
    first = trajectories[0]
    if kind != "contrastive":
        return TEMPLATES[kind], {
            "task": first.query,
            "outcome": f"{label(first)}: {first.outcome.summary()}",
            "trajectory": trajectory_text(first, max_chars),
            "harness": _harness_excerpt(first.harness),
        }
    share = max(400, max_chars // len(trajectories))
    blocks = []
    for n, t in enumerate(trajectories, 1):
        blocks.append(
            f"### Trajectory {n}: {label(t)}\nOutcome: {t.outcome.summary()}\n"
            f"{trajectory_text(t, share)}\n```c\n"
            f"{_harness_excerpt(t.harness, max(600, HARNESS_CHARS // len(trajectories)))}\n```"
        )
    wins = sum(t.is_success for t in trajectories)
    return TEMPLATES[kind], {
        "task": first.query,
        "summary": f"{len(trajectories)} trajectories of the same target: {wins} succeeded, "
        f"{len(trajectories) - wins} failed",
        "trajectories": "\n\n".join(blocks),
    }
