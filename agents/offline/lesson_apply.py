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

from agents.harness_marks import guard_empty_input
from agents.offline import type_table
from agents.offline.experience import shown_lessons
from agents.offline.fixer_core import FixerBase
from agents.offline.fixer_input import feed_input
from agents.offline.fixer_leak import release_results, releaser_of
from agents.offline.fixer_types import opaque_variable
from agents.offline.prompt_reader import PromptFacts
from agents.offline.synth_api import ApiIndex
from fuzzkit import api_twins
from fuzzkit.api import FunctionDecl
from fuzzkit.facts_block import read_facts
from fuzzkit.field_release import held_argument, release_line
from fuzzkit.guidance_facts import Rule
from fuzzkit.input_flow import input_reaches_api
from long_term_memory.experience.inject import LESSONS_KIND
from long_term_memory.experience.lesson_effects import applied_note, by_value, results_released
from long_term_memory.experience.lessons import (
    RELEASE_NAME,
    TAG_KINDS,
    Action,
    LessonsBlock,
    LessonScope,
    avoid_fits,
    callees_in,
    calls,
    scope_matches,
    shape_types,
    type_name,
)


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
    """The shown lessons of a prompt that carry an action, in the order shown.

    Read from the experience section's lessons block (``# facts: lessons v1``) with its models,
    never from the lines a person reads.
    """
    titles = {lesson.item_id: lesson.title for lesson in shown_lessons(facts)}
    block = read_facts(facts.sections.get("Relevant experience", ""), LESSONS_KIND, LessonsBlock)
    return [ActionableLesson(f.id, titles.get(f.id, ""), f.scope, action)
            for f in (block.lessons if block else []) if (action := f.action.action()) is not None]


def releasers_of(lessons: list[ActionableLesson], target: FunctionDecl) -> dict[str, str]:
    """``{type: releaser}`` from the fitting ``release_out_param`` lessons."""
    return {lesson.action.args["type"]: lesson.action.args["releaser"] for lesson in lessons
            if lesson.fits(target) and lesson.action and lesson.action.verb == "release_out_param"}


def feeder_of(lessons: list[ActionableLesson], target: FunctionDecl) -> str:
    """The feeder the first fitting ``feed_input_via`` lesson names, or ''."""
    return next((lesson.action.args["function"] for lesson in lessons
                 if lesson.fits(target) and lesson.action and lesson.action.verb == "feed_input_via"), "")


def avoided_calls(lessons: list[ActionableLesson], target: FunctionDecl,
                  api: list[FunctionDecl]) -> dict[str, ActionableLesson]:
    """``{function: lesson}`` for the fitting ``avoid_call`` lessons: calls an improvement leaves out."""
    out: dict[str, ActionableLesson] = {}
    for lesson in lessons:
        if lesson.action is not None and lesson.action.verb == "avoid_call":
            name = lesson.action.args["function"]
            if avoid_fits(name, lesson.scope, target, api):
                out.setdefault(name, lesson)
                for twin in twins_of(name, api):
                    if twin != target.name:
                        out.setdefault(twin, lesson)
    return out


def avoid_notes(hit: list[str], avoided: dict[str, ActionableLesson], verb: str) -> list[str]:
    """``applied [MEM-...] avoid_call(F): did not <verb> G, ...`` for each call left out."""
    out = []
    for name in hit:
        lesson = avoided[name]
        learned = lesson.action.args["function"] if lesson.action else name
        why = ("which" if learned == name
               else f"a sibling of {learned} (its signature or its object, named alike); {learned}")
        out.append(f"applied [{lesson.item_id}] avoid_call({learned}): did not {verb} {name}, "
                   f"{why} crashed another harness of this library")
    return out


def twins_of(name: str, api: list[FunctionDecl]) -> list[str]:
    """``name``'s twins in ``api`` (:func:`fuzzkit.api_twins.twins`), typedefs as Types says."""
    return api_twins.twins(name, api, type_table.active().canonical)


