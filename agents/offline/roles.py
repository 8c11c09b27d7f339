"""The offline model's skill per role: prompt facts in, (JSON payload, optional C code) out."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from agents.harness_marks import guard_empty_input
from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototype, parse_prototypes
from agents.offline.experience import applicable
from agents.offline.fixer import fix_harness
from agents.offline.fixer_free import drop_unowned_free, keep_input_owned
from agents.offline.fixer_input import feed_input, guard_utf8_text
from agents.offline.fixer_leak import release_kept_objects, release_results
from agents.offline.fixer_precondition import guard_precondition
from agents.offline.fixer_terminated import terminate_input
from agents.offline.followups import without_crashed_followup
from agents.offline.improver import Improvement, improve_harness
from agents.offline.lesson_apply import (
    ActionableLesson,
    actionable_lessons,
    apply_lessons,
    avoid_notes,
    avoided_calls,
    feeder_of,
    releasers_of,
    twins_of,
)
from agents.offline.local_memory import tabu_names
from agents.offline.prompt_reader import PromptFacts, bullets, identifiers, target_function
from agents.offline.synth import HarnessDraft, write_harness
from agents.offline.usage import (
    REPLAY_MARK,
    made_as_usage,
    release_as_usage,
    usage_draft,
    usage_followups,
    usage_hints,
    usage_releasers,
    with_jump_guard,
)
from agents.sections import ELSEWHERE_HEADING
from agents.usage_section import HEADING as USAGE_HEADING
from agents.usage_section import read_usage
from fuzzkit.api import FunctionDecl
from fuzzkit.crash_facts import read_crash
from fuzzkit.guidance_facts import Rule, read_rules, rules_of, unique
from fuzzkit.input_flow import INPUT_PROBLEM
from long_term_memory.experience.lesson_effects import applied_note
from long_term_memory.experience.lessons import calls

Reply = tuple[dict[str, Any], str | None]


def _api(facts: PromptFacts) -> list[FunctionDecl]:
    return parse_prototypes(facts.code("Library API"))


def _headers(facts: PromptFacts) -> list[str]:
    text = facts.text("Headers") or ""
    found = re.findall(r'#include\s*[<"]([^>"]+)[>"]', text)
    if found:
        return found
    return [h.strip() for h in facts.text("Library").split("Public headers:")[-1].split(",")
            if h.strip().endswith(".h")]


def _memory_rules(facts: PromptFacts, subsection: str) -> list[Rule]:
    """The rules block of one session-memory subsection (the known fixes': those that worked)."""
    return read_rules(facts.memory_text(subsection))


def _tabu(facts: PromptFacts, api: list[FunctionDecl]) -> list[str]:
    """API functions of failed directions and their twins: not proposed again without new evidence."""
    failed = tabu_names(facts, [d.name for d in api])
    return sorted({*failed, *(twin for name in failed for twin in twins_of(name, api))})


def _improve(harness: str, target: FunctionDecl, api: list[FunctionDecl], uncovered: list[str],
             facts: PromptFacts, lessons: list[ActionableLesson]) -> tuple[Improvement, list[str]]:
    """The improvement, without the calls a fitting ``avoid_call`` lesson says crashed before.

    The improvement is planned first as it would be without the lessons: a lesson is applied,
    and noted, only when it takes out a call the improver was about to add.
    """
    tabu, later = _tabu(facts, api), _called_elsewhere(facts)
    usage = usage_hints(read_usage(facts.sections.get(USAGE_HEADING, "")), target, api)
    result = improve_harness(harness, target, api, uncovered, avoid=tabu, later=later, usage=usage)
    avoided = avoided_calls(lessons, target, api)
    hit = [name for name in result.added_calls if name in avoided]
    if not hit:
        return result, []
    pool = [name for name in uncovered if name not in avoided]  # (nor as a helper of another call)
    again = improve_harness(harness, target, api, pool, avoid=sorted({*tabu, *avoided}), later=later,
                            usage=usage)
    if any(calls(again.code, name) and not calls(harness, name) for name in avoided):
        return result, []
    return again, avoid_notes(hit, avoided, "add")


def analyze(facts: PromptFacts) -> Reply:
    """Function analyzer: archetype by signature and API shape; the knowledge breaks ties."""
    result = analyze_function(target_function(facts), _api(facts))
    archetype, confidence, reasoning = result.archetype, result.confidence, result.reasoning
    hits = [body for tag, body in facts.bullets("Knowledge hits") if tag == "archetype"]
    if confidence == "LOW" and hits:
        archetype = hits[0].split()[0]
        reasoning += f" Signature evidence was weak; the knowledge base's best match is {archetype}."
    known = {r.key() for r in _memory_rules(facts, "API constraints")}
    stated = {body for _t, body in facts.memory("API constraints")}
    constraints = [c for c in result.constraints if c not in stated]
    rules = [r.model_dump(exclude_defaults=True) for r in result.rules if r.key() not in known]
    return {"archetype": archetype, "confidence": confidence, "reasoning": reasoning,
            "constraints": constraints, "related_functions": list(result.related), "rules": rules}, None


def prototype(facts: PromptFacts) -> Reply:
    """Prototyper: fill the skeleton with type-driven argument construction."""
    analysis = _json(facts.text("Analysis"))
    target = target_function(facts)
    advice = applicable(facts, {target.name, *(analysis.get("related_functions") or [])})
    cited = [f"applied [{lesson.item_id}] {lesson.title}" for lesson in advice]
    archetype = facts.text("Archetype").splitlines()[0].strip()
    api = _api(facts)
    lessons = actionable_lessons(facts)

    usage = read_usage(facts.sections.get(USAGE_HEADING, ""))

    # What the analysis and session memory ask, as data (a lesson acts through its action only).
    rules = [*rules_of(analysis.get("rules") or []), *_memory_rules(facts, "API constraints"),
             *_memory_rules(facts, "Known fixes")]

    def draft_without(avoid: list[str]) -> HarnessDraft:
        return write_harness(target, api, _headers(facts), archetype, facts.code("Skeleton"), rules=rules,
                             avoid=avoid, usage=usage_hints(usage, target, api))

    replayed = usage_draft(usage, target, api, _headers(facts), facts.code("Skeleton"))
    if replayed is not None:
        code, notes, called = replayed
        code, applied = apply_lessons(code, target, api, lessons)
        return {"notes": [*notes, *applied, *cited], "functions_called": called}, code
    draft, left_out = draft_without([]), []
    # A helper call a fitting `avoid_call` lesson says crashed another harness: drafted again
    # without it, kept only if the new draft still reaches the target without it.
    avoided = avoided_calls(lessons, target, api)
    hit = [name for name in draft.calls if name in avoided]
    if hit:
        again = draft_without(hit)
        if target.name in again.calls and not any(calls(again.code, name) for name in hit):
            draft = again
            left_out = avoid_notes(hit, avoided, "call")
    # A fitting lesson's action changes the first draft itself, with the fixers' own code.
    code, applied = apply_lessons(draft.code, target, api, lessons)
    code, guarded = with_jump_guard(code, usage)
    notes = [*draft.notes, *left_out, *applied, *guarded, *cited]
    return {"notes": notes, "functions_called": draft.calls}, code


def _called_elsewhere(facts: PromptFacts) -> set[str]:
    """The uncovered functions the prompt says another harness of the run already calls."""
    group = facts.text("Uncovered functions").partition(ELSEWHERE_HEADING)[2]
    return {parse_prototype(body).name for _t, body in bullets(group)}


def enhance(facts: PromptFacts) -> Reply:
    """Enhancer: repair from compiler errors or crash triage, or improve from coverage gaps."""
    harness = facts.code("Current harness")
    api = _api(facts)
    if facts.mode == "improve":
        uncovered = [parse_prototype(body).name for _t, body in facts.bullets("Uncovered functions")]
        # Functions a trusted lesson names go first: experience says they pay off (a lesson that
        # says a call crashed names it too, and is applied by leaving the call out).
        lessons = actionable_lessons(facts)
        avoid = {lesson.item_id for lesson in lessons  # what not to do names no call worth adding
                 if lesson.action and lesson.action.verb in ("avoid_call", "keep_result")}
        shown = [lesson for lesson in applicable(facts, set(uncovered)) if lesson.item_id not in avoid]
        named = {n for lesson in shown for n in identifiers(lesson.title + " " + lesson.text)}
        # What the library's own code calls after the target comes first, then what lessons name.
        after = usage_followups(read_usage(facts.sections.get(USAGE_HEADING, "")), target_function(facts))
        uncovered.sort(key=lambda n: (n not in after, n not in named))
        result, left_out = _improve(harness, target_function(facts), api, uncovered, facts, lessons)
        cited = [f"applied [{lesson.item_id}] {lesson.title}" for lesson in shown
                 if named & set(result.added_calls)]
        # The calls it added get what a fitting lesson says about their family (a release).
        said: list[Rule] = []
        code, applied = apply_lessons(result.code, target_function(facts), api, lessons, said)
        return {"directions": [*result.directions, *applied, *left_out, *cited],
                "added_calls": result.added_calls, **_rules_said(said)}, code
    errors = facts.text("Compile errors")
    known = _memory_rules(facts, "Known fixes")
    target = target_function(facts)
    lessons = actionable_lessons(facts)
    if errors and REPLAY_MARK in harness:
        usage = read_usage(facts.sections.get(USAGE_HEADING, ""))
        draft = write_harness(target, api, _headers(facts), analyze_function(target, api).archetype, "",
                              usage=usage_hints(usage, target, api))
        return {"fixes": ["the replay of the library's own usage did not compile: the synthesizer's draft "
                          "instead"], "unresolved": []}, draft.code
    if errors:
        shown = applicable(facts, identifiers(errors))
        cited = [f"applied [{lesson.item_id}] {lesson.title}" for lesson in shown]
        fixed = fix_harness(harness, errors, api, _headers(facts), known_fixes=known)
        said = list(fixed.rules)
        code, applied = apply_lessons(fixed.code, target, api, lessons, said)
        return {"fixes": [*fixed.fixes, *applied, *cited], "unresolved": fixed.unresolved,
                "rules": _rules_said(said).get("rules", [])}, code
    said = []
    reply, repaired = _repair_crash(harness, facts, target, api, lessons, said)
    return {**reply, **_rules_said(said)}, repaired


def _rules_said(rules: list[Rule]) -> dict[str, list[dict[str, Any]]]:
    """``{"rules": [...]}`` for a reply stating ``rules`` (each once), ``{}`` for none."""
    return {"rules": [r.model_dump(exclude_defaults=True) for r in unique(rules)]} if rules else {}


def _repair_crash(harness: str, facts: PromptFacts, target: FunctionDecl, api: list[FunctionDecl],
                  lessons: list[ActionableLesson], said: list[Rule]) -> Reply:
    """A crash judged harness misuse: the first repair its triage calls for, else a revert.

    ``said`` gets what the repair asks as data (a release, a feed, a guard, a call left out).
    """
    usage = read_usage(facts.sections.get(USAGE_HEADING, ""))
    last_good = facts.code("Last working harness")
    problem = facts.text("Problem")
    triage = facts.text("Crash triage")
    if re.search(r"LeakSanitizer|detected memory leaks|\bleak\b", triage):
        released, added = release_as_usage(harness, usage)
        if added:
            return {"fixes": added, "unresolved": []}, released
        released, added = _release_leaked(harness, triage, api, target, lessons, said, usage_releasers(usage))
        if added:
            return {"fixes": added, "unresolved": []}, released
    for guard in (guard_utf8_text, terminate_input, guard_precondition):
        checked, how = guard(harness, triage, api)
        if how:
            return {"fixes": [how], "unresolved": []}, checked
    for repair in (drop_unowned_free, keep_input_owned):
        kept, how = repair(harness, triage)
        if how:
            return {"fixes": [how], "unresolved": []}, kept
    dropped = without_crashed_followup(harness, facts.text("Stack") or triage, target.name, said,
                                       read_crash(triage).entry_function)
    if dropped:
        return {"fixes": [dropped[1]], "unresolved": []}, dropped[0]
    if INPUT_PROBLEM in problem:
        fed, fed_notes = _feed(harness, target, api, lessons, said)
        if fed_notes:
            return {"fixes": fed_notes, "unresolved": []}, fed
    if read_crash(triage).input_size == 0:
        guarded, how = guard_empty_input(harness, said)
        if how:
            return {"fixes": [how], "unresolved": []}, guarded
    if not made_as_usage(harness, usage, target):
        # A crash in a harness that sets the target up otherwise than the library's own code
        # does (a zeroed handle, no error manager): start again from that code.
        replayed = usage_draft(usage, target, api, _headers(facts), facts.code("Skeleton"))
        if replayed is not None:
            code, notes, _called = replayed
            return {"fixes": [f"made as the library's own code makes it: {'; '.join(notes)}"],
                    "unresolved": []}, code
    if last_good:
        return {"fixes": [f"revert to the last working harness ({problem})"],
                "unresolved": []}, last_good
    return {"fixes": [], "unresolved": [f"no repair known for: {problem}"]}, harness


def _release_leaked(harness: str, triage: str, api: list[FunctionDecl], target: FunctionDecl,
                    lessons: list[ActionableLesson], said: list[Rule],
                    owners: Mapping[str, str]) -> tuple[str, list[str]]:
    """The harness releasing what leaked, through the releaser a lesson, the header or its allocator names.

    When what the leak's call made is released already, the objects other calls handed back and
    nothing releases are (``owners``: type -> the library's own code's releaser).

    A lesson whose releaser makes the repair differ from the one made without it is noted
    (``applied [MEM-...]``): the counterfactual that counts it as used.
    """
    culprit = _leak_culprit(triage, api, target)
    allocators = _allocators(triage, culprit.name)
    given = releasers_of(lessons, culprit)
    released, added = release_results(harness, culprit, api, given, allocators=allocators, byte_fields=True,
                                      rules=said)
    if not added:
        released, added = release_kept_objects(harness, api, {**owners, **given}, said)
    if given and added and released != release_results(harness, culprit, api, allocators=allocators,
                                                        byte_fields=True)[0]:
        added += [applied_note(lesson.item_id, lesson.action, f"release with {releaser}")
                  for lesson in lessons if lesson.fits(culprit) and lesson.action
                  and lesson.action.verb == "release_out_param"
                  and calls(released, releaser := lesson.action.args["releaser"])]
    return released, added


def _feed(harness: str, target: FunctionDecl, api: list[FunctionDecl],
          lessons: list[ActionableLesson], said: list[Rule]) -> tuple[str, list[str]]:
    """The harness handing the input to the target's object, and what changed.

    Through the feeder a fitting lesson names, noted when the harness then differs from the one
    fed without the lesson (the counterfactual).
    """
    via = feeder_of(lessons, target)
    fed, how = feed_input(harness, target, api, via=via, rules=said)
    if not how:
        return harness, []
    notes = [how]
    if via and fed != feed_input(harness, target, api)[0]:
        notes += [applied_note(lesson.item_id, lesson.action, f"hand the input over with {via}")
                  for lesson in lessons if lesson.fits(target) and lesson.action
                  and lesson.action.verb == "feed_input_via" and lesson.action.args["function"] == via][:1]
    return fed, notes


def _leak_culprit(triage: str, api: list[FunctionDecl], target: FunctionDecl) -> FunctionDecl:
    """Who allocated what leaked: the triage's entry function, else the frame above the harness."""
    chain = _chain(triage)
    entry = chain.index("LLVMFuzzerTestOneInput") if "LLVMFuzzerTestOneInput" in chain[1:] else 0
    entry_function = read_crash(triage).entry_function
    caller = entry_function or (chain[entry - 1] if entry else "")
    return {f.name: f for f in api}.get(caller) or target


def _allocators(triage: str, culprit: str) -> list[str]:
    """The functions of the leak's allocation stack inside ``culprit``, innermost first."""
    chain = _chain(triage)
    return chain[:chain.index(culprit)] if culprit in chain else chain


def _chain(triage: str) -> list[str]:
    """The functions of the crash signature's stack, innermost first (from the crash facts block)."""
    frames = read_crash(triage).signature.partition("@")[2]
    return frames.split("<") if frames else []


def advise_coverage(facts: PromptFacts) -> Reply:
    """Coverage analyzer: uncovered functions that accept objects the harness already holds."""
    harness = facts.code("Current harness")
    api = {d.name: d for d in _api(facts)}
    if harness:
        held = identifiers(harness)
    else:  # a CodeMem summary: the objects held are those its library calls produce and take
        calls = re.search(r"^Library calls:\s*(.*)$", facts.text("Current harness"), re.M)
        names = [n.strip() for n in calls.group(1).split(",")] if calls else []
        held = {w for n in names if n in api for t in (api[n].return_type, *(p.type for p in api[n].params))
                for w in identifiers(t)} | set(names)
    avoid = set(_tabu(facts, list(api.values())))
    strategies = []
    for _tag, body in facts.bullets("Uncovered functions"):
        decl = parse_prototype(body)
        if decl.name in avoid:
            continue
        usable = [p for p in decl.params if identifiers(p.type) & held]
        if decl.params and not usable:
            continue
        gain = "HIGH" if usable else "MEDIUM"
        what = f" on the {usable[0].type.strip()} the harness already has" if usable else ""
        strategies.append({"strategy": f"call {decl.name}{what}",
                           "target_functions": [decl.name], "expected_gain": gain})
    strategies.sort(key=lambda s: s["expected_gain"] != "HIGH")
    summary = f"{len(strategies)} uncovered API functions can take objects the harness holds"
    return {"summary": summary, "strategies": strategies[:4]}, None


def _json(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return {}
    return value if isinstance(value, dict) else {}
