"""The offline model's experience-extraction skill: a trajectory in, 1–3 specific lessons out.

It reads the same prompt a real model gets (``experience_success``, ``experience_failure``,
``experience_contrastive``): the trajectory's facts block (its target, measured outcome and
steps, :mod:`long_term_memory.experience.trajectory_steps`; never the tagged lines beside it)
and the final harness, and distils what they show:
the archetype and call sequence that worked, the fixes that made it compile, the directions
that raised coverage, the error or harness-misuse crash that sank it. Deterministic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agents.offline.experience_lessons import contrastive_items, failure_items, success_items
from agents.offline.experience_reading import target
from agents.offline.lesson_extract import actionable_items
from agents.offline.prompt_reader import PromptFacts
from long_term_memory.experience.trajectory_steps import read_trajectory

Reply = tuple[dict[str, Any], None]


def distil(facts: PromptFacts) -> Reply:
    """Lessons for the roles in :data:`ROLES`, as ``{"memory_items": [...]}``."""
    if facts.role == "experience_contrastive":
        return {"memory_items": contrastive_items(facts)}, None
    trajectory = read_trajectory(facts.text("Trajectory"))  # the steps as data, never the lines
    code = facts.code("Final harness")
    make = success_items if facts.role == "experience_success" else failure_items
    items: list[dict[str, Any]] = list(make(facts, trajectory, code))
    # The repairs the run made, as actions the next target of the family gets applied.
    actionable = actionable_items(target(trajectory, facts.text("Target"))[0], trajectory.steps, code)
    return {"memory_items": [*items[:1], *actionable, *items[1:]][:3]}, None


ROLES = ("experience_success", "experience_failure", "experience_contrastive")
_SHOWN = re.compile(r"^### \[(MEM-[0-9a-fA-F]{8})\] (.*)$", re.M)


@dataclass
class ShownLesson:
    """One item of a prompt's ``## Relevant experience`` section."""

    item_id: str
    title: str
    text: str


def shown_lessons(facts: PromptFacts) -> list[ShownLesson]:
    """The experience items a prototyper or enhancer prompt shows, in order."""
    text = facts.sections.get("Relevant experience", "")
    marks = list(_SHOWN.finditer(text))
    return [ShownLesson(m.group(1), m.group(2).strip(),
                        text[m.end(): marks[i + 1].start() if i + 1 < len(marks) else len(text)].strip())
            for i, m in enumerate(marks)]


def applicable(facts: PromptFacts, names: set[str]) -> list[ShownLesson]:
    """Shown lessons that name one of ``names`` (the target, the API calls of the draft).

    The offline prototyper and enhancer cite these ids in their notes ("applied [MEM-...]"),
    which is how the Gatekeeper learns an item was used.
    """
    return [lesson for lesson in shown_lessons(facts)
            if names & set(re.findall(r"\b[A-Za-z_][A-Za-z0-9_]*\b", lesson.title + " " + lesson.text))]
