"""Gatekeeper: injection filter and ranking, hit/validation plans, every candidate condition."""

from __future__ import annotations

import dataclasses

import pytest

from long_term_memory.experience import (
    Gatekeeper,
    InjectItem,
    Match,
    detect_used,
    render_experience,
)
from long_term_memory.experience.gatekeeper import assess_confidence
from tests.unit.test_experience_support import config, item, outcome

LESSON = item("Copy input into a NUL-terminated buffer",
              "Copy `data` into malloc(size + 1), set buf[size] = 0 and pass it to kv_parse(); "
              "free it after kv_free(). Without it kv_parse reads past the input.")


def match(item_id: str, score: float = 0.7, level: int = 0, trust: float = 0.5,
          status: str = "active", fresh: float = 1.0, fails: float = 0.0) -> Match:
    return Match(item_id, "rec-1", "kv/other", f"title {item_id}", "desc", "content", score, status,
                 level, trust, fresh, fails, True, "project kv; target int kv_count(const kv_t * kv)")


def test_prepare_inject_filters_status_freshness_and_failures() -> None:
    gk = Gatekeeper(config(retrieval__top_k=5))
    matches = [match("MEM-00000001"), match("MEM-00000002", status="blocked"),
               match("MEM-00000003", fresh=0.0005), match("MEM-00000004", fails=3.0),
               match("MEM-00000005", fails=2.5)]
    inject, rejected = gk.screen(matches)
    assert [i.item_id for i in inject] == ["MEM-00000001", "MEM-00000005"]
    reasons = {r["item_id"]: r["reason"] for r in rejected}
    assert reasons["MEM-00000002"] == "status blocked"
    assert reasons["MEM-00000003"].startswith("stale")
    assert reasons["MEM-00000004"].startswith("consecutive_fail 3")


def test_prepare_inject_ranks_by_level_trust_score_freshness_and_keeps_top_k() -> None:
    matches = [match("MEM-0000000a", score=0.95), match("MEM-0000000b", score=0.55, level=2),
               match("MEM-0000000c", score=0.6, level=2, trust=0.9),
               match("MEM-0000000d", score=0.6, level=2, trust=0.9, fresh=0.5),
               match("MEM-0000000e", score=0.99, level=1)]
    ranked = Gatekeeper(config(retrieval__top_k=5)).prepare_inject(matches)
    assert [i.item_id for i in ranked] == ["MEM-0000000c", "MEM-0000000d", "MEM-0000000b",
                                           "MEM-0000000e", "MEM-0000000a"]
    top1 = Gatekeeper(config()).prepare_inject(matches)  # default top_k = 1
    assert [i.item_id for i in top1] == ["MEM-0000000c"]
    assert Gatekeeper(config()).prepare_inject([]) == []


def test_render_experience_shows_ids_and_detect_used_finds_citations() -> None:
    items = Gatekeeper(config(retrieval__top_k=2)).prepare_inject(
        [match("MEM-3f2a9c01", level=1), match("MEM-00c0ffee")])
    text = render_experience(items)
    assert text.startswith("## Relevant experience")
    assert "### [MEM-3f2a9c01] title MEM-3f2a9c01" in text and "[MEM-00c0ffee]" in text
    assert "verified, trust 0.50" in text and "(success)" in text
    assert render_experience([]) == ""
    shown = [i.item_id for i in items]
    reply = 'notes: applied [mem-3F2A9C01] and MEM_deadbeef (never shown); see MEM-00c0ffeeX'
    assert detect_used(reply, shown) == ["MEM-3f2a9c01"]
    assert detect_used("following MEM 00c0ffee", shown) == ["MEM-00c0ffee"]
    assert detect_used("", shown) == []


def test_first_run_writes_a_candidate() -> None:
    gk = Gatekeeper(config())
    decision = gk.evaluate([], [], outcome())
    assert not decision.hit_refs and not decision.validations
    assert decision.should_extract and decision.is_success
    admitted = gk.admit(decision, outcome(), [LESSON], query="project kv; target kv_parse",
                        trajectory="- [build] v1 built", task_type="fuzz-c")
    cand = admitted.candidate
    assert cand is not None and cand.is_success and cand.kind == "success"
    assert cand.memory_id.startswith("rec-") and cand.confidence >= 0.45


