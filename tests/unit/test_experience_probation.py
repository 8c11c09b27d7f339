"""A blocked item's road back (probation), the use rate in ranking, and candidate tags."""

from __future__ import annotations

from pathlib import Path

import pytest

from logicfuzz.cli import main
from long_term_memory.experience import EventLog, Gatekeeper, Match
from long_term_memory.experience.rules import outcome_tags
from tests.unit.test_experience_support import config, item, open_bank, outcome, record

LESSON = item("Release the out-parameter", "Release *out with the type's releaser after the call; "
              "a leak report names the parser as the allocator.", "parsers with a T ** out-parameter")
QUERY = "project acme; target int acme_parse(const char *s, acme_t **out)"


def block(directory: Path, item_id: str, cfg: object) -> None:
    """Fail the item until the Gatekeeper blocks it (three failed validations in a row)."""
    bank = open_bank(directory, cfg=cfg)
    gk = Gatekeeper(cfg)
    for n in range(3):
        matches = bank.search(QUERY, exclude_task_id="acme/other", threshold=-1.0)
        shown = gk.prepare_inject(matches)
        assert [s.item_id for s in shown] == [item_id]
        failed = outcome("acme/other", run_id=f"fail-{n}", compiles=False, runs=False)
        bank.apply(gk.evaluate(shown, [item_id], failed, matches), EventLog(directory / "e.jsonl"))
    assert bank.stats([item_id])[item_id].status == "blocked"
    bank.close()


def one_run(directory: Path, cfg: object, run_id: str, success: bool) -> tuple[list[str], str]:
    """One target: search, screen, run (its measured outcome), apply. Returns (shown, status after)."""
    bank = open_bank(directory, cfg=cfg)
    gk = Gatekeeper(cfg)
    matches = bank.search(QUERY, exclude_task_id="acme/next", threshold=-1.0)
    shown, _ = gk.screen(matches)
    result = outcome("acme/next", run_id=run_id) if success else outcome(
        "acme/next", run_id=run_id, compiles=False, runs=False)
    bank.apply(gk.evaluate(shown, [], result, matches), EventLog(directory / "e.jsonl"))
    status = bank.stats([matches[0].item_id])[matches[0].item_id].status
    bank.close()
    return [s.item_id for s in shown], status


@pytest.mark.parametrize(("success", "after"), [(True, "active"), (False, "blocked")])
def test_a_blocked_item_is_shown_again_after_probation_runs_and_its_validation_decides(
        tmp_path: Path, success: bool, after: str) -> None:
    cfg = config(gatekeeper__probation_runs=2)
    bank = open_bank(tmp_path, cfg=cfg)
    (item_id,) = bank.add_record(record("rec-1", "acme/acme_parse", [LESSON], query=QUERY)).added
    bank.close()
    block(tmp_path, item_id, cfg)
    # Two runs in its scope while blocked: not shown, but counted.
    assert one_run(tmp_path, cfg, "r1", True) == ([], "blocked")
    assert one_run(tmp_path, cfg, "r2", True) == ([], "blocked")
    # The third run shows it once more; that run's validation decides.
    assert one_run(tmp_path, cfg, "r3", success) == ([item_id], after)
    if not success:  # blocked again: the count starts over from that validation
        assert one_run(tmp_path, cfg, "r4", True) == ([], "blocked")


def test_unblock_puts_an_item_on_probation_from_the_cli(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    cfg = config()
    bank = open_bank(tmp_path, cfg=cfg)
    (item_id,) = bank.add_record(record("rec-1", "acme/acme_parse", [LESSON], query=QUERY)).added
    bank.close()
    config_file = tmp_path / "memory.yaml"
    config_file.write_text(f"embedding:\n  model: {cfg.embedding.model}\n")
    argv = ["memory", "unblock", item_id, "--dir", str(tmp_path), "--config", str(config_file)]
    assert main(argv) == 2  # an active item: nothing to unblock, said in one line
    assert "not blocked" in capsys.readouterr().err
    block(tmp_path, item_id, cfg)
    assert main(argv) == 0
    assert "probation" in capsys.readouterr().err
    assert one_run(tmp_path, cfg, "r1", False) == ([item_id], "blocked")  # failed on probation


def match(item_id: str, hits: int, uses: int, score: float) -> Match:
    return Match(item_id, "rec", "t/f", "title", "desc", "content", score, "active", 1, 0.6, 1.0, 0.0,
                 True, "query", hits, uses)


def test_use_rate_ranks_equally_trusted_items() -> None:
    gk = Gatekeeper(config(retrieval__top_k=2))
    shown, _ = gk.screen([match("MEM-seldom", 10, 1, 0.9), match("MEM-applied", 10, 8, 0.7)])
    assert [s.item_id for s in shown] == ["MEM-applied", "MEM-seldom"]
    assert match("x", 0, 0, 0.5).use_rate == 0.0 and match("x", 4, 3, 0.5).use_rate == 0.75


def test_candidates_carry_tags_from_the_measured_outcome() -> None:
    cfg = config()
    assert outcome_tags(outcome(compiles=False, runs=False, fix_rounds=5,
                                termination_reason="gave up after 5 fix rounds"), cfg) == [
        "result:fail", "stage:compile", "repaired", "end:gave-up-after-5-fix-rounds"]
    assert outcome_tags(outcome(crashed=True, fix_rounds=0), cfg)[:3] == [
        "result:pass", "stage:coverage", "crash:harness"]
    gk = Gatekeeper(cfg)
    done = outcome("acme/next")
    decision = gk.admit(gk.evaluate([], [], done, []), done, [LESSON], query=QUERY, trajectory="t",
                        task_type="fuzz-c")
    assert decision.candidate is not None and decision.candidate.tags[0] == "result:pass"
