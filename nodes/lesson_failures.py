"""Lessons a target's build failed on: named by the build node, never shown to that target again.

Lessons are applied on every draft and compile repair. One whose change the compiler rejects
would be re-added on each round and keep the harness from building; once a failed build is
seen to fail on it, the target's later prompts leave it out (and the repairs take its change
out as they would any other error). The ids live in the state's ``extras``, so they survive a
checkpointer and a resumed run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import PurePath
from typing import Any

from fuzzkit.api import FunctionDecl
from long_term_memory.experience import InjectItem
from long_term_memory.experience.lesson_effects import breaks_build
from long_term_memory.experience.lessons import parse_action
from nodes.common import log_event

BROKE_BUILD = "lessons_broke_build"  # the state's ``extras`` key


def broke_build(state: Mapping[str, Any]) -> list[str]:
    """Ids of the lessons whose change made one of this target's builds fail."""
    return list((state.get("extras") or {}).get(BROKE_BUILD) or [])


def lessons_that_broke(state: Mapping[str, Any], code: str, error_lines: Sequence[int]) -> list[str]:
    """Ids of the shown lessons a failed build failed on, not known to have broken one before.

    A lesson broke the build when its change is in ``code`` and a line the compiler rejected
    (``error_lines``, in the harness) writes a name the change writes
    (:func:`~long_term_memory.experience.lesson_effects.breaks_build`), whoever made the change:
    the offline engine or a model that followed the lesson.
    """
    exp = (state.get("extras") or {}).get("experience") or {}
    target = FunctionDecl.from_dict(dict(state["target"])) if state.get("target") else None
    known = set(broke_build(state))
    found = []
    for item in (InjectItem.from_dict(i) for i in exp.get("shown", [])):
        action = parse_action(item.lesson.get("action"))
        if item.item_id not in known and breaks_build(action, code, error_lines, target):
            found.append(item.item_id)
    return list(dict.fromkeys(found))


def lessons_broken(state: Mapping[str, Any], code: str, diagnostics: Sequence[Any], harness: str,
                   version: int) -> dict[str, Any]:
    """The node update naming the shown lessons a failed build of ``harness`` failed on ({} when none)."""
    lines = [d.line for d in diagnostics
             if d.severity in ("error", "fatal error") and PurePath(d.file).name == harness]
    broke = lessons_that_broke(state, code, lines)
    if not broke:
        return {}
    log_event(state, "memory.lesson.broke_build", version=version, items=broke)
    return {"extras": {BROKE_BUILD: [*broke_build(state), *broke]}}