def test_used_item_gets_hit_and_validation_and_blocks_a_new_candidate() -> None:
    gk = Gatekeeper(config(retrieval__top_k=2))
    shown = gk.prepare_inject([match("MEM-00000123"), match("MEM-00000456")])
    decision = gk.evaluate(shown, ["MEM-00000123", "MEM-99999999"], outcome(fix_rounds=0))
    assert [(h.item_id, h.shown, h.used) for h in decision.hit_refs] == [
        ("MEM-00000123", True, True), ("MEM-00000456", True, False)]
    assert [(v.item_id, v.result, v.strong_signal) for v in decision.validations] == [
        ("MEM-00000123", "pass", True)]
    assert decision.has_strong and not decision.should_extract
    assert "strong answer" in decision.skip_reasons[0]


def test_without_use_the_first_shown_item_is_validated_weakly() -> None:
    gk = Gatekeeper(config(retrieval__top_k=2))
    shown = gk.prepare_inject([match("MEM-00000123"), match("MEM-00000456")])
    decision = gk.evaluate(shown, [], outcome(compiles=True, runs=False))
    assert [(v.item_id, v.result, v.used, v.strong_signal) for v in decision.validations] == [
        ("MEM-00000123", "partial", False, False)]
    assert not decision.has_strong and decision.should_extract  # a failure still teaches


@pytest.mark.parametrize(("facts", "matches", "reason"), [
    ({"harness_versions": 0, "model_calls": 0}, [], "trivial trajectory"),
    ({"fix_rounds": 0}, [match("MEM-00000001", level=2)], "strong answer already exists (MEM-00000001"),
    ({"fix_rounds": 0}, [match("MEM-00000001", score=0.93)],
     "top-1 match score 0.930 >= skip_if_top1_score_ge 0.9"),
])
def test_each_outcome_level_candidate_condition_blocks(facts: dict, matches: list[Match],
                                                       reason: str) -> None:
    decision = Gatekeeper(config()).evaluate([], [], outcome(**facts), matches)
    assert not decision.should_extract
    assert any(reason in r for r in decision.skip_reasons), decision.skip_reasons
    admitted = Gatekeeper(config()).admit(decision, outcome(), [LESSON], query="q", trajectory="t",
                                          task_type="fuzz-c")
    assert admitted.candidate is None


def test_a_run_that_needed_repairs_is_extracted_beside_a_strong_or_close_answer() -> None:
    """Its repairs are what the bank did not prevent: they become the next target's lessons."""
    gk = Gatekeeper(config(retrieval__top_k=2))
    close = [match("MEM-00000001", level=2, score=0.95)]
    assert not gk.evaluate([], [], outcome(fix_rounds=0), close).should_extract
    repaired = gk.evaluate([], [], outcome(fix_rounds=2), close)
    assert repaired.should_extract and repaired.skip_reasons == []
    shown = gk.prepare_inject([match("MEM-00000123")])
    assert gk.evaluate(shown, ["MEM-00000123"], outcome(fix_rounds=1)).should_extract
    # an improvement dropped because it broke the harness is a failure the bank did not prevent
    assert not gk.evaluate(shown, ["MEM-00000123"], outcome(fix_rounds=0)).should_extract
    dropped = gk.evaluate(shown, ["MEM-00000123"], outcome(fix_rounds=0, dropped=1))
    assert dropped.should_extract and gk.evaluate([], [], outcome(dropped=1), close).should_extract


def test_blocked_strong_match_does_not_count_and_threshold_is_configurable() -> None:
    gk = Gatekeeper(config())
    assert gk.evaluate([], [], outcome(), [match("MEM-1", level=3, status="blocked")]).should_extract
    loose = Gatekeeper(config(gatekeeper__skip_if_top1_score_ge=0.99))
    assert loose.evaluate([], [], outcome(), [match("MEM-1", score=0.95)]).should_extract


