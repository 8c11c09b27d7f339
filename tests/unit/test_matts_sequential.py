"""Sequential MaTTS (self-refinement): round plans, the refinement seed and section, the prompts
that carry it (read back by the offline model), the self-contrast extraction and the one
Gatekeeper decision per trajectory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agents.enhancer import Enhancer
from agents.offline.experience import distil
from agents.offline.local_memory import tabu_names
from agents.offline.prompt_reader import read_prompt
from agents.offline.roles import enhance
from agents.prototyper import Prototyper
from long_term_memory.experience import (
    ExperienceConfig,
    ExperienceConfigError,
    Gatekeeper,
    attempt_specs,
    outcome_from_state,
    trajectory_from_state,
)
from long_term_memory.experience.matts import (
    REFINEMENT_KEY,
    matts_record,
    refinement_extraction_prompt,
    refinement_section,
    refinement_seed,
    round_specs,
    start_harness,
)
from nodes.experience import _trajectory_decision
from prompts import render
from tests.unit.test_experience_support import config
from tests.unit.test_local_memory_offline import API, BASE, PRINTING, TARGET

BROKEN = BASE.replace("cJSON_Delete(json);", "cJSON_Delete(json, 1);")


def finished(lines: float, best_code: str = "", best_version: int = 0, **extra: Any) -> dict[str, Any]:
    """A finished round's final state, as the graph leaves it."""
    run = {"usable": bool(best_code),
           "coverage": {"lines": {"percent": lines}, "branches": {"percent": lines / 2}}}
    state: dict[str, Any] = {
        "project": "cjson", "function": "cJSON_ParseWithLength", "target": TARGET.to_dict(),
        "api": [d.to_dict() for d in API], "headers": ["cJSON.h"],
        "counters": {"fix_rounds_total": 1, "iterations": 1, "harness_versions": 3},
        "usage": {"enhancer": {"calls": 3}}, "termination_reason": "iteration budget 1 used",
        "harness_code": BROKEN, "harness_version": 3,
    }
    if best_code:
        state["best"] = {"version": best_version, "code": best_code, "run": run,
                         "build": {"ok": True}, "lines_percent": lines}
    state.update(extra)
    return state


def outcomes_of(states: list[dict[str, Any]]) -> list[Any]:
    return [outcome_from_state(s, "run-1", attempt=i) for i, s in enumerate(states)]


def test_sequential_plan_is_one_trajectory_of_one_plus_k_rounds() -> None:
    specs = attempt_specs(config(matts__enabled=True, matts__mode="sequential", matts__refine_rounds=3,
                                 matts__max_tokens=2048))
    assert len(specs) == 1 and specs[0].refine_rounds == 3
    rounds = round_specs(specs[0])
    assert [r.attempt for r in rounds] == [0, 1, 2, 3]
    assert {(r.temperature, r.max_tokens, r.refine_rounds) for r in rounds} == {(None, 2048, 0)}


@pytest.mark.parametrize(("matts", "message"), [
    ({"mode": "sequential", "refine_rounds": 0}, "matts.refine_rounds = 0"),
    ({"mode": "sequential", "refine_rounds": 11}, "matts.refine_rounds = 11"),
    ({"mode": "serial"}, "matts.mode = 'serial'"),
])
def test_bad_sequential_settings_are_clear_config_errors(matts: dict[str, Any], message: str) -> None:
    with pytest.raises(ExperienceConfigError, match="invalid experience config") as err:
        ExperienceConfig.from_mapping({"matts": {"enabled": True, **matts}}, "memory.yaml")
    assert message in str(err.value) and "memory.yaml" in str(err.value)


