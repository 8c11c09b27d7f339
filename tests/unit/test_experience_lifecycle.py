"""Every lifecycle rule of the Candidate / Hit / Validation seed, with its numbers.

Pure rules first (trust steps, consecutive_fail, levels 0-3, blocking, recovery, freshness),
then the same rules through the SQLite store and the bank (idempotent decisions).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from long_term_memory.experience import EventLog, Gatekeeper, HitRef, ItemStats, ValidationPlan
from long_term_memory.experience.rules import (
    apply_hit,
    apply_validation,
    derived_level,
    freshness,
    is_injectable,
    is_success,
    validation_result,
)
from tests.unit.test_experience_support import config, item, open_bank, outcome, record

G = config().gatekeeper


def fresh(**kw: object) -> ItemStats:
    return dataclasses.replace(ItemStats("MEM-00000001", trust=0.5, created_at=1000.0), **kw)


def test_trust_steps_follow_the_seed() -> None:
    assert apply_validation(fresh(), "pass", G, 0).trust == pytest.approx(0.55)
    assert apply_validation(fresh(), "partial", G, 0).trust == pytest.approx(0.52)
    assert apply_validation(fresh(), "fail", G, 0).trust == pytest.approx(0.40)
    assert apply_validation(fresh(trust=0.98), "pass", G, 0).trust == 1.0  # capped
    assert apply_validation(fresh(trust=0.99), "partial", G, 0).trust == 1.0
    assert apply_validation(fresh(trust=0.05), "fail", G, 0).trust == 0.0  # floored


def test_consecutive_fail_steps_and_reset() -> None:
    s = apply_validation(fresh(), "fail", G, 0)
    assert s.consecutive_fail == 1.0
    s = apply_validation(s, "partial", G, 0)
    assert s.consecutive_fail == 1.5
    s = apply_validation(s, "pass", G, 0)
    assert s.consecutive_fail == 0.0 and s.pass_count == 1 and s.fail_count == 1 and s.partial_count == 1


def test_levels_rise_candidate_verified_confirmed_gold() -> None:
    s = fresh()
    assert s.validation_level == 0
    s = apply_validation(s, "pass", G, 0)
    assert s.validation_level == 1  # first pass: verified
    s = apply_validation(s, "pass", G, 0)
    assert s.validation_level == 1
    s = apply_validation(s, "pass", G, 0)
    assert s.validation_level == 2  # three passes in total: confirmed
    s = apply_validation(dataclasses.replace(s, use_count=9), "pass", G, 0)
    assert s.validation_level == 2  # 9 uses are not enough for gold
    s = apply_validation(dataclasses.replace(s, use_count=10), "pass", G, 0)
    assert s.validation_level == 3  # used 10 times and passing: gold standard
    assert apply_validation(s, "fail", G, 0).validation_level == 3  # a fail does not lower the level
    assert derived_level(0, 50, G) == 0 and derived_level(2, 50, G) == 1


def test_levels_need_a_pass_never_a_partial() -> None:
    s = fresh()
    for _ in range(5):
        s = apply_validation(s, "partial", G, 0)
    assert s.validation_level == 0


def test_blocking_at_the_threshold_and_recovery_on_a_pass() -> None:
    s = fresh()
    s = apply_validation(s, "fail", G, 0)
    s = apply_validation(s, "fail", G, 0)
    assert s.status == "active" and s.consecutive_fail == 2.0
    s = apply_validation(s, "fail", G, 0)
    assert s.status == "blocked" and s.consecutive_fail == 3.0
    assert s.trust == pytest.approx(0.2)
    assert is_injectable(s.status, 1.0, s.consecutive_fail, G)
    s = apply_validation(s, "partial", G, 0)
    assert s.status == "blocked"
    s = apply_validation(s, "pass", G, 0)
    assert s.status == "active" and s.consecutive_fail == 0.0
    assert is_injectable(s.status, 1.0, s.consecutive_fail, G) == ""


def test_partials_alone_block_after_six() -> None:
    s = fresh()
    for n in range(1, 7):
        s = apply_validation(s, "partial", G, 0)
        assert (s.status == "blocked") == (n == 6), n


def test_thresholds_are_configurable() -> None:
    g = config(gatekeeper__block_threshold=1.0, gatekeeper__trust_fail=0.3,
               gatekeeper__level2_passes=2).gatekeeper
    s = apply_validation(fresh(), "fail", g, 0)
    assert s.status == "blocked" and s.trust == pytest.approx(0.2)
    s = apply_validation(apply_validation(fresh(), "pass", g, 0), "pass", g, 0)
    assert s.validation_level == 2


def test_hits_count_shown_and_used_separately() -> None:
    s = apply_hit(apply_hit(fresh(), True, False, 0), True, True, 0)
    assert (s.hit_count, s.use_count) == (2, 1)


def test_freshness_halves_per_half_life_and_a_pass_renews_it() -> None:
    day = 86400.0
    s = fresh(created_at=0.0)
    assert freshness(s, 30 * day, G) == pytest.approx(0.5)
    assert freshness(s, 0.0, G) == 1.0
    stale = 300 * day
    assert freshness(s, stale, G) < G.min_freshness
    assert "stale" in is_injectable("active", freshness(s, stale, G), 0.0, G)
    renewed = apply_validation(s, "pass", G, stale)
    assert freshness(renewed, stale, G) == 1.0


def test_outcome_judgement_pass_partial_fail() -> None:
    cfg = config()
    assert validation_result(outcome(), cfg) == "pass"
    assert validation_result(outcome(runs=False), cfg) == "partial"
    assert validation_result(outcome(compiles=False, runs=False), cfg) == "fail"
    # A real bug counts as success even when the final harness does not run cleanly.
    real = outcome(runs=False, crashed=True, crashed_real=True)
    assert is_success(real, cfg) and validation_result(real, cfg) == "pass"
    strict = config(outcome__success_min_lines_percent=50.0)
    assert validation_result(outcome(lines_percent=40.0), strict) == "partial"


def test_bank_applies_the_rules_and_replays_nothing(tmp_path: Path) -> None:
    bank = open_bank(tmp_path / "bank")
    lesson = item("Copy input", "copy into a NUL buffer " * 3)
    added = bank.add_record(record("rec-a", "kv/kv_parse", [lesson]))
    item_id = added.added[0]
    gk = Gatekeeper(bank.config)
    events = EventLog(tmp_path / "run.events.jsonl")
    for n in range(3):
        decision = gk.evaluate([item_id], [], outcome("kv/kv_count", f"run-f{n}", compiles=False, runs=False))
        bank.apply(decision, events)
    st = bank.stats([item_id])[item_id]
    assert st.status == "blocked" and st.consecutive_fail == 3.0 and st.hit_count == 3
    assert st.use_count == 0 and st.trust == pytest.approx(0.2)
    again = bank.apply(decision, events)  # the same decision, as after a resume
    assert again.replayed and bank.stats([item_id])[item_id] == st
    recover = gk.evaluate([item_id], [item_id], outcome("kv/kv_get", "run-p"))
    bank.apply(recover, events)
    st = bank.stats([item_id])[item_id]
    assert st.status == "active" and st.consecutive_fail == 0 and st.validation_level == 1
    assert st.use_count == 1 and st.trust == pytest.approx(0.25)
    assert [e["data"]["result"] for e in events.of_type("memory.validation.write")] == \
        ["fail", "fail", "fail", "pass"]
    history = bank.history(item_id)
    assert [v["result"] for v in history["validations"]] == ["fail", "fail", "fail", "pass"]
    assert len(history["hits"]) == 4
    bank.close()
    reopened = open_bank(tmp_path / "bank", read_only=True)
    assert reopened.stats([item_id])[item_id] == st
    reopened.close()


def test_unknown_items_are_reported_not_fatal(tmp_path: Path) -> None:
    bank = open_bank(tmp_path / "bank")
    events = EventLog(None)
    decision = Gatekeeper(bank.config).evaluate(["MEM-deadbeef"], ["MEM-deadbeef"], outcome())
    decision.hit_refs = [HitRef("MEM-deadbeef", True, True)]
    decision.validations = [ValidationPlan("MEM-deadbeef", "pass", True, True, "")]
    result = bank.apply(decision, events)
    assert result.hits == 0 and not result.validations
    assert events.of_type("memory.write.skip")[0]["data"]["items"] == ["MEM-deadbeef"] * 2
    bank.close()
