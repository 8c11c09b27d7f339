"""A lesson is used when it changed the harness: the offline engine's counterfactual.

The offline engine applies each lesson alone to the harness as it was before any lesson and
notes ``applied [MEM-...]`` only where that makes the harness differ; a lesson whose change the
draft had anyway is not used. A real model has no counterfactual: its use is the change being
present, and the record says it was judged that way. Each build and run records what it showed
for the lessons in its harness, for their own validation.
"""

from __future__ import annotations

import json
from typing import Any

from fuzzkit.diagnostics import Diagnostic
from long_term_memory.experience import InjectItem
from long_term_memory.experience.inject import render_experience
from long_term_memory.experience.lesson_checks import JUDGED_BY_CHANGE, JUDGED_BY_PRESENCE
from nodes.experience import note_used, used_in_harness
from nodes.lesson_checks import OBSERVATIONS, lesson_evidence, observe_build
from nodes.lesson_failures import BROKE_BUILD
from tests.unit.test_avoid_call_lessons import draft_reply
from tests.unit.test_tag_kind_lessons import API, HARNESS, TARGET, apply_lessons, lesson

ENUM = "keep_struct_tag(tag=ee_mode, kind=enum)"
TAGGED = HARNESS.replace("  ee_mode mode", "  enum ee_mode mode")  # a draft that has the change anyway


def test_each_lesson_is_noted_only_when_it_alone_changes_the_pre_lesson_harness() -> None:
    # Two lessons with the same change: each one alone would have made it, so both changed the harness.
    twins = [lesson(ENUM), lesson(ENUM, "MEM-0000e002")]
    code, notes = apply_lessons(HARNESS, TARGET, API, twins)
    assert "enum ee_mode mode" in code
    assert [n.split("]")[0] for n in notes] == ["applied [MEM-0000e001", "applied [MEM-0000e002"]
    # A draft that already had the change: the lesson changed nothing and leaves no note.
    assert apply_lessons(TAGGED, TARGET, API, [lesson(ENUM)]) == (TAGGED, [])


def _state(harness: str) -> dict[str, Any]:
    item = InjectItem("MEM-0000e001", "r", "ee_mode is an enum tag", "d", "c", 0.9, 0, 0.5, True, "q",
                      {"scope": {"type": "ee_mode"}, "failure": "compile:must-use-tag", "action": ENUM})
    exp = {"matches": [], "shown": [item.to_dict()], "used": []}
    return {"target": TARGET.to_dict(), "api": [f.to_dict() for f in API], "harness_code": harness,
            "extras": {"experience": exp}}


def _used(state: dict[str, Any], reply: str, deterministic: bool) -> tuple[list[str], dict[str, Any]]:
    update = note_used(state, reply, state["extras"], deterministic)  # type: ignore[arg-type]
    exp = update["extras"]["experience"]
    return used_in_harness({**state, "extras": update["extras"]}, exp), exp


def test_a_lesson_whose_change_the_draft_had_anyway_is_not_used() -> None:
    state = _state(TAGGED)  # the measured harness has the change
    quiet = json.dumps({"notes": ["drafted from the skeleton"]})
    assert _used(state, quiet, deterministic=True)[0] == []
    said = json.dumps({"notes": [f"applied [MEM-0000e001] {ENUM}: write enum ee_mode"]})
    assert _used(state, said, deterministic=True)[0] == ["MEM-0000e001"]
    # The change must still be in the harness that was measured.
    assert _used(_state(HARNESS), said, deterministic=True)[0] == []


def test_a_real_models_use_is_judged_by_presence_and_says_so() -> None:
    state = _state(TAGGED)
    used, exp = _used(state, json.dumps({"notes": []}), deterministic=False)
    assert used == ["MEM-0000e001"] and exp["by_presence"] is True
    assert lesson_evidence([{**state, "extras": {"experience": exp}}]).judged == JUDGED_BY_PRESENCE
    assert lesson_evidence([state]).judged == JUDGED_BY_CHANGE


def test_a_build_records_what_it_showed_for_the_lessons_in_its_harness() -> None:
    state = _state(TAGGED)
    error = Diagnostic("harness.c", 3, 3, "error", "must use 'enum' tag to refer to type 'ee_mode'")
    note = Diagnostic("other.h", 1, 1, "error", "unrelated error in a header")
    update = observe_build(state, TAGGED, False, [error, note], "harness.c", 2)
    [seen] = update["extras"][OBSERVATIONS]
    assert seen["present"] == ["MEM-0000e001"] and seen["errors"] == [error.message]
    assert observe_build(state, HARNESS, False, [error], "harness.c", 2) == {}  # no lesson in that harness
    evidence = lesson_evidence([{**state, "extras": {**state["extras"], **update["extras"]}}])
    lesson_fields = state["extras"]["experience"]["shown"][0]["lesson"]
    assert evidence.verdict("MEM-0000e001", lesson_fields, True, None) == (
        "fail", "compile:must-use-tag seen in the build of v2")
    assert evidence.verdict("MEM-0000e001", lesson_fields, False, None)[0] is None  # not used
    broke = lesson_evidence([{**state, "extras": {**state["extras"], BROKE_BUILD: ["MEM-0000e001"]}}])
    assert broke.verdict("MEM-0000e001", lesson_fields, False, None)[0] == "fail"


def test_a_lessons_text_is_never_read_as_guidance_only_its_action_acts() -> None:
    """A lesson's prose is for people: "use ww_doc_load instead of ww_doc_parse" changes no
    draft (its action respells only a name the API lacks, and ww_doc_parse is there), and the
    lesson is not noted as having changed it."""
    def shown(content: str) -> str:
        item = InjectItem("MEM-0000c0de", "rec-1", "ww_doc_count wants a loaded document",
                          "Harnesses of ww_doc", content, 0.9, 1, 0.6, True, "project ww",
                          {"scope": {"name": "ww_doc_*"}, "failure": "compile:undeclared-identifier",
                           "action": "apply_fixit(old=ww_doc_parse, new=ww_doc_load)"})
        return render_experience([item])

    _plain, code = draft_reply("")
    said, same = draft_reply(shown("Use ww_doc_load instead of ww_doc_parse before ww_doc_count."))
    assert same == code and "ww_doc_load(" not in same
    assert not any(n.startswith("applied [MEM-0000c0de] apply_fixit(") for n in said["notes"])
