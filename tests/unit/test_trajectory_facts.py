"""The experience prompts' facts travel as data: rewording a line changes no lesson.

An extraction prompt shows a trajectory's steps as tagged lines and, beside them, as a
``# facts: trajectory v1`` block; the local-memory extraction prompt shows its measurement as
lines and as a ``# facts: measurement v1`` block; the rendered local memory shows its failed
directions as lines and as a ``# facts: directions v1`` block (the offline tabu list). The offline
readers take the blocks with the models that rendered them: lines written any other way give the
same lessons, and a block that does not fit its model is an error naming its kind.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agent_graph.context import Context
from agent_graph.memory.local_memory import extraction_variables
from agent_graph.memory.local_memory_render import render_local_memory
from agent_graph.routing import Limits, route
from agents.offline.experience import distil
from agents.offline.lesson_extract import actionable_items
from agents.offline.local_memory import extract, tabu_names
from agents.offline.prompt_reader import read_prompt
from fuzzkit.facts_block import FactsBlockError
from long_term_memory.experience.extraction import build_extraction_prompt
from long_term_memory.experience.trajectory import trajectory_from_state
from long_term_memory.experience.trajectory_steps import (
    AnalysisStep,
    BuildStep,
    DirectionStep,
    FixStep,
    HarnessStep,
    RepairStep,
    RevertStep,
    RunStep,
    Step,
    StopStep,
    read_trajectory,
)
from nodes.memory_manager import revert_failed
from prompts import render
from tests.trajectories import (
    analysis,
    build,
    crash,
    direction,
    dropped,
    fix,
    harness,
    repair,
    reverted,
    run,
    stop,
    trajectory,
    verdict,
)
from tests.unit.test_avoid_call_lessons import BY, first_draft
from tests.unit.test_block_drop import _state
from tests.unit.test_experience_support import config

STEPS: list[Step] = [
    analysis("stateless_parser"),
    harness(1, "prototyper", "vv_check"),
    build(1, "error: must use 'struct' tag to refer to type 'vv_doc'"),
    harness(2, "enhancer.fix", "add the struct tag to vv_doc at line 3 (it is struct vv_doc)"),
    build(2),
    run(2, hits=300, lines=10.0),
    harness(3, "enhancer.improve", "call vv_render on the input", "call vv_count on the doc",
            added=("vv_render", "vv_count")),
    build(3),
    run(3, lines=14.0, crashed=True),
    crash("heap-buffer-overflow", "vv_render"),
    verdict(),
    dropped(3, "call vv_render on the input", 4),
    run(4, lines=9.0, crashed=True),
    crash("leak", "vv_count", allocated_in="vv_store"),
    verdict(),
    reverted(4),
    fix("add the struct tag to vv_doc", worked=True),
    direction("Success", "call vv_scan on the input", "line coverage 10.00% -> 12.00%"),
    direction("Failed", "call vv_probe on the input", "did not compile after fix rounds"),
    repair(5, "vv_dup", "vv_free", type="struct vv_doc *"),
    stop("iteration budget 3 used"),
]


def reworded(text: str) -> str:
    """Every ``- [tag] ...`` line and the Outcome line said another way; the facts block kept."""
    lines, sep, block = text.partition("\n\n```yaml")
    said = [f"* {line.split('] ', 1)[-1][::-1]} <{line[3:line.index(']')].upper()}>" if line.startswith("- [")
            else line for line in lines.splitlines()]
    return "\n".join(said) + sep + block


def lessons(success: bool, reword: bool, steps: list[Step] = STEPS) -> list[dict[str, Any]]:
    t = trajectory(BY["vv_check"], steps, first_draft("vv_check"), success, "stateless_parser",
                   lines_percent=12.0)
    template, variables = build_extraction_prompt("success" if success else "failure", [t])
    if reword:
        variables["trajectory"] = reworded(variables["trajectory"])
        variables["outcome"] = "measured: " + variables["outcome"][::-1]
    return distil(read_prompt(*render(template, variables)))[0]["memory_items"]


@pytest.mark.parametrize("success", [True, False])
@pytest.mark.parametrize(("kept", "action"), [
    (STEPS, "release_out_param(type=vv_doc, releaser=vv_free)"),
    ([s for s in STEPS if not isinstance(s, RepairStep | FixStep)
      and not (isinstance(s, HarnessStep) and s.by == "enhancer.fix")],
     "avoid_call(vv_store)"),
    ([s for s in STEPS if isinstance(s, AnalysisStep | BuildStep | RunStep | DirectionStep | StopStep)], ""),
])
def test_rewording_the_step_lines_changes_no_extracted_lesson(success: bool, kept: list[Step],
                                                              action: str) -> None:
    items = lessons(success, False, kept)
    assert action in {i.get("action", "") for i in items}, items
    assert lessons(success, True, kept) == items


def test_the_lessons_come_from_the_block_not_the_lines() -> None:
    t = trajectory(BY["vv_check"], STEPS, first_draft("vv_check"), False, "stateless_parser")
    template, variables = build_extraction_prompt("failure", [t])
    lines = variables["trajectory"].partition("\n\n```yaml")[0]
    without_block = distil(read_prompt(*render(template, {**variables, "trajectory": lines})))[0]
    assert not any(i.get("action") for i in without_block["memory_items"])
    assert any(i.get("action") for i in lessons(False, reword=False))


def test_the_contrastive_prompt_carries_one_block_per_trajectory_and_rewording_changes_nothing() -> None:
    win = trajectory(BY["vv_check"], STEPS[:6], first_draft("vv_check"), True, "stateless_parser",
                     lines_percent=10.0)
    loss = trajectory(BY["vv_check"], STEPS[:3], "", False, "stateless_parser", compiles=False)
    template, variables = build_extraction_prompt("contrastive", [win, loss])
    assert variables["trajectories"].count("# facts: trajectory v1") == 2
    items = distil(read_prompt(*render(template, variables)))[0]["memory_items"]
    assert [i["title"] for i in items] == ["Consistent pattern behind vv_check successes",
                                           "Shared cause of vv_check failures"]
    said = re.sub(r"^- \[(\w+)\] (.*)$", lambda m: f"* {m.group(2)[::-1]}", variables["trajectories"],
                  flags=re.M)
    said = re.sub(r"^Outcome: .*$", "Outcome: (reworded)", said, flags=re.M)
    assert said.count("* ") >= 9
    again = distil(read_prompt(*render(template, {**variables, "trajectories": said})))[0]
    assert again["memory_items"] == items


def test_a_trajectory_block_that_does_not_fit_its_model_is_an_error_naming_it() -> None:
    t = trajectory(BY["vv_check"], STEPS, "", False)
    template, variables = build_extraction_prompt("failure", [t])
    bad = variables["trajectory"].replace("{step: build,", "{step: built,", 1)
    assert bad != variables["trajectory"]
    with pytest.raises(FactsBlockError, match="trajectory facts block does not fit TrajectoryFacts"):
        distil(read_prompt(*render(template, {**variables, "trajectory": bad})))
    unknown = variables["trajectory"].replace("ok: true}", "ok: true, colour: red}", 1)
    assert unknown != variables["trajectory"]
    with pytest.raises(FactsBlockError, match="trajectory"):
        read_trajectory(unknown)


def measurement_prompt(**changes: Any) -> dict[str, str]:
    return extraction_variables(
        {"attempted_directions": [{"direction": "call qq_b on the doc", "outcome": "Failed",
                                   "source_ref": "v2", "evidence": "line coverage 9.00% -> 8.00%"}]},
        target="int qq_parse(const char *text)", archetype="stateless_parser",
        old_code="int f(void) {\n  qq_parse(t);\n}\n",
        new_code="int f(void) {\n  qq_parse(t);\n  qq_b(d);\n}\n",
        old_coverage=10.0, new_coverage=12.5, noise=1.0, change=["call qq_b on the doc"], operator="improve",
        source_ref="v5", parent_ref="v4", iteration=3, **changes)


def test_rewording_the_measurement_lines_changes_nothing_the_local_memory_extractor_does() -> None:
    variables = measurement_prompt()
    assert "# facts: measurement v1" in variables["metrics"]
    reply = extract(read_prompt(*render("local_memory_extraction", variables)))[0]
    assert reply["updated_directions"][0]["outcome"] == "Success"
    assert reply["new_memory_item"]["description"] == \
        "Raised line coverage from 10.00% to 12.50% (v5, parent v4)."
    assert reply["new_memory_item"]["evidence"]["context"] == "the target is a stateless_parser"
    said = {
        "problem": "A target (of a kind).",
        "metrics": "- coverage went up\n\n```yaml" + variables["metrics"].partition("```yaml")[2],
        "change": "Something changed.",
    }
    assert extract(read_prompt(*render("local_memory_extraction", {**variables, **said})))[0] == reply


def test_a_measurement_block_that_does_not_fit_its_model_is_an_error_naming_it() -> None:
    variables = measurement_prompt()
    bad = variables["metrics"].replace("outcome: Success", "outcome: Great")
    with pytest.raises(FactsBlockError, match="measurement facts block does not fit MeasurementFacts"):
        extract(read_prompt(*render("local_memory_extraction", {**variables, "metrics": bad})))


def test_the_builder_writes_the_flags_the_extractor_reads(tmp_path: Path) -> None:
    """Whether the repairs of a harness crash gave up, a revert was for a harness that did not run
    cleanly, and a failed direction was a block dropped for misuse: said as fields by the builder."""
    events = [{"type": "iteration.reverted", "data": {"version": 3, "reason": "did not run cleanly"}},
              {"type": "iteration.reverted", "data": {"version": 4, "reason": "did not compile"}},
              {"type": "guard.fired", "data": {"guard": "fix_rounds", "reason": "finalize: crash caused by "
                                               "the harness; gave up after 2 fix rounds"}}]
    state = {"project": "vv", "function": "vv_check", "work_dir": str(tmp_path),
             "termination_reason": "coverage plateau",
             "local_memory": {"attempted_directions": [
                 {"direction": "call vv_render", "outcome": "Failed",
                  "evidence": "crashed the harness (harness misuse)"},
                 {"direction": "call vv_probe", "outcome": "Failed", "evidence": "did not run cleanly"}]}}
    steps = trajectory_from_state(state, config(), "r", events=events).steps
    assert [s.run_failed for s in steps if isinstance(s, RevertStep)] == [True, False]
    assert [(s.fired, s.gave_up) for s in steps if isinstance(s, StopStep)] == [(True, True), (False, False)]
    assert [s.misuse_crash for s in steps if isinstance(s, DirectionStep)] == [True, False]
    assert json.dumps([s.model_dump() for s in steps])  # data all through


def test_the_gave_up_flag_follows_the_reason_the_router_writes(tmp_path: Path) -> None:
    """The router's own words for giving up on a harness crash set the flag (a reworded reason
    there fails here, not silently in the lessons)."""
    crashed = {"analysis": {"archetype": "x"}, "harness_code": "int f;", "harness_version": 1,
               "build": {"version": 1, "ok": True}, "run": {"version": 1, "crashed": True},
               "crash_analysis": {"version": 1, "feasible": False}, "fix_rounds": 5,
               "extras": {"finalized": True}}
    reason = route(crashed, Limits()).reason  # type: ignore[arg-type]
    state = {"project": "vv", "function": "vv_check", "work_dir": str(tmp_path), "termination_reason": reason}
    steps = trajectory_from_state(state, config(), "r", events=[]).steps
    assert [s.gave_up for s in steps if isinstance(s, StopStep)] == [True]
    ran = {**crashed, "run": {"version": 1, "usable": True}, "local_memory": {"recorded_version": 1}}
    budget = {**state, "termination_reason": route(ran, Limits(max_iterations=0)).reason}  # type: ignore[arg-type]
    assert budget["termination_reason"].startswith("iteration budget")
    assert [s.gave_up for s in trajectory_from_state(budget, config(), "r", events=[]).steps
            if isinstance(s, StopStep)] == [False]


def test_the_misuse_drop_flag_follows_the_memory_managers_own_evidence(tmp_path: Path) -> None:
    """A block dropped by the memory manager: its failed direction is marked a misuse drop, and
    the extractor leaves its call out (a reworded evidence there fails here)."""
    before = _state(tmp_path, 11)
    update = revert_failed(before, Context())  # type: ignore[arg-type]
    done = {**before, **update, "termination_reason": "iteration budget 1 used"}
    steps = trajectory_from_state(done, config(), "r").steps
    assert [(s.direction, s.misuse_crash) for s in steps if isinstance(s, DirectionStep)] == [
        ("call ed_copy_content on result", True)]
    actions = [i["action"] for i in actionable_items("int ed_x(void);", steps, "")]
    assert "avoid_call(ed_copy_content)" in actions


def test_the_tabu_list_comes_from_the_directions_block_and_rewording_its_lines_changes_nothing() -> None:
    memory = {"attempted_directions": [
        {"direction": "call ed_dump on result (ed_doc)", "outcome": "Failed", "source_ref": "v2",
         "evidence": "crashed the harness (harness misuse)"},
        {"direction": "call ed_copy_content on result", "outcome": "Failed", "source_ref": "v3",
         "evidence": "x"},
        {"direction": "call ed_free twice", "outcome": "Success", "source_ref": "v4", "evidence": "y"}]}
    names = ["ed_read", "ed_dump", "ed_copy_content", "ed_free"]
    text = "## Attempted directions\n" + render_local_memory(memory, ["ed_copy_content works now"])
    assert tabu_names(read_prompt("ROLE: enhancer", text), names) == ["ed_dump"]
    said = re.sub(r"^- \[(\w+)\] (.*)$", lambda m: f"* {m.group(1).upper()}: {m.group(2)[::-1]}", text,
                  flags=re.M)
    assert said != text and tabu_names(read_prompt("ROLE: enhancer", said), names) == ["ed_dump"]
    bad = text.replace("failed: [", "fail: [")
    with pytest.raises(FactsBlockError, match="directions facts block does not fit DirectionsFacts"):
        tabu_names(read_prompt("ROLE: enhancer", bad), names)
