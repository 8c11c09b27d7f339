"""A call that crashed on the empty input, guarded by the fixer, teaches the next harness the guard.

An invented API: ``ww_append(ww_dec *dec, const uint8_t *data, size_t size)`` asserts when given
zero bytes. One target's harness crashed in it on the empty input; the fixer made the harness
return early on zero bytes and the next run ran. The lesson (``guard_empty_input(ww_append)``)
puts the guard into the next harness of the library that calls ``ww_append``, before it crashes,
and counts as used only where the measured harness calls it behind the guard. A guard after which
the harness crashed again teaches nothing: the fuzzer runs the empty input first, so a call that
fails on every input crashes there too.
"""

from __future__ import annotations

from agents.offline.cdecl import parse_prototypes
from agents.offline.lesson_apply import ActionableLesson, apply_lessons
from agents.offline.lesson_extract import actionable_items
from fuzzkit.guidance_facts import Rule
from long_term_memory.experience.lesson_effects import effect_present
from long_term_memory.experience.lessons import lesson_fits, parse_action, parse_scope
from tests.trajectories import crash, harness, run

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


def test_the_fixers_guard_counts_only_when_the_next_run_ran() -> None:
    steps = [harness(1, "prototyper", "ww_append"), run(1, lines=0.1, crashed=True),
             crash("deadly-signal", "ww_append"),
             harness(2, "enhancer.fix", "return early on an empty input (the crash input is empty)",
                     rules=(Rule(kind="min_size", size=1),))]
    decl = "int ww_append(ww_dec *dec, const uint8_t *data, size_t size);"
    ran = actionable_items(decl, [*steps, run(2, hits=9, lines=3.0)], "")
    assert [i["action"] for i in ran] == ["guard_empty_input(ww_append)"]
    crashed = actionable_items(decl, [*steps, run(2, lines=0.1, crashed=True)], "")
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
