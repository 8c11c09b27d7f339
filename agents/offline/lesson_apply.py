"""Apply the actionable lessons a prompt shows to a harness, with the fixers' own repairs.

A shown lesson whose ``- Scope:`` fits the target and whose ``- Action:`` the engine knows is
applied to the first draft (prototyper) or to the first repair (enhancer), through the same
functions that repair a sanitizer report or a compiler error: ``release_out_param`` is
:func:`~agents.offline.fixer_leak.release_results` with the lesson's releaser,
``feed_input_via`` is :func:`~agents.offline.fixer_input.feed_input` with the lesson's feeder.
The change is then in the harness that gets built and measured, which is how "used" is judged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agents.offline.experience import shown_lessons
from agents.offline.fixer_input import feed_input
from agents.offline.fixer_leak import release_results
from agents.offline.prompt_reader import PromptFacts
from fuzzkit.api import FunctionDecl
from long_term_memory.experience.lessons import (
    Action,
    LessonScope,
    parse_action,
    parse_scope,
    scope_matches,
)

_FIELD = re.compile(r"^- (Scope|Action):\s*(.+?)\s*$", re.M)


@dataclass(frozen=True)
class ActionableLesson:
    """A shown lesson's id, title, scope and action (as the prompt rendered them)."""

    item_id: str
    title: str
    scope: LessonScope | None
    action: Action | None

    def fits(self, target: FunctionDecl) -> bool:
        """Whether the lesson has an action and its scope matches ``target``."""
        return self.action is not None and scope_matches(self.scope, target)


def actionable_lessons(facts: PromptFacts) -> list[ActionableLesson]:
    """The shown lessons of a prompt that carry an action, in the order shown."""
    out = []
    for lesson in shown_lessons(facts):
        fields = dict(_FIELD.findall(lesson.text))
        action = parse_action(fields.get("Action"))
        if action is not None:
            scope = parse_scope(fields.get("Scope", ""))
            out.append(ActionableLesson(lesson.item_id, lesson.title, scope, action))
    return out


def releasers_of(lessons: list[ActionableLesson], target: FunctionDecl) -> dict[str, str]:
    """``{type: releaser}`` from the fitting ``release_out_param`` lessons."""
    return {lesson.action.args["type"]: lesson.action.args["releaser"] for lesson in lessons
            if lesson.fits(target) and lesson.action and lesson.action.verb == "release_out_param"}


def feeder_of(lessons: list[ActionableLesson], target: FunctionDecl) -> str:
    """The feeder the first fitting ``feed_input_via`` lesson names, or ''."""
    return next((lesson.action.args["function"] for lesson in lessons
                 if lesson.fits(target) and lesson.action and lesson.action.verb == "feed_input_via"), "")


def apply_lessons(code: str, target: FunctionDecl, api: list[FunctionDecl],
                  lessons: list[ActionableLesson]) -> tuple[str, list[str]]:
    """The harness with every fitting lesson's action applied, and one note per applied lesson.

    A note reads ``applied [MEM-...] <action>: <what changed>``. A lesson whose action would
    change nothing (already done, or its function is not in this API) leaves no note.
    """
    notes = []
    for lesson in lessons:
        if not lesson.fits(target) or lesson.action is None:
            continue
        changed, how = apply_action(code, lesson.action, target, api)
        if changed != code:
            code = changed
            notes.append(f"applied [{lesson.item_id}] {lesson.action.render()}: {how}")
    return code, notes


def apply_action(code: str, action: Action, target: FunctionDecl,
                 api: list[FunctionDecl]) -> tuple[str, str]:
    """One action applied to ``code``: the new code and a sentence (the code unchanged, '')."""
    names = {f.name for f in api} | {target.name}
    a = action.args
    if action.verb == "release_out_param":
        if a["releaser"] not in names and a["releaser"] != "free":
            return code, ""
        changed, added = release_results(code, target, api, {a["type"]: a["releaser"]})
        return changed, "; ".join(added)
    if action.verb == "feed_input_via":
        if a["function"] not in names or re.search(rf"\b{re.escape(a['function'])}\s*\(", code):
            return code, ""
        changed, how = feed_input(code, target, api, via=a["function"])
        return (changed, how or "") if how and a["function"] in how else (code, "")
    if action.verb == "keep_struct_tag":
        return _tag(code, a["tag"])
    old, new = a["old"], a["new"]
    if old in names or new not in names | _type_names(api):
        return code, ""  # only a name this API does not have is respelled, and only to one it has
    changed = re.sub(rf"\b{re.escape(old)}\b", new, code)
    return changed, f"write {new} instead of {old}" if changed != code else ""


def _tag(code: str, tag: str) -> tuple[str, str]:
    """``struct tag`` wherever ``tag`` is used bare as a type (declaration, cast, sizeof)."""
    bare = re.compile(rf"(?<![\w.>])(?<!struct )(?<!union )(?<!enum )\b{re.escape(tag)}\b"
                      rf"(?=\s*(?:\*|\)|[A-Za-z_]))")
    changed = bare.sub(f"struct {tag}", code)
    return changed, f"write struct {tag} (it is a struct tag, not a typedef)" if changed != code else ""


def _type_names(api: list[FunctionDecl]) -> set[str]:
    return {w for f in api for t in (f.return_type, *(p.type for p in f.params))
            for w in re.findall(r"[A-Za-z_]\w*", t)}
