"""A result the harness released though its object owned it becomes a lesson the next targets apply.

Invented tree library: ``tr_add_int_to_node(node, key, value)`` adds a child to ``node`` and hands
it back; the node owns it. A harness (or a repair) that released that child crashed as a
heap-use-after-free when the node was released: the crash's report says the block was allocated
inside ``tr_add_int_to_node`` and released first inside ``tr_free``, and that version's harness
passes the result to ``tr_free``. The trajectory lists it as a ``[misuse]`` step, the extractor
makes ``keep_result(tr_add_int_to_node)`` of it, and a later target's harness keeps what the
function and its slot twins (``tr_add_text_to_node``) return: no release of theirs, not even one
a release lesson for the type would add, and no block repair that releases it. A leak repair whose
next version crashed is no release lesson. Only through the bank: the lesson is data.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_graph.context import Context
from agents.offline.cdecl import parse_prototypes
from agents.offline.lesson_apply import ActionableLesson, apply_lessons, kept_results
from agents.offline.lesson_extract import actionable_items
from fuzzkit.api_twins import slot_twins
from fuzzkit.header_facts import HeaderFacts, Releaser
from long_term_memory.experience.config import ExperienceConfig
from long_term_memory.experience.extraction import build_extraction_prompt, extraction_kind
from long_term_memory.experience.lesson_effects import effect_present
from long_term_memory.experience.lessons import lesson_fits, parse_action, parse_scope
from long_term_memory.experience.matches import InjectItem
from long_term_memory.experience.trajectory import trajectory_from_state
from long_term_memory.experience.trajectory_steps import read_trajectory
from nodes.memory_manager import revert_failed

API = parse_prototypes("""
tr_node *tr_parse(const char *text);
tr_node *tr_add_int_to_node(tr_node *node, const char *key, int value);
tr_node *tr_add_text_to_node(tr_node *node, const char *key, const char *text);
tr_node *tr_detach_child_from_node(tr_node *node, const char *key);
tr_node *tr_new_node(void);
void tr_free(tr_node *node);
""")
BY = {f.name: f for f in API}
CRASHED = """\
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tr_node *root = tr_parse(text);
  /* LF improve: call tr_add_int_to_node on root */
  if (root != NULL) {
    tr_node *result2 = NULL;
    result2 = tr_add_int_to_node(root, "a", 1);
    if (result2 != NULL) { tr_free(result2); result2 = NULL; }
  }
  tr_free(root);
  return 0;
}
"""


def _event(name: str, **data: Any) -> dict[str, Any]:
    return {"v": 1, "type": name, "ts": "2026-12-07T00:00:00Z", "data": data}


def _trajectory(tmp_path: Path, released: bool = True, feasible: bool = False) -> str:
    """The extraction prompt's trajectory of a target whose v3 released tr_add_int_to_node's result."""
    (tmp_path / "v3").mkdir(parents=True, exist_ok=True)
    code = CRASHED if released else CRASHED.replace("{ tr_free(result2); result2 = NULL; }", "{ }")
    (tmp_path / "v3" / "harness.c").write_text(code)
    events = [
        _event("improvement.block_repaired", version=2, next_version=3, direction="call tr_add_int_to_node",
               function="tr_add_int_to_node", type="tr_node *", releaser="tr_free"),
        _event("execution.done", version=3, crashed=True, lines={"percent": 0.0}),
        _event("crash.triaged", signature="heap-use-after-free@tr_free<LLVMFuzzerTestOneInput",
               location="library", kind="heap-use-after-free", entry="tr_free", version=3,
               allocated_in="tr_add_int_to_node", freed_first_in="tr_free"),
        _event("crash.verdict", feasible=feasible, verdict="library_bug" if feasible else "harness_misuse"),
        _event("iteration.reverted", version=3, reason="did not run cleanly"),
    ]
    state = {"project": "tr", "function": "tr_parse", "target": BY["tr_parse"].to_dict(),
             "work_dir": str(tmp_path), "best": {"version": 1, "code": CRASHED}}
    trajectory = trajectory_from_state(state, ExperienceConfig(), "run-1", events=events)
    return build_extraction_prompt(extraction_kind([trajectory]), [trajectory])[1]["trajectory"]


def _items(text: str) -> dict[str, dict[str, Any]]:
    steps = read_trajectory(text).steps
    return {i["action"]: i for i in actionable_items("tr_node *tr_parse(const char *text);", steps, CRASHED)}


def test_a_released_result_its_object_owned_becomes_a_keep_result_lesson(tmp_path: Path) -> None:
    text = _trajectory(tmp_path)
    assert ("- [misuse] v3 released what tr_add_int_to_node returned with tr_free: a heap-use-after-free "
            "(allocated in tr_add_int_to_node, released first in tr_free); its object owned it") in text, text
    items = _items(text)
    item = items["keep_result(tr_add_int_to_node)"]
    assert item["failure"] == "sanitizer:heap-use-after-free@tr_add_int_to_node"
    assert item["scope"] == {"name": "tr_add_int_to_node"}
    # the leak repair whose next version crashed is no lesson to copy
    assert not [a for a in items if a.startswith("release_out_param")], items


def test_no_lesson_unless_the_harness_released_it_and_the_crash_was_judged_misuse(tmp_path: Path) -> None:
    assert "[misuse]" not in _trajectory(tmp_path / "a", released=False)
    assert "[misuse]" not in _trajectory(tmp_path / "b", feasible=True)


def test_the_lesson_fits_every_harness_of_the_library_that_has_the_function() -> None:
    lesson = {"scope": {"name": "tr_add_int_to_node"}, "action": "keep_result(tr_add_int_to_node)"}
    assert lesson_fits(lesson, BY["tr_new_node"], api=API)
    assert not lesson_fits(lesson, BY["tr_new_node"], api=[BY["tr_new_node"], BY["tr_free"]])


def test_the_slot_family_is_one_word_apart_on_the_same_object_and_result() -> None:
    assert slot_twins("tr_add_int_to_node", API, {}) == ["tr_add_text_to_node"]  # not detach: it hands over


LATER = """\
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tr_node *doc = tr_parse(text);
  /* LF improve: call tr_add_text_to_node on doc */
  if (doc != NULL) {
    tr_node *result3 = NULL;
    result3 = tr_add_text_to_node(doc, "k", "v");
    (void)result3;
  }
  /* LF improve: call tr_detach_child_from_node on doc */
  if (doc != NULL) {
    tr_node *result4 = NULL;
    result4 = tr_detach_child_from_node(doc, "k");
  }
  tr_free(doc);
  return 0;
}
"""


def _lesson(item_id: str, scope: dict[str, str], action: str) -> ActionableLesson:
    return ActionableLesson(item_id, "t", parse_scope(scope), parse_action(action))


def test_a_later_harness_keeps_the_family_s_results_even_against_a_release_lesson() -> None:
    release = _lesson("MEM-1", {"shape": "returns_pointer", "type": "tr_node"},
                      "release_out_param(type=tr_node, releaser=tr_free)")
    keep = _lesson("MEM-2", {"name": "tr_add_int_to_node"}, "keep_result(tr_add_int_to_node)")
    alone, _notes = apply_lessons(LATER, BY["tr_parse"], API, [release])
    assert "tr_free(result3)" in alone and "tr_free(result4)" in alone  # the release lesson, unchecked
    code, notes = apply_lessons(LATER, BY["tr_parse"], API, [release, keep])
    assert "tr_free(result3)" not in code and "tr_free(result4)" in code, code  # detached: released
    drafted = LATER.replace("(void)result3;", "if (result3 != NULL) tr_free(result3);")
    kept, notes = apply_lessons(drafted, BY["tr_parse"], API, [keep])
    assert "tr_free(result3)" not in kept, kept
    assert notes == ["applied [MEM-2] keep_result(function=tr_add_int_to_node): kept result3 (from "
                     "tr_add_text_to_node) without releasing it: its object owns it"], notes
    assert effect_present(parse_action("keep_result(tr_add_text_to_node)"), kept)
    assert not effect_present(parse_action("keep_result(tr_add_text_to_node)"), drafted)


def test_a_lesson_to_keep_what_a_function_of_no_object_returns_is_not_applied() -> None:
    """``tr_parse(const char *)`` is called on no object: nothing but its caller can own its result.

    Such a lesson (learned when a parsed tree was handed to a node that took it, then released
    twice) would make every later harness leak the tree; it is left out.
    """
    wrong = _lesson("MEM-3", {"name": "tr_parse"}, "keep_result(tr_parse)")
    drafted = "  root = tr_parse(text);\n  if (root != NULL) tr_free(root);\n  return 0;\n"
    assert apply_lessons(drafted, BY["tr_parse"], API, [wrong]) == (drafted, [])
    assert kept_results([wrong], API) == {}
    assert set(kept_results([_lesson("MEM-2", {"name": "tr_add_int_to_node"},
                                     "keep_result(tr_add_int_to_node)")], API)) >= {"tr_add_int_to_node"}


FACTS = HeaderFacts(releasers=[Releaser(function="tr_free", releases="tr_node *", evidence="documentation")])
BLOCK = """\
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* @LF:CALL */
  root = tr_parse(text);
  /* LF improve: call tr_add_text_to_node on root */
  if (root != NULL) {
    tr_node *result2 = NULL;
    result2 = tr_add_text_to_node(root, "k", "v");
  }
  /* @LF:CLEANUP */
  tr_free(root);
  return 0;
}
"""


def test_the_block_repair_does_not_release_what_a_shown_lesson_says_the_object_keeps(tmp_path: Path) -> None:
    frames = [{"function": "malloc", "file": "", "line": 0},
              {"function": "tr_add_text_to_node", "file": "/src/tr.c", "line": 9},
              {"function": "LLVMFuzzerTestOneInput", "file": "harness.c", "line": 7}]
    state: dict[str, Any] = {
        "best": {"version": 1, "code": BLOCK, "lines_percent": 5.0, "build": {"version": 1, "ok": True},
                 "run": {"version": 1, "usable": True}},
        "harness_version": 2, "harness_code": BLOCK, "phase": "optimization",
        "build": {"version": 2, "ok": True}, "run": {"version": 2, "crashed": True, "usable": False},
        "crash": {"version": 2, "kind": "leak", "frames": frames},
        "last_change": {"kind": "improve", "version": 2, "directions": ["call tr_add_text_to_node on root"]},
        "counters": {"harness_versions": 2}, "api": [f.to_dict() for f in API],
        "header_facts": FACTS.to_dict(), "project": "tr", "function": "tr_parse", "work_dir": str(tmp_path)}
    repaired = revert_failed(state, Context())  # type: ignore[arg-type]
    assert "result2 != NULL) tr_free(" in repaired["harness_code"]  # without the lesson: released
    shown = InjectItem("MEM-2", "rec-1", "t", "", "", 1.0, 1, 0.5, False, "",
                       lesson={"action": "keep_result(tr_add_int_to_node)"})
    state["extras"] = {"experience": {"shown": [shown.to_dict()]}}
    kept = revert_failed(state, Context())  # type: ignore[arg-type]
    assert "tr_free((void *)result2)" not in kept["harness_code"], kept["harness_code"]
    last = json.loads((tmp_path / "events.jsonl").read_text().splitlines()[-1])
    assert last["type"] == "iteration.reverted", last  # its only block went, as any other misuse