def apply_lessons(code: str, target: FunctionDecl, api: list[FunctionDecl], lessons: list[ActionableLesson],
                  rules: list[Rule] | None = None) -> tuple[str, list[str]]:
    """The harness with every fitting lesson's action applied, and one note per lesson that changed it.

    A lesson fits the target, or a function of the API the harness calls (an improvement that
    adds calls to a sibling of the target gets the release the family needs). The note, which
    is how the graph learns a lesson was used, is the counterfactual: each lesson is applied
    alone to the harness as it was before any lesson, and only one whose change makes that
    harness differ gets ``applied [MEM-...] <action>: <what changed>``. A lesson whose change
    the harness had anyway (or whose function is not in this API) leaves no note. ``rules``
    gets what the changes ask as data (a release, a feed, a guard), as the fixers state them.
    """
    before, notes = code, []
    avoided = avoided_calls(lessons, target, api)
    kept = kept_results(lessons, api)
    for lesson in lessons:
        code, how = _apply_one(code, lesson, target, api, avoided, kept, rules)
        alone, alone_how = _apply_one(before, lesson, target, api, avoided, kept)
        if lesson.action is not None and alone != before:
            notes.append(applied_note(lesson.item_id, lesson.action, how or alone_how))
    for name, lesson in kept.items():  # another lesson saw that release crash: its object owns it
        code, hows = keep_results_of(code, name)
        if hows and lesson.action is not None:
            notes.append(applied_note(lesson.item_id, lesson.action, "; ".join(hows)))
    return code, notes


def _apply_one(code: str, lesson: ActionableLesson, target: FunctionDecl, api: list[FunctionDecl],
               avoided: dict[str, ActionableLesson], kept: dict[str, ActionableLesson],
               rules: list[Rule] | None = None) -> tuple[str, str]:
    """One lesson's action applied to ``code``: the new code and what changed ('' for nothing)."""
    action = lesson.action
    if action is None or action.verb in ("avoid_call", "keep_result"):
        return code, ""  # a call to leave out is the improver's choice (see avoided_calls); kept: after
    if action.verb == "guard_empty_input":  # wherever the harness calls it
        if not calls(code, action.args["function"]):
            return code, ""
        guarded, how = guard_empty_input(code)
        if not how:
            return code, ""
        how = f"return early on an empty input, which {action.args['function']} fails on"
        if rules is not None:
            rules.append(Rule(kind="min_size", size=1, text=how))
        return guarded, how
    if action.verb == "release_field":
        code, hows = release_field_after_calls(code, action, target, api)
        return code, "; ".join(hows)
    if action.verb == "feed_input_via" and action.args["function"] in avoided:
        return code, ""  # another lesson saw that call crash: leaving it out wins
    hows = []
    for callee in _fitting_callees(code, target, api, lesson):
        if action.verb == "release_out_param" and callee.name in kept:
            continue  # another lesson saw that release crash: what it returns is its object's
        changed, how = (apply_action(code, action, callee, api, rules) if callee is target
                        else release_after_call(code, callee, action, api, rules))
        if changed != code:
            code = changed
            hows.append(how)
    return code, "; ".join(hows)

def kept_results(lessons: list[ActionableLesson], api: list[FunctionDecl]) -> dict[str, ActionableLesson]:
    """``{function: lesson}``: whose results a fitting ``keep_result`` lesson says no harness releases.

    The lesson's function and its slot twins in ``api`` (:func:`fuzzkit.api_twins.slot_twins`): the
    functions working the same object into the same type, named alike but for one word. A function
    that takes no object (:func:`fuzzkit.api_twins.called_on_an_object`) has none to own its
    result: such a lesson was learned wrong and is not applied.
    """
    canonical = type_table.active().canonical
    out: dict[str, ActionableLesson] = {}
    for lesson in lessons:
        if lesson.action is None or lesson.action.verb != "keep_result":
            continue
        for kept in api_twins.kept_family(lesson.action.args["function"], api, canonical):
            out.setdefault(kept, lesson)
    return out


def keep_results_of(code: str, function: str) -> tuple[str, list[str]]:
    """``code`` without the releases of what ``function`` returned, and one sentence per variable kept.

    ``v = function(...)`` then ``if (v != NULL) { release(v); v = NULL; }``, ``if (v) release(v);``
    or ``release(v);``: the statement goes (the object the call worked on releases the block).
    """
    hows = []
    held = re.findall(rf"\b([A-Za-z_]\w*)\s*=\s*(?:\([^()]*\)\s*)?\b{re.escape(function)}\s*\(", code)
    for var in dict.fromkeys(held):
        v = re.escape(var)
        release = rf"{RELEASE_NAME}\s*\(\s*(?:\([^()]*\)\s*)?{v}\s*\)\s*;"
        guard = rf"if\s*\(\s*(?:{v}\s*!=\s*NULL|{v})\s*\)\s*"
        block = rf"\{{\s*{release}(?:\s*{v}\s*=\s*NULL\s*;)?\s*\}}"
        pattern = rf"(?m)^[ \t]*(?:{guard}(?:{block}|{release})|{release})[ \t]*\n?"
        changed = re.sub(pattern, "", code, flags=re.I)
        if changed != code:
            code = changed
            hows.append(f"kept {var} (from {function}) without releasing it: its object owns it")
    return code, hows

