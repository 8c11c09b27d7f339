"""The prompt section for injected experience, and finding which items a reply cited."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fuzzkit.facts_block import render_facts
from long_term_memory.experience.lessons import LessonsBlock, lesson_facts, parse_scope
from long_term_memory.experience.matches import InjectItem
from long_term_memory.experience.rules import LEVEL_NAMES

HEADING = "## Relevant experience"
LESSONS_KIND = "lessons"
_CITED = re.compile(r"\bMEM[-_ ]?([0-9a-f]{8})\b", re.I)


def _one_line(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _structured_lines(lesson: Mapping[str, Any]) -> str:
    """The actionable part as ``- Scope:``/``- Failure:``/``- Action:`` lines ('' when absent)."""
    scope = parse_scope(lesson.get("scope"))
    lines = [f"- Scope: {scope.render()}" if scope else "",
             f"- Failure: {_one_line(str(lesson['failure']), 160)}" if lesson.get("failure") else "",
             f"- Action: {lesson['action']}" if lesson.get("action") else ""]
    return "".join(f"{line}\n" for line in lines if line)


def render_experience(items: Sequence[InjectItem]) -> str:
    """The ``## Relevant experience`` section, or '' when nothing is injected.

    Each item shows its id (``[MEM-3f2a9c01]``), where it came from (the earlier target and
    whether that target succeeded), how trusted it is, when it applies and what to do.
    """
    if not items:
        return ""
    parts = [
        HEADING,
        "Lessons distilled from earlier targets of this task, from what was measured there "
        "(builds, fuzz runs, coverage, crashes), failures included. Use one only when it fits this "
        'target, and when you do, cite its id in your notes (e.g. "applied '
        f'[{items[0].item_id}]"); ignore the ones that do not fit.',
    ]
    if any(item.lesson.get("action") for item in items):
        parts[-1] += (" A lesson with an Action names one concrete change: make it when its Scope "
                      "(function-name pattern, signature shape, type) fits this target.")
    for item in items:
        level = LEVEL_NAMES[max(0, min(item.validation_level, len(LEVEL_NAMES) - 1))]
        source = "success" if item.is_success else "failure"
        parts.append(
            f"### [{item.item_id}] {_one_line(item.title, 120)}\n"
            f"- From: {_one_line(item.query.splitlines()[0] if item.query else '?', 160)} ({source}); "
            f"similarity {item.score:.2f}; {level}, trust {item.trust:.2f}\n"
            f"- When: {_one_line(item.description, 300)}\n"
            + _structured_lines(item.lesson)
            + f"{item.content.strip()}"
        )
    # The actions as data, read back with the same models (the lines above are for reading).
    shown = [f for item in items if (f := lesson_facts(item.item_id, item.lesson, item.content))]
    if shown:
        parts.append(render_facts(LESSONS_KIND, LessonsBlock(lessons=shown)))
    return "\n\n".join(parts)


def detect_used(text: str, shown_ids: Iterable[str]) -> list[str]:
    """The shown ids the text cites (``MEM-3f2a9c01``, any case, ``-``/``_``/space), in shown order.

    Ids that were not shown are ignored: a model can make one up.
    """
    cited = {m.group(1).lower() for m in _CITED.finditer(text or "")}
    return [i for i in dict.fromkeys(shown_ids) if i[-8:].lower() in cited]


def memories_used(shown: Sequence[InjectItem], used: Iterable[str]) -> list[dict[str, object]]:
    """What a target's result records about experience: id, title, similarity, cited or not."""
    cited = set(used)
    return [{"id": i.item_id, "title": i.title, "similarity": round(i.score, 4), "used": i.item_id in cited,
             "validation_level": i.validation_level, "trust": round(i.trust, 4)} for i in shown]
