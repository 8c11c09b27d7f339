"""Each lesson is validated by its own failure signature, not by the target's overall result.

Applied, and the stage where its failure would show reached without it: pass. Applied, and the
same failure seen: fail. The stage never reached with its change, or the target failed another
way: no validation at all (no trust change). Lessons without an action keep the target's result.
"""

from __future__ import annotations

from typing import Any

from long_term_memory.experience import Gatekeeper, InjectItem
from long_term_memory.experience.lesson_checks import (
    JUDGED_BY_CHANGE,
    JUDGED_BY_PRESENCE,
    LessonEvidence,
    compile_observation,
    failure_class,
    parse_failure,
    run_observation,
)
from tests.unit.test_experience_support import config, outcome

RELEASE = {"scope": {"shape": "returns_pointer", "type": "kv_t"}, "failure": "sanitizer:leak@kv_new",
           "action": "release_out_param(type=kv_t, releaser=kv_free)"}
TAG = {"scope": {"type": "kv_mode"}, "failure": "compile:must-use-tag",
       "action": "keep_struct_tag(tag=kv_mode, kind=enum)"}
MUST_USE = "must use 'enum' tag to refer to type 'kv_mode'"


def shown(item_id: str, lesson: dict[str, Any]) -> InjectItem:
    return InjectItem(item_id, "rec-1", f"title {item_id}", "desc", "content", 0.7, 0, 0.5, True, "q", lesson)


def built(version: int, ok: bool, *errors: str,
          present: tuple[str, ...] = ("MEM-0000000a",)) -> dict[str, Any]:
    return compile_observation(version, ok, errors, present)


def ran(version: int, crash: dict[str, Any] | None = None, hits: int = 5,
        present: tuple[str, ...] = ("MEM-0000000a",), **kw: Any) -> dict[str, Any]:
    return run_observation(version, {"crashed": crash is not None, "target_hits": hits}, crash,
                           kw.get("empty", False), kw.get("missing", False), present)


def plans(lesson: dict[str, Any], observations: list[dict[str, Any]], used: bool = True,
          judged: str = JUDGED_BY_CHANGE, broke: frozenset[str] = frozenset(),
          **facts: Any) -> dict[str, Any]:
    items = [shown("MEM-0000000a", lesson)]
    evidence = LessonEvidence(tuple(observations), (), broke, judged)
    decision = Gatekeeper(config()).evaluate(items, ["MEM-0000000a"] if used else [], outcome(**facts), [],
                                             evidence)
    return {p.item_id: p for p in decision.validations}


def test_signatures_name_their_stage_and_class() -> None:
    assert parse_failure("compile:must-use-tag").stage == "compile"  # type: ignore[union-attr]
    leak = parse_failure("sanitizer:leak@kv_new")
    assert leak is not None and (leak.stage, leak.kind, leak.function) == ("run", "leak", "kv_new")
    assert parse_failure("input-not-reaching-target").stage == "run"  # type: ignore[union-attr]
    assert parse_failure("plateau").stage == "coverage"  # type: ignore[union-attr]
    assert parse_failure("the harness was bad") is None
    assert [failure_class(x) for x in (TAG, RELEASE, {"failure": "empty-input@f"}, {})] == \
        ["compile", "leak", "crash", ""]
    # An action whose signature is unreadable is judged by the failure its verb prevents.
    assert failure_class({"failure": "oops", "action": "feed_input_via(kv_set_input)"}) == "input"


def test_a_release_lesson_passes_when_the_run_was_reached_without_its_leak() -> None:
    got = plans(RELEASE, [built(1, True), ran(1)])
    assert got["MEM-0000000a"].result == "pass" and got["MEM-0000000a"].strong_signal
    assert got["MEM-0000000a"].notes.startswith(
        "sanitizer:leak@kv_new not seen after the run stage was reached (v1 ran)")
    assert "judged by counterfactual" in got["MEM-0000000a"].notes


def test_a_release_lesson_fails_when_its_own_leak_showed() -> None:
    leak = {"kind": "leak", "entry_function": "kv_new", "frames": [{"function": "malloc"}]}
    got = plans(RELEASE, [built(1, True), ran(1, leak)], compiles=True, runs=False)
    assert got["MEM-0000000a"].result == "fail"
    assert got["MEM-0000000a"].notes.startswith("sanitizer:leak@kv_new seen in the run of v1")