def release_field_after_calls(code: str, action: Action, target: FunctionDecl,
                              api: list[FunctionDecl]) -> tuple[str, list[str]]:
    """Each call of the lesson's function or a twin (not the target) followed by its field's release.

    ``release_field(function=F, holder=T, field=X, releaser=R)``: after ``F(..., obj, ...)`` on a
    ``T``, ``if (obj != NULL && obj->X != NULL) { R(obj->X); obj->X = NULL; }``, unless the lines
    after the call release it already. The target's own call is left alone: what its harness
    does with the field after the call is the draft's business.
    """
    a = action.args
    decls = {f.name: f for f in api}
    function = decls.get(a["function"])
    if function is None or a["releaser"] not in {*decls, "free"}:
        return code, []
    position = next((i for i, p in enumerate(function.params) if type_name(p.type) == a["holder"]), None)
    if position is None:
        return code, []
    lines, hows = code.splitlines(keepends=True), []
    names = [n for n in [function.name, *twins_of(function.name, api)] if n != target.name]
    for i in range(len(lines) - 1, -1, -1):  # bottom up: an insertion moves what is below
        arg = held_argument(lines[i], names, position)
        held = f"{arg}->{a['field']}"
        if not arg or any(held in line for line in lines[i + 1:i + 4]):
            continue
        lines.insert(i + 1, release_line(lines[i], arg, a["field"], a["releaser"]))
        hows.append(f"release {held} with {a['releaser']} after the call")
    return "".join(lines), hows[::-1]


def _fitting_callees(code: str, target: FunctionDecl, api: list[FunctionDecl],
                     lesson: ActionableLesson) -> list[FunctionDecl]:
    """The target when the lesson fits it, then the other API functions the harness calls that fit.

    Only ``release_out_param`` reaches past the target: the others change how the target itself
    is driven.
    """
    out = [target] if lesson.fits(target) else []
    if lesson.action is not None and lesson.action.verb == "release_out_param":
        out += [f for f in callees_in(code, api, target) if lesson.fits(f)]
    return out


def _borrowed(fn: FunctionDecl, idx: ApiIndex) -> bool:
    """``get_item(const T *parent, i)`` returning a ``T *``: a child the parent keeps, not the caller's."""
    made = idx.type_key(fn.return_type)
    inside = [p for p in fn.params if made and idx.type_key(p.type) == made]
    return bool(inside) and bool(set(idx.verbs(fn.name)) & {"get", "find", "lookup"})


def release_after_call(code: str, callee: FunctionDecl, action: Action, api: list[FunctionDecl],
                       rules: list[Rule] | None = None) -> tuple[str, str]:
    """A call of ``callee`` other than the target's: its result released right after the call.

    Calls an improvement adds sit in their own block and keep nothing for later, so the release
    goes after the statement (a release at the harness's cleanup would name a variable out of
    scope). Only results of the lesson's type that the call hands its caller (not a borrowed
    child), only when nothing releases them yet. A releaser
    this library does not have (the lesson was learned on another) gives way to the one its
    header names for the type. ``rules`` gets the fields released before returning as data.
    """
    releaser, ctype = action.args.get("releaser", ""), action.args.get("type", "")
    if releaser not in {f.name for f in api} | {"free"}:
        releaser = releaser_of(api, ctype, callee)
    done = []
    # A borrowed result (`get_item(array, i)`: the array's child) is never the caller's to release.
    owned = not _borrowed(callee, ApiIndex(api if callee in api else [*api, callee]))
    calls = re.finditer(rf"(?m)^(\s*)([A-Za-z_]\w*)\s*=\s*(?:\([^()]*\)\s*)?"
                        rf"{re.escape(callee.name)}\s*\([^;]*\);[ \t]*$", code) if owned else iter(())
    for call in list(calls)[::-1]:
        indent, var = call.group(1), call.group(2)
        declared = re.search(rf"\b{re.escape(ctype)}\s*\*\s*{re.escape(var)}\b", code)
        if not declared or re.search(rf"\b\w+\s*\(\s*{re.escape(var)}\s*\)\s*;", code[call.end():]):
            continue
        line = f"\n{indent.lstrip(chr(10))}if ({var} != NULL) {{ {releaser}({var}); {var} = NULL; }}"
        code = code[:call.end()] + line + code[call.end():]
        done.append(f"release {var} (from {callee.name}) with {releaser} after the call")
    fields: list[str] = []
    if ctype in shape_types(callee).get("object_param", set()):  # a record the call fills
        code, fields = release_results(code, callee, api, fields_only=True, rules=rules)
    return code, "; ".join([*reversed(done), *fields])


