"""What each build and fuzz run showed about the lessons in its harness, for their own validation.

The build and execution nodes add one observation per version (its stage, what failed, the
shown lessons whose change the harness had) to the state's ``extras``; at the end of a target the
Gatekeeper judges each lesson by its own failure signature from them
(:mod:`long_term_memory.experience.lesson_checks`). Plain data: it survives a checkpointer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path, PurePath
from typing import Any

from fuzzkit.api import FunctionDecl
from fuzzkit.input_flow import INPUT_PROBLEM
from long_term_memory.experience import InjectItem
from long_term_memory.experience.lesson_checks import (
    JUDGED_BY_CHANGE,
    JUDGED_BY_PRESENCE,
    LessonEvidence,
    compile_observation,
    run_observation,
)
from long_term_memory.experience.lesson_effects import effect_present
from long_term_memory.experience.lessons import parse_action
from nodes.lesson_failures import broke_build

OBSERVATIONS = "lesson_observations"  # the state's ``extras`` key


def _experience(state: Mapping[str, Any]) -> dict[str, Any]:
    return dict((state.get("extras") or {}).get("experience") or {})


def present_lessons(state: Mapping[str, Any], code: str) -> list[str]:
    """Ids of the shown lessons with an action whose change is in ``code``."""
    target = FunctionDecl.from_dict(dict(state["target"])) if state.get("target") else None
    out = []
    for item in (InjectItem.from_dict(i) for i in _experience(state).get("shown", [])):
        action = parse_action(item.lesson.get("action"))
        if action is not None and effect_present(action, code, target):
            out.append(item.item_id)
    return out


def _add(state: Mapping[str, Any], observation: dict[str, Any]) -> dict[str, Any]:
    if not observation["present"]:
        return {}
    past = list((state.get("extras") or {}).get(OBSERVATIONS) or [])
    return {"extras": {OBSERVATIONS: [*past, observation]}}


def observe_build(state: Mapping[str, Any], code: str, ok: bool, diagnostics: Sequence[Any],
                  harness: str, version: int) -> dict[str, Any]:
    """The update adding what a build showed (its errors in the harness) ({} when no lesson was in it)."""
    errors = [d.message for d in diagnostics
              if d.severity in ("error", "fatal error") and PurePath(d.file).name == harness]
    return _add(state, compile_observation(version, ok, errors, present_lessons(state, code)))


def observe_run(state: Mapping[str, Any], run: Mapping[str, Any], crash: Mapping[str, Any] | None,
                version: int) -> dict[str, Any]:
    """The update adding what a fuzz run showed (a crash, its input, the target reached) ({} for none)."""
    reproducer = Path(str((crash or {}).get("reproducer") or ""))
    empty = bool(crash) and reproducer.is_file() and reproducer.stat().st_size == 0
    missing = INPUT_PROBLEM in str(run.get("problem") or "")
    present = present_lessons(state, state.get("harness_code") or "")
    return _add(state, run_observation(version, run, crash, empty, missing, present))


def merged_extras(update: dict[str, Any], more: dict[str, Any]) -> dict[str, Any]:
    """``update`` with ``more``'s ``extras`` merged into its own (both shallow dicts)."""
    if more:
        update["extras"] = {**(update.get("extras") or {}), **more["extras"]}
    return update


def lesson_evidence(states: Sequence[Mapping[str, Any]]) -> LessonEvidence:
    """What the states of one trajectory (one, or its refinement rounds) recorded about the lessons.

    "Used" was judged by the counterfactual when every reply that saw a lesson came from a
    deterministic engine, else by presence.
    """
    observations = [o for s in states for o in (s.get("extras") or {}).get(OBSERVATIONS) or []]
    api = {f["name"]: FunctionDecl.from_dict(dict(f)) for s in states for f in s.get("api") or []}
    presence = any(_experience(s).get("by_presence") for s in states)
    return LessonEvidence(tuple(observations), tuple(api.values()),
                          frozenset(i for s in states for i in broke_build(s)),
                          JUDGED_BY_PRESENCE if presence else JUDGED_BY_CHANGE)


def problem_class(state: Mapping[str, Any]) -> str:
    """The class of failure a repair of the current version is for (see ``nodes.enhancer.problem_of``).

    ``compile`` for a harness that does not build, ``leak`` or ``crash`` for a misuse crash,
    ``input`` for fuzz input that never reaches the target's object; '' otherwise.
    """
    if not (state.get("build") or {}).get("ok"):
        return "compile"
    run = state.get("run") or {}
    if run.get("crashed"):
        return "leak" if str((state.get("crash") or {}).get("kind") or "").lower() == "leak" else "crash"
    return "input" if INPUT_PROBLEM in str(run.get("problem") or "") else ""