def test_admit_drops_trivial_lessons_and_refuses_when_all_are_trivial() -> None:
    gk = Gatekeeper(config())
    decision = gk.evaluate([], [], outcome())
    short = item("Short", "be careful")
    kept = gk.admit(decision, outcome(), [short, LESSON], query="q", trajectory="t", task_type="fuzz-c")
    assert kept.candidate is not None and [i.title for i in kept.candidate.memory_items] == [LESSON.title]
    none = gk.admit(decision, outcome(), [short], query="q", trajectory="t", task_type="fuzz-c")
    assert none.candidate is None and "trivial output" in none.skip_reasons[-1]


def test_admit_confidence_threshold() -> None:
    plain = item("Plain", "x" * 45)  # no code, short, no measured steps
    bare = outcome(harness_versions=0, fix_rounds=0, iterations=0, model_calls=1)
    assert assess_confidence([plain], bare) == pytest.approx(0.55)  # 0.5 + 0.05 for 20+ characters
    assert assess_confidence([LESSON], outcome()) == pytest.approx(0.95)
    gk = Gatekeeper(config(candidate__min_confidence=0.6))
    decision = dataclasses.replace(gk.evaluate([], [], outcome()), should_extract=True)
    low = gk.admit(decision, bare, [plain], query="q", trajectory="t", task_type="fuzz-c")
    assert low.candidate is None and low.skip_reasons[-1] == "confidence 0.55 < min_confidence 0.6"


def test_admit_redacts_secrets_or_refuses_in_strict_mode() -> None:
    leaky = item("Token in env", "The build read GITHUB_TOKEN=ghp_" + "a1B2" * 9 + " from the env; "
                 "call kv_parse(text) only after NUL-terminating the copy.")
    gk = Gatekeeper(config())
    decision = gk.evaluate([], [], outcome())
    redacted = gk.admit(decision, outcome(), [leaky], query="q https://bob:hunter22@example.org/x",
                        trajectory="t", task_type="fuzz-c")
    assert redacted.candidate is not None
    assert redacted.redactions == ["github_pat", "url_password"]
    text = redacted.candidate.model_dump_json()
    assert "ghp_a1B2" not in text and "hunter22" not in text and "[REDACTED:github_pat]" in text
    strict = Gatekeeper(config(candidate__strict_secret_block=True))
    refused = strict.admit(decision, outcome(), [leaky], query="q", trajectory="t", task_type="fuzz-c")
    assert refused.candidate is None and "candidate refused" in refused.skip_reasons[-1]
    off = Gatekeeper(config(candidate__redact=False))
    raw = off.admit(decision, outcome(), [leaky], query="q", trajectory="t", task_type="fuzz-c")
    assert raw.candidate is not None and "ghp_a1B2" in raw.candidate.model_dump_json()


def test_labels_come_from_the_outcome_never_swapped() -> None:
    gk = Gatekeeper(config())
    failed = outcome(compiles=False, runs=False)
    decision = gk.evaluate([], [], failed)
    cand = gk.admit(decision, failed, [LESSON], query="q", trajectory="t", task_type="fuzz-c").candidate
    assert cand is not None and cand.is_success is False and cand.kind == "failure"
    with pytest.raises(ValueError, match="contradicts the measured outcome"):
        gk.admit(decision, failed, [LESSON], query="q", trajectory="t", task_type="fuzz-c", kind="success")
    contrastive = gk.admit(decision, failed, [LESSON], query="q", trajectory="t", task_type="fuzz-c",
                           kind="contrastive").candidate
    assert contrastive is not None and contrastive.kind == "contrastive" and not contrastive.is_success


def test_same_outcome_gives_same_ids_different_attempts_differ() -> None:
    gk = Gatekeeper(config())
    a = gk.evaluate([], [], outcome(run_id="r", attempt=0))
    b = gk.evaluate([], [], outcome(run_id="r", attempt=0))
    c = gk.evaluate([], [], outcome(run_id="r", attempt=1))
    assert a.decision_id == b.decision_id != c.decision_id
    inject = InjectItem.from_dict(InjectItem.from_match(match("MEM-00000001")).to_dict())
    assert inject.item_id == "MEM-00000001"