def test_seed_starts_from_the_previous_best_harness_and_summarizes_the_measurements() -> None:
    round0 = finished(42.5, PRINTING, 2, crash={"kind": "heap-buffer-overflow", "summary": "in cJSON_Print"},
                      local_memory={"attempted_directions": [
                          {"direction": "call cJSON_Print on the parsed tree", "outcome": "Success",
                           "source_ref": "v2", "evidence": "30% -> 42.5%"},
                          {"direction": "call cJSON_Minify on a copy", "outcome": "Noise",
                           "source_ref": "v3", "evidence": "42.5% -> 42.6%"}]})
    seed = refinement_seed([round0], outcomes_of([round0]), rounds=2)
    assert seed["harness_code"] == PRINTING and seed["harness_version"] == 1
    assert seed["counters"] == {"harness_versions": 1}
    info = seed["extras"][REFINEMENT_KEY]
    assert (info["round"], info["rounds"], info["start"]) == (1, 2, {"round": 0, "version": 2, "ran": True})
    section = info["section"]
    assert section.startswith("## Self-refinement (round 1)\n"
                              "Previous attempt: round 0: compiles: yes; runs: yes")
    for fact in ("line coverage: 42.5%", "fix rounds: 1", "crash heap-buffer-overflow: in cJSON_Print",
                 "best harness v2", "stopped: iteration budget 1 used",
                 "starts from the best harness of round 0 (its v2)", "re-examine your previous attempt"):
        assert fact in section, fact
    # The direction that made the best harness keeps its label; the one after it gained nothing.
    assert "- [Success] call cJSON_Print on the parsed tree (round 0: 30% -> 42.5%)" in section
    assert ("- [Failed] call cJSON_Minify on a copy (round 0: Noise, no gain over the round's best v2; "
            "42.5% -> 42.6%)") in section
    assert refinement_section({"extras": seed["extras"]}) == section
    assert refinement_section({}) == "" and refinement_section({"extras": {"finalized": True}}) == ""


def test_later_rounds_see_every_earlier_round_and_fall_back_to_the_latest_best() -> None:
    round0 = finished(40.0, PRINTING, 2)
    round1 = finished(0.0)  # its seeded harness broke, nothing ran: round 0's best is still the start
    seed = refinement_seed([round0, round1], outcomes_of([round0, round1]), rounds=3)
    assert seed["harness_code"] == PRINTING and seed["extras"][REFINEMENT_KEY]["round"] == 2
    section = seed["extras"][REFINEMENT_KEY]["section"]
    assert "Previous attempt: round 1: compiles: no; runs: no" in section
    assert "Earlier rounds:\n- round 0: compiles: yes; runs: yes" in section
    assert start_harness([finished(0.0)]) == (BROKEN, 0, 3, False)
    nothing = finished(0.0)
    del nothing["harness_code"]
    seed = refinement_seed([nothing], outcomes_of([nothing]), rounds=1)
    assert "harness_code" not in seed and "write a new one" in seed["extras"][REFINEMENT_KEY]["section"]
    with pytest.raises(ValueError, match="finished rounds"):
        refinement_seed([], [], rounds=1)


def _with_seed(state: dict[str, Any], seed: dict[str, Any]) -> dict[str, Any]:
    return {**state, "extras": seed["extras"], "harness_code": seed["harness_code"]}


def test_code_writing_prompts_carry_the_section_and_the_offline_model_reads_it() -> None:
    round0 = finished(40.0, BASE, 1, local_memory={"attempted_directions": [
        {"direction": "call cJSON_Print on the parsed tree", "outcome": "Noise", "source_ref": "v2",
         "evidence": "40% -> 40.3%"}]})
    seed = refinement_seed([round0], outcomes_of([round0]), rounds=1)
    plain = {**finished(40.0), "harness_code": BASE, "analysis": {"archetype": "stateless_parser"},
             "session_memory": {},
             "run": {"coverage": {"lines": {"covered": 4, "count": 10, "percent": 40.0}}}}
    state = _with_seed(plain, seed)
    uncovered = "- char * cJSON_Print(const cJSON * item)\n- void cJSON_Minify(char * json)"
    prompts = {
        "prototyper": render("prototyper", Prototyper.variables(state, (), "stateless_parser", "d", "s",
                                                                "p")),
        "fix": render("enhancer_fix", Enhancer.fix_variables(state, (), "crash", "", "", "", "(none)")),
        "improve": render("enhancer_improve", Enhancer.improve_variables(state, (), uncovered, "(none yet)")),
    }
    for name, (_system, user) in prompts.items():
        assert user.count("## Self-refinement (round 1)") == 1, name
        assert user.index("## Self-refinement") < user.index("## Task"), name
        facts = read_prompt(*prompts[name])
        assert "Self-refinement (round 1)" in facts.sections and facts.text("Task"), name
    improve = read_prompt(*prompts["improve"])
    assert improve.code("Current harness").strip() == BASE.strip()
    assert tabu_names(improve, [d.name for d in API]) == ["cJSON_Print"]
    # The offline enhancer keeps the previous best and extends it, away from the failed direction.
    _payload, code = enhance(improve)
    assert code and "cJSON_Minify" in code and "cJSON_Print(" not in code
    assert "cJSON_ParseWithLength((const char *)data, size)" in code
    _payload, unrefined = enhance(read_prompt(*render("enhancer_improve", Enhancer.improve_variables(
        plain, (), uncovered, "(none yet)"))))
    assert unrefined and "cJSON_Print(" in unrefined
    # Without a refinement round nothing is added to any prompt.
    assert "Self-refinement" not in render("prototyper", Prototyper.variables(
        plain, (), "stateless_parser", "d", "s", "p"))[1]