def test_no_verdict_when_the_stage_was_never_reached_or_the_target_failed_another_way() -> None:
    # A correct release lesson shown to a target that failed to compile for an unrelated reason:
    # the target's result is fail, the lesson gets no validation (before: fail, and blocked in time).
    assert plans(RELEASE, [built(1, False, "use of undeclared identifier 'kv_nope'")],
                 compiles=False, runs=False) == {}
    other = {"kind": "heap-buffer-overflow", "entry_function": "kv_get"}
    assert plans(RELEASE, [built(1, True), ran(1, other)], runs=False) == {}
    assert plans(RELEASE, [built(1, True), ran(1, hits=0)], runs=False) == {}  # the target never ran
    assert plans(RELEASE, [built(1, True), ran(1)], used=False) == {}  # it changed nothing


def test_a_compile_lesson_is_judged_by_its_own_error_class_and_name() -> None:
    failed = plans(TAG, [built(1, False, MUST_USE)], compiles=False, runs=False)
    assert failed["MEM-0000000a"].result == "fail"
    assert plans(TAG, [built(2, True)], runs=False)["MEM-0000000a"].result == "pass"  # run stage not needed
    another_tag = "must use 'struct' tag to refer to type 'kv_other'"
    assert plans(TAG, [built(1, False, another_tag)], compiles=False, runs=False) == {}
    # A build that failed on the lesson's own change fails it, whatever its signature.
    broke = plans(TAG, [built(1, False, "tag type mismatch")], broke=frozenset({"MEM-0000000a"}),
                  compiles=False, runs=False)
    assert broke["MEM-0000000a"].result == "fail" and broke["MEM-0000000a"].notes.startswith(
        "its change broke the build")


def test_versions_without_the_change_do_not_count_and_presence_is_recorded() -> None:
    leak = {"kind": "leak", "entry_function": "kv_new"}
    without = [built(1, True), ran(1, leak, present=())]
    assert plans(RELEASE, without) == {}  # the leak was in a version that did not have the change
    got = plans(RELEASE, [built(1, True), ran(1)], judged=JUDGED_BY_PRESENCE)
    assert "judged by presence" in got["MEM-0000000a"].notes


def test_lessons_without_an_action_keep_the_targets_result() -> None:
    items = [shown("MEM-0000000a", RELEASE), shown("MEM-0000000b", {})]
    failed = outcome(compiles=False, runs=False)
    evidence = LessonEvidence((built(1, False, "use of undeclared identifier 'x'"),), (), frozenset())
    decision = Gatekeeper(config()).evaluate(items, ["MEM-0000000b"], failed, [], evidence)
    assert [(p.item_id, p.result) for p in decision.validations] == [("MEM-0000000b", "fail")]
    # Without evidence (a caller that recorded none) every item keeps today's rule.
    old = Gatekeeper(config()).evaluate(items, ["MEM-0000000a"], failed, [])
    assert [(p.item_id, p.result) for p in old.validations] == [("MEM-0000000a", "fail")]


KEEP = {"scope": {"name": "kv_child_*"}, "failure": "sanitizer:heap-use-after-free@kv_child_add",
        "action": "keep_result(kv_child_add)"}


def test_a_lesson_whose_change_causes_the_opposite_failure_fails() -> None:
    """Keeping what a function returns, when its object does not own it, leaks it: the lesson fails.

    Releasing with a lesson's releaser what another holds frees it twice: that lesson fails too.
    A crash of another kind, or one naming neither, gives no verdict, as before.
    """
    leaked = {"kind": "leak", "entry_function": "kv_child_add", "frames": [{"function": "malloc"}]}
    got = plans(KEEP, [built(1, True), ran(1, leaked)], runs=False)
    assert got["MEM-0000000a"].result == "fail", got
    assert "a leak naming kv_child_add" in got["MEM-0000000a"].notes
    twice = {"kind": "double-free", "entry_function": "kv_free", "frames": [{"function": "kv_free"}]}
    assert plans(RELEASE, [built(1, True), ran(1, twice)], runs=False)["MEM-0000000a"].result == "fail"
    elsewhere = {"kind": "leak", "entry_function": "kv_new"}
    assert plans(KEEP, [built(1, True), ran(1, elsewhere)], runs=False) == {}