def test_a_fitting_actionable_lesson_is_shown_first_and_a_misfit_is_left_out() -> None:
    """A trusted plain item no longer hides the lesson the target can apply (top_k=1)."""
    from fuzzkit.api import FunctionDecl, Param

    target = FunctionDecl("zz_load", "int", (Param("text", "const char *"), Param("out", "zz_tree **")))
    fit = dataclasses.replace(match("MEM-000000f1", score=0.55), lesson={
        "scope": {"name": "zz_*", "shape": "out_param", "type": "zz_tree"},
        "action": "release_out_param(type=zz_tree, releaser=zz_drop)"})
    misfit = dataclasses.replace(match("MEM-000000f2", score=0.9, level=2, trust=0.9), lesson={
        "scope": {"type": "zz_other"}, "action": "keep_struct_tag(zz_other)"})
    plain = match("MEM-000000f3", score=0.9, level=2, trust=0.9)
    gk = Gatekeeper(config(retrieval__top_k=1))
    shown, rejected = gk.screen([plain, misfit, fit], target)
    assert [i.item_id for i in shown] == ["MEM-000000f1", "MEM-000000f3"]
    reasons = {r["item_id"]: r["reason"] for r in rejected}
    assert reasons["MEM-000000f2"] == "its scope does not fit the target"
    # Without a target (the CLI's search) the seed-001 order and top_k hold as before.
    assert [i.item_id for i in gk.screen([plain, misfit, fit])[0]] == ["MEM-000000f2"]
    assert [i.item_id for i in Gatekeeper(config(retrieval__top_k=1, retrieval__scoped_extra=0))
            .screen([plain, fit], target)[0]] == ["MEM-000000f1"]


def test_a_run_whose_improvement_lost_a_crashed_block_is_extracted_beside_a_strong_answer() -> None:
    """Improvements now drop only the block a misuse crash happened in: such a run has a failure
    the bank did not prevent as much as one that dropped a whole improvement."""
    from long_term_memory.experience.trajectory import outcome_from_state

    state = {"project": "p", "function": "f", "counters": {"dropped_blocks": 2, "harness_versions": 4},
             "usage": {"enhancer": {"calls": 3}}}
    facts = outcome_from_state(state, run_id="r")
    assert facts.dropped == 2
    close = [match("MEM-00000001", level=2, score=0.95)]
    assert Gatekeeper(config()).evaluate([], [], facts, close).should_extract
    assert not Gatekeeper(config()).evaluate([], [], outcome_from_state(
        {**state, "counters": {"harness_versions": 4}}, run_id="r"), close).should_extract


def test_calls_to_leave_out_have_their_own_budget() -> None:
    """One library teaches several calls to leave out; with the scoped budget of 2, the newest (an
    unvalidated lesson ranked below the validated ones) was cut and its crash came back."""
    from fuzzkit.api import FunctionDecl, Param

    api = [FunctionDecl(f"zz_{n}", "int", (Param("t", "zz_tree *"),))
           for n in ("load", "walk", "dump", "graft", "prune", "sort", "mark")]

    def avoid(i: int, name: str, level: int) -> Match:
        return dataclasses.replace(match(f"MEM-0000a{i:03d}", score=0.5, level=level, trust=0.5 + level / 10),
                                   lesson={"scope": {"name": name}, "action": f"avoid_call(function={name})"})

    avoids = [avoid(i, f"zz_{n}", 2 if i < 4 else 0) for i, n in enumerate(
        ("walk", "dump", "graft", "prune", "sort"))]
    plain = match("MEM-000000f3", score=0.9, level=1, trust=0.6)
    shown, rejected = Gatekeeper(config(retrieval__top_k=1)).screen([plain, *avoids], api[0], (), api)
    assert [i.item_id for i in shown] == [m.item_id for m in avoids] + ["MEM-000000f3"]
    gk = Gatekeeper(config(retrieval__top_k=1, retrieval__avoid_extra=2))
    capped = gk.screen([plain, *avoids], api[0], (), api)
    assert [i.item_id for i in capped[0]] == [m.item_id for m in avoids[:2]] + ["MEM-000000f3"]
    assert {r["item_id"]: r["reason"] for r in capped[1]} == {
        m.item_id: "beyond the 2 calls to leave out shown" for m in avoids[2:]}