def _trajectories(tmp_path: Path) -> list[Any]:
    states = [finished(30.0, BASE, 1), finished(45.0, PRINTING, 2)]
    cfg = config()
    out = []
    for i, s in enumerate(states):
        s["work_dir"] = str(tmp_path / f"attempt-{i}")
        out.append(trajectory_from_state(s, cfg, run_id="run-1", attempt=i))
    return out


def test_self_contrast_prompt_names_the_rounds_and_the_offline_extractor_still_reads_it(
        tmp_path: Path) -> None:
    trajectories = _trajectories(tmp_path)
    template, variables = refinement_extraction_prompt(trajectories)
    assert template == "experience_contrastive"
    assert variables["summary"].startswith("2 successive self-refinement rounds of one trajectory")
    assert variables["summary"].endswith("2 succeeded, 0 failed")
    text = variables["trajectories"]
    assert "### Trajectory 1: SUCCESS\nRound 0: the first attempt\n" in text
    assert "### Trajectory 2: SUCCESS\nRound 1: refinement round 1\n" in text
    payload, _ = distil(read_prompt(*render(template, variables)))
    items = payload["memory_items"]
    assert items and "45.0% line coverage" in items[0]["content"]
    with pytest.raises(ValueError, match="at least two rounds"):
        refinement_extraction_prompt(trajectories[:1])


def test_one_gatekeeper_decision_for_all_rounds(tmp_path: Path) -> None:
    def match(item_id: str) -> dict[str, Any]:
        return {"item_id": item_id, "memory_id": "m", "task_id": "kv/kv_get", "title": "t",
                "description": "d", "content": "c", "score": 0.8, "status": "active",
                "validation_level": 0, "trust": 0.5, "freshness": 1.0, "consecutive_fail": 0.0,
                "is_success": True, "query": "q"}

    def shown(item_id: str) -> dict[str, Any]:
        return {k: v for k, v in match(item_id).items()
                if k not in ("task_id", "status", "freshness", "consecutive_fail")}

    states = []
    for i, (ids, used) in enumerate([(["MEM-a"], []), (["MEM-a", "MEM-b"], ["MEM-b"])]):
        s = finished(30.0 + i, BASE, 1, run_dir=str(tmp_path))
        s["extras"] = {"experience": {"shown": [shown(x) for x in ids], "matches": [match(x) for x in ids],
                                      "used": used}}
        states.append(s)
    decision, outcome = _trajectory_decision(states, Gatekeeper(config()), best=1)
    assert outcome.attempt == 1 and outcome.lines_percent == 31.0
    assert [(h.item_id, h.used) for h in decision.hit_refs] == [("MEM-a", False), ("MEM-b", True)]
    assert [v.item_id for v in decision.validations] == ["MEM-b"]


def test_result_record_entry() -> None:
    outs = outcomes_of([finished(30.0, BASE, 1), finished(45.0, PRINTING, 2)])
    assert matts_record("sequential", outs, 1) == {
        "mode": "sequential", "rounds": 2, "best": 1, "lines": [30.0, 45.0], "model_calls": [3, 3]}
    assert matts_record("parallel", outs, 0)["attempts"] == 2