def apply_action(code: str, action: Action, target: FunctionDecl, api: list[FunctionDecl],
                 rules: list[Rule] | None = None) -> tuple[str, str]:
    """One action applied to ``code``: the new code and a sentence (the code unchanged, '').

    ``rules`` gets what the change asks as data, as the fixer it goes through states it.
    """
    names = {f.name for f in api} | {target.name}
    a = action.args
    if action.verb == "release_out_param":
        if a["releaser"] not in names and a["releaser"] != "free":  # learned on another library
            if results_released(code, target):
                return code, ""
            changed, added = release_results(code, target, api, rules=rules)
            return changed, "; ".join(f"{how} (this library's releaser for {a['type']})" for how in added)
        if results_released(code, target, a["releaser"]):
            return code, ""
        changed, added = release_results(code, target, api, {a["type"]: a["releaser"]}, rules=rules)
        return changed, "; ".join(added)
    if action.verb == "feed_input_via":
        if a["function"] not in names or re.search(rf"\b{re.escape(a['function'])}\s*\(", code):
            return code, ""
        if input_reaches_api(code, names):
            return code, ""  # the input reaches the object another way (a file it was written to)
        fed: list[Rule] = []
        changed, how = feed_input(code, target, api, via=a["function"], rules=fed)
        if not (how and a["function"] in how):
            return code, ""
        if rules is not None:
            rules += fed
        return changed, how
    if action.verb == "keep_struct_tag":
        return _tag(code, a["tag"], a.get("kind", ""))
    if action.verb == "hold_by_pointer":
        return _by_pointer(code, a["type"], api, rules)
    old, new = a["old"], a["new"]
    if old in names or new not in names | _type_names(api):
        return code, ""  # only a name this API does not have is respelled, and only to one it has
    changed = re.sub(rf"\b{re.escape(old)}\b", new, code)
    return changed, f"write {new} instead of {old}" if changed != code else ""


def _by_pointer(code: str, ctype: str, api: list[FunctionDecl],
                rules: list[Rule] | None = None) -> tuple[str, str]:
    """Every by-value ``ctype`` variable held through a pointer, with the compile fixer's own repair."""
    hows: list[str] = []
    said: list[Rule] = []
    for _ in range(8):  # one declaration per pass: the fixer's edits move the later ones
        found = by_value(code, ctype)
        if found is None:
            break
        fixer = FixerBase(code, api, [])
        opaque_variable(fixer, ctype, found.start(1))
        fixer.finish()
        if fixer.code == code:
            break
        code, hows, said = fixer.code, hows + fixer.fixes, said + fixer.rules
    if rules is not None:
        rules += said
    return code, "; ".join(dict.fromkeys(hows))


def _tag(code: str, tag: str, kind: str) -> tuple[str, str]:
    """``kind tag`` wherever ``tag`` is used bare as a type (declaration, cast, sizeof).

    A tag written with another keyword is given its own (C has one namespace for the tags of
    structs, unions and enums, so ``tag`` is only ever one of them). Without a kind (an entry
    stored before it was recorded, whose text does not say it) nothing is written.
    """
    if kind not in TAG_KINDS:
        return code, ""
    bare = re.compile(rf"(?<![\w.>])(?<!struct )(?<!union )(?<!enum )\b{re.escape(tag)}\b"
                      rf"(?=\s*(?:\*|\)|[A-Za-z_]))")
    changed = bare.sub(f"{kind} {tag}", code)
    other = "|".join(k for k in TAG_KINDS if k != kind)
    changed = re.sub(rf"\b(?:{other})(\s+){re.escape(tag)}\b", rf"{kind}\1{tag}", changed)
    return changed, (f"write {kind} {tag} (it is a {kind} tag, not a typedef)" if changed != code else "")


def _type_names(api: list[FunctionDecl]) -> set[str]:
    return {w for f in api for t in (f.return_type, *(p.type for p in f.params))
            for w in re.findall(r"[A-Za-z_]\w*", t)}
