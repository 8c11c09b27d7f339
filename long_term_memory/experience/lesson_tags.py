"""Content tags of a lesson: its API family, the object type it is about, its failure class.

Seed 001's tags describe a candidate's outcome (``result:pass``, ``stage:compile``); these describe
what its lessons are about, so retrieval can use them:

- ``failure:<class>`` (``compile``, ``leak``, ``crash``, ``input``, ``plateau``) *filters*: a
  repair of a compile error is shown no lesson about a leak;
- ``api:<family>`` (a function-name prefix glob such as ``pfx_*``) only *ranks*: a lesson of the
  target's own family comes first, and one learned on another library can still be shown;
- ``type:<T>`` names the object type the lesson changes how to hold, release or spell.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from typing import Any

from long_term_memory.experience.lesson_checks import failure_class
from long_term_memory.experience.lessons import name_family, parse_action, parse_scope

FAILURE_CLASSES = ("compile", "leak", "crash", "input", "plateau")
_FUNCTION_ARGS = ("function", "releaser")
_TYPE_ARGS = ("type", "holder", "tag")


def lesson_family(lesson: Mapping[str, Any], task_id: str = "") -> str:
    """The API family of a lesson: its scope's name glob, its action's function, else its target's."""
    scope = parse_scope(lesson.get("scope"))
    if scope is not None and scope.name:
        return scope.name if scope.name.endswith("*") else name_family(scope.name)
    action = parse_action(lesson.get("action"))
    for key in _FUNCTION_ARGS:
        if action is not None and action.args.get(key) and action.args[key] != "free":
            return name_family(action.args[key])
    function = task_id.rpartition("/")[2]
    return name_family(function) if function else ""


def lesson_type(lesson: Mapping[str, Any]) -> str:
    """The object type a lesson is about ('' for none)."""
    scope = parse_scope(lesson.get("scope"))
    if scope is not None and scope.type:
        return scope.type
    action = parse_action(lesson.get("action"))
    return next((action.args[k] for k in _TYPE_ARGS if action is not None and action.args.get(k)), "")


def content_tags(lessons: Iterable[Mapping[str, Any]], task_id: str = "") -> list[str]:
    """``api:<family>``, ``type:<T>``, ``failure:<class>`` of the lessons, each once, in order."""
    tags: list[str] = []
    for lesson in lessons:
        family, ctype, failure = lesson_family(lesson, task_id), lesson_type(lesson), failure_class(lesson)
        tags += [t for t in (f"api:{family}" if family else "", f"type:{ctype}" if ctype else "",
                             f"failure:{failure}" if failure else "") if t]
    return list(dict.fromkeys(tags))


def same_family(lesson: Mapping[str, Any], task_id: str, target_name: str) -> bool:
    """Whether the lesson's API family is the target's (its glob matches the target's name)."""
    family = lesson_family(lesson, task_id)
    return bool(family and target_name) and (fnmatch.fnmatchcase(target_name, family)
                                             or family == name_family(target_name))


def filtered_out(lesson: Mapping[str, Any], problem_class: str) -> str:
    """Why a lesson is not shown for a repair of ``problem_class`` ('' when it may be).

    A lesson without a failure class (plain advice) is shown for every problem.
    """
    own = failure_class(lesson)
    if not problem_class or not own or own == problem_class:
        return ""
    return f"a lesson about a {own} failure, not this {problem_class} one"
