"""A call that crashed on the empty input, kept with a guard, teaches the next harness the guard.

An invented API: ``ww_append(ww_dec *dec, const uint8_t *data, size_t size)`` asserts when given
zero bytes. An improvement of one target added it and crashed on the empty input; the block stayed
and the harness returned early on that input. The lesson (``guard_empty_input(ww_append)``) puts the
guard into the next harness of the library that calls ``ww_append``, before it crashes, and the
lesson counts as used only where the measured harness calls it behind the guard.
"""

from __future__ import annotations

from agents.offline.cdecl import parse_prototypes
from agents.offline.lesson_apply import ActionableLesson, apply_lessons
from agents.offline.lesson_extract import actionable_items
from long_term_memory.experience.lesson_effects import effect_present
from long_term_memory.experience.lessons import lesson_fits, parse_action, parse_scope
from long_term_memory.experience.trajectory import _repair_step

API = parse_prototypes("""
ww_dec *ww_new(void);
void ww_delete(ww_dec *dec);
int ww_append(ww_dec *dec, const uint8_t *data, size_t size);
int ww_decode(const uint8_t *data, size_t size);
""")
BY = {f.name: f for f in API}
HARNESS = """\
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int rc = ww_decode(data, size);
  (void)rc;
  /* LF improve: call ww_append on a new ww_dec */
  {
    ww_dec *dec = ww_new();
    if (dec != NULL) ww_append(dec, data, size);
    if (dec != NULL) ww_delete(dec);
  }
  return 0;
}
"""


def _trajectory(*extra: str) -> str:
    event = {"type": "improvement.empty_input_guarded",
             "data": {"version": 2, "next_version": 3, "function": "ww_append"}}
    step = _repair_step(event)
    assert step is not None
    return "\n".join(["- [harness] v2 by enhancer.improve: call ww_append on a new ww_dec "
                      "(adds calls to ww_append)", "- [crash] deadly-signal at library through ww_append",
                      *extra, f"- [{step[0]}] {step[1]}"])


def test_the_kept_guarded_block_becomes_a_guard_lesson() -> None:
    items = actionable_items("int ww_decode(const uint8_t *data, size_t size);", _trajectory(), "")
    assert [(i["action"], i["scope"], i["failure"]) for i in items] == [
        ("guard_empty_input(ww_append)", {"name": "ww_append"}, "empty-input@ww_append")]


def test_a_block_dropped_after_all_teaches_no_guard() -> None:
    dropped = ("- [revert] v3 did not run cleanly: dropped its block 'call ww_append on a new ww_dec' "
               "(v4 has the others)")
    items = actionable_items("int ww_decode(const uint8_t *data, size_t size);", _trajectory(dropped), "")
    assert all(i["action"] != "guard_empty_input(ww_append)" for i in items), items


def test_the_fixers_guard_counts_only_when_the_next_run_ran() -> None:
    lines = ["- [harness] v1 by prototyper: ww_append", "- [run] v1 crashed; line coverage 0.1%",
             "- [crash] deadly-signal at library through ww_append",
             "- [harness] v2 by enhancer.fix: return early on an empty input (the crash input is empty)"]
    decl = "int ww_append(ww_dec *dec, const uint8_t *data, size_t size);"
    ran = actionable_items(decl, "\n".join([*lines, "- [run] v2 ran, target hit 9x; line coverage 3.0%"]), "")
    assert [i["action"] for i in ran] == ["guard_empty_input(ww_append)"]
    crashed = actionable_items(decl, "\n".join([*lines, "- [run] v2 crashed; line coverage 0.1%"]), "")
    assert all(i["action"] != "guard_empty_input(ww_append)" for i in crashed)


def test_the_next_harness_calling_it_gets_the_guard_and_uses_the_lesson() -> None:
    action = parse_action("guard_empty_input(ww_append)")
    lesson = ActionableLesson("MEM-0000e0e0", "ww_append fails on the empty input", parse_scope(
        {"name": "ww_append"}), action)
    target = BY["ww_decode"]
    assert not effect_present(action, HARNESS, target)
    code, notes = apply_lessons(HARNESS, target, API, [lesson])
    assert "if (size == 0) return 0;" in code, code
    assert notes and notes[0].startswith("applied [MEM-0000e0e0] guard_empty_input(function=ww_append): "
                                  "return early on an empty input")
    assert effect_present(action, code, target)
    stored = {"scope": {"name": "ww_append"}, "action": "guard_empty_input(ww_append)"}
    assert lesson_fits(stored, target, api=API)
    untouched = HARNESS.replace("ww_append(dec, data, size)", "ww_delete(dec)")
    assert apply_lessons(untouched, target, API, [lesson]) == (untouched, [])
    assert not effect_present(action, untouched, target)
