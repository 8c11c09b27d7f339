"""From a finished target's state to lessons: trajectory, prompts, the offline skill, parsing.

The state and ``events.jsonl`` below have the shapes the graph's nodes write (see nodes/*):
a prototype that failed to build, a fix that made it build, a run, an improvement that raised
coverage. The offline model reads the rendered prompt exactly as a real model would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agents.offline.experience import ROLES, distil
from agents.offline.prompt_reader import read_prompt
from fuzzkit.api import FunctionDecl
from long_term_memory.experience import (
    ExtractionLabelError,
    Gatekeeper,
    build_extraction_prompt,
    extraction_kind,
    outcome_from_state,
    parse_memory_items,
    target_query,
    trajectory_from_state,
)
from long_term_memory.experience.trajectory import harness_runs
from long_term_memory.experience.trajectory_steps import BuildStep, read_trajectory, step_line
from prompts import placeholders, render
from tests.unit.test_experience_support import config

HARNESS = """#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\\0';
  kv_t *kv = kv_parse(text);
  if (kv) { (void)kv_count(kv); (void)kv_get(kv, "a"); }
  kv_free(kv);
  free(text);
  return 0;
}
"""


def event(kind: str, /, **data: Any) -> str:
    return json.dumps({"v": 1, "type": kind, "ts": "2026-11-21T00:00:00Z", "data": data})


def finished_state(work: Path, success: bool = True) -> dict[str, Any]:
    (work / "v1").mkdir(parents=True)
    (work / "v1" / "build.log").write_text(
        "harness.c:11:30: error: too many arguments to function call, expected 1, have 2\n"
        "kv.h:6:7: note: 'kv_parse' declared here\n1 error generated.\n")
    lines = [event("harness.written", version=1, by="prototyper", calls=["kv_parse", "kv_free"]),
             event("build.done", version=1, ok=False, seconds=0.2),
             event("harness.written", version=2, by="enhancer.fix", fixes=["call kv_parse with one argument"],
                   unresolved=[])]
    if success:
        lines += [event("build.done", version=2, ok=True, seconds=0.3),
                  event("execution.done", version=2, crashed=False, target_hits=812,
                        lines={"covered": 30, "count": 50, "percent": 60.0}, exec_per_sec=9000),
                  event("harness.written", version=3, by="enhancer.improve",
                        directions=["query the parsed list"]),
                  event("build.done", version=3, ok=True, seconds=0.3),
                  event("execution.done", version=3, crashed=False, target_hits=900,
                        lines={"covered": 40, "count": 50, "percent": 80.0}, exec_per_sec=8000),
                  event("iteration.measured", iteration=1, outcome="Success", delta=20.0, lines=80.0)]
    else:
        (work / "v2").mkdir()
        (work / "v2" / "build.log").write_text(
            "harness.c:9:3: error: use of undeclared identifier 'memcpy'\n1 error generated.\n")
        lines += [event("build.done", version=2, ok=False, seconds=0.2),
                  event("guard.fired", guard="fix_rounds", reason="5 fix rounds without a build")]
    (work / "events.jsonl").write_text("\n".join(lines) + "\n")
    build = {"version": 3 if success else 2, "ok": success}
    run = {"version": 3, "usable": True, "coverage": {"lines": {"percent": 80.0},
                                                      "branches": {"percent": 55.0}}} if success else {}
    return {
        "project": "kv", "function": "kv_parse", "work_dir": str(work),
        "target": {"name": "kv_parse", "return_type": "kv_t *",
                   "params": [{"name": "text", "type": "const char *"}], "header": "kv.h"},
        "analysis": {"archetype": "stateless_parser", "confidence": "HIGH",
                     "constraints": ["text must be NUL-terminated"], "related_functions": ["kv_free"]},
        "build": build, "run": run, "best": {"version": 3, "code": HARNESS, "build": build, "run": run}
        if success else {},
        "harness_code": HARNESS,
        "counters": {"fix_rounds_total": 1 if success else 5, "iterations": 1 if success else 0,
                     "harness_versions": 3 if success else 6},
        "usage": {"prototyper": {"calls": 1}, "enhancer": {"calls": 2 if success else 5}},
        "session_memory": {"known_fixes": [
            {"content": "call kv_parse with one argument", "success": success},
        ]},
        "local_memory": {"attempted_directions": [
            {"direction": "query the parsed list", "outcome": "Success",
             "evidence": "line coverage 60.00% -> 80.00%"}]} if success else {},
        "termination_reason": "coverage plateau" if success else "fix rounds exhausted",
    }


def test_outcome_and_query_from_state(tmp_path: Path) -> None:
    state = finished_state(tmp_path)
    out = outcome_from_state(state, "run-7")
    assert (out.task_id, out.compiles, out.runs, out.lines_percent, out.branches_percent) == \
        ("kv/kv_parse", True, True, 80.0, 55.0)
    assert (out.fix_rounds, out.model_calls, out.iterations, out.harness_versions) == (1, 3, 1, 3)
    assert not out.crashed and out.run_id == "run-7"
    query = target_query(state)
    proto = FunctionDecl.from_dict(state["target"]).prototype().rstrip(";")
    assert query.startswith(f"project kv; target {proto}; archetype stateless_parser")
    assert "constraints: text must be NUL-terminated" in query
    crashed = {**state, "crash": {"kind": "heap-buffer-overflow"}, "run": {"crashed": True},
               "crash_analysis": {"feasible": True}}
    assert outcome_from_state(crashed, "r").crashed_real
    misuse = {**crashed, "crash_analysis": {"feasible": False}}
    assert not outcome_from_state(misuse, "r").crashed_real


def test_a_harness_that_found_a_library_bug_runs() -> None:
    """Ran, reached the target, crashed where triage says the library is at fault: it runs."""
    found = {"run": {"version": 1, "crashed": True, "usable": False, "target_hits": 58},
             "crash": {"kind": "oom"}, "crash_analysis": {"version": 1, "feasible": True}}
    assert harness_runs(found) and outcome_from_state(found, "r").runs
    assert not harness_runs({**found, "crash_analysis": {"version": 1, "feasible": False}})  # misuse
    assert not harness_runs({**found, "crash_analysis": {"version": 2, "feasible": True}})  # not this run's
    assert not harness_runs({**found, "run": {**found["run"], "target_hits": 0}})  # target never reached
    # A sample file of the library's that crashed inside the target: reached, though the fuzzer never did.
    seeded = {**found, "run": {**found["run"], "target_hits": 0, "seed_target_hits": 1}}
    assert harness_runs(seeded)


def test_trajectory_reads_events_build_logs_and_memory(tmp_path: Path) -> None:
    t = trajectory_from_state(finished_state(tmp_path), config(), "run-7")
    assert t.is_success and t.harness == HARNESS
    steps = [step_line(s).removeprefix("- ") for s in t.steps]
    assert "[harness] v1 by prototyper: kv_parse, kv_free" in steps
    assert any(s.startswith("[build] v1 failed: error: too many arguments to function call") for s in steps)
    assert "[run] v3 ran, target hit 900x; line coverage 80.0%" in steps
    assert "[fix] call kv_parse with one argument (worked)" in steps
    assert "[direction] Success: query the parsed list (line coverage 60.00% -> 80.00%)" in steps
    assert steps[-1] == "[stop] coverage plateau"


def rendered(kind: str, trajectories: list) -> tuple[str, str, str]:
    template, variables = build_extraction_prompt(kind, trajectories)
    assert set(variables) == placeholders(template)
    system, user = render(template, variables)
    return template, system, user


def test_success_prompt_and_offline_lessons(tmp_path: Path) -> None:
    t = trajectory_from_state(finished_state(tmp_path), config(), "run-7")
    assert extraction_kind([t]) == "success"
    template, system, user = rendered("success", [t])
    assert template == "experience_success" and "ROLE: experience_success" in system
    assert "SUCCESS: compiles: yes; runs: yes" in user and "kv_count(kv)" in user
    facts = read_prompt(system, user)
    assert facts.role in ROLES
    payload, code = distil(facts)
    assert code is None
    items = payload["memory_items"]
    assert 1 <= len(items) <= 3
    first = items[0]
    assert "stateless_parser" in first["title"] and "kv_parse" in first["title"]
    assert "kv_parse, kv_count, kv_get, kv_free" in first["content"] and "80.0% line" in first["content"]
    assert "NUL-terminated heap buffer" in first["content"]
    assert any("call kv_parse with one argument" in i["content"] and "too many arguments" in i["content"]
               for i in items)
    assert any("query the parsed list" in i["content"] for i in items)


def test_failure_prompt_and_offline_lessons(tmp_path: Path) -> None:
    t = trajectory_from_state(finished_state(tmp_path, success=False), config(), "run-7")
    assert not t.is_success and extraction_kind([t]) == "failure"
    template, system, user = rendered("failure", [t])
    assert template == "experience_failure" and "FAILURE: compiles: no" in user
    items = distil(read_prompt(system, user))[0]["memory_items"]
    lesson = items[0]
    assert lesson["title"].startswith("Build failure on kv_parse: error: use of undeclared identifier")
    assert "include <string.h> for memcpy" in lesson["content"]


def test_misuse_crash_and_unreached_target_become_lessons(tmp_path: Path) -> None:
    state = finished_state(tmp_path)
    with (tmp_path / "events.jsonl").open("a") as fh:
        fh.write(event("execution.done", version=4, crashed=False, target_hits=0,
                       lines={"percent": 2.0}) + "\n")
        fh.write(event("crash.triaged", kind="heap-use-after-free", location="harness") + "\n")
        fh.write(event("crash.verdict", feasible=False, verdict="harness_misuse") + "\n")
    state = {**state, "best": {}, "build": {"ok": True}, "run": {"usable": False}}
    t = trajectory_from_state(state, config(), "r")
    assert not t.is_success
    _, system, user = rendered("failure", [t])
    titles = [i["title"] for i in distil(read_prompt(system, user))[0]["memory_items"]]
    assert titles == ["Harness misuse crash with kv_parse", "kv_parse was never executed"]


def test_labels_cannot_be_swapped(tmp_path: Path) -> None:
    win = trajectory_from_state(finished_state(tmp_path / "a"), config(), "r")
    loss = trajectory_from_state(finished_state(tmp_path / "b", success=False), config(), "r")
    with pytest.raises(ExtractionLabelError, match="calls for 'success'"):
        build_extraction_prompt("failure", [win])
    with pytest.raises(ExtractionLabelError, match="calls for 'failure'"):
        build_extraction_prompt("success", [loss])
    with pytest.raises(ExtractionLabelError):
        build_extraction_prompt("success", [win, loss])
    with pytest.raises(ValueError):
        build_extraction_prompt("success", [])


def test_contrastive_prompt_and_offline_lessons(tmp_path: Path) -> None:
    win = trajectory_from_state(finished_state(tmp_path / "a"), config(), "r", attempt=0)
    loss = trajectory_from_state(finished_state(tmp_path / "b", success=False), config(), "r", attempt=1)
    template, system, user = rendered("contrastive", [win, loss])
    assert template == "experience_contrastive"
    assert "### Trajectory 1: SUCCESS" in user and "### Trajectory 2: FAILURE" in user
    assert "2 trajectories of the same target: 1 succeeded, 1 failed" in user
    items = distil(read_prompt(system, user))[0]["memory_items"]
    assert items[0]["title"] == "Consistent pattern behind kv_parse successes"
    assert "kv_count" in items[0]["content"] and "80.0% line coverage" in items[0]["content"]
    assert items[1]["title"] == "Shared cause of kv_parse failures"
    assert "undeclared identifier 'memcpy'" in items[1]["content"]


def test_offline_reply_parses_and_becomes_a_candidate(tmp_path: Path) -> None:
    from agents.offline.model import reply_text

    state = finished_state(tmp_path)
    t = trajectory_from_state(state, config(), "run-7")
    _, system, user = rendered("success", [t])
    reply = reply_text(*distil(read_prompt(system, user)))
    items = parse_memory_items(reply)
    gk = Gatekeeper(config())
    out = outcome_from_state(state, "run-7")
    decision = gk.admit(gk.evaluate([], [], out), out, items, query=t.query,
                        trajectory="\n".join(map(step_line, t.steps)), task_type="fuzz-c")
    assert decision.candidate is not None and decision.candidate.kind == "success"
    assert decision.confidence >= 0.9
    assert [i.title for i in decision.candidate.memory_items] == [i.title for i in items]


def test_long_trajectories_keep_beginning_and_end(tmp_path: Path) -> None:
    t = trajectory_from_state(finished_state(tmp_path), config(), "r")
    t.steps = [BuildStep(step="build", version=n, ok=False, errors=f"error: number {n}") for n in range(400)]
    _, variables = build_extraction_prompt("success", [t], max_chars=2000)
    text, _, block = variables["trajectory"].partition("\n\n```yaml")
    assert len(text) < 2100 and "number 0" in text and "number 399" in text and "steps omitted" in text
    # the block carries the steps the lines show, and how many were left out between them
    facts = read_trajectory(variables["trajectory"])
    shown = [step_line(s) for s in facts.steps]
    assert shown == [line for line in text.splitlines() if "steps omitted" not in line]
    assert facts.omitted == 400 - len(shown) > 0 and f"- [...] {facts.omitted} steps omitted" in text


def test_prototyper_prompt_experience_is_readable_by_the_offline_roles() -> None:
    from agents.offline.experience import applicable, shown_lessons
    from long_term_memory.experience import InjectItem, memories_used, render_experience

    shown = [InjectItem("MEM-3f2a9c01", "rec-1", "Compile fixes needed for kv_parse", "For kv_parse.",
                        "These fixes made the harness build: add #include <string.h> for memcpy.", 0.71, 1,
                        0.55, True, "project kv; target kv_t *kv_parse(const char *text)"),
             InjectItem("MEM-00c0ffee", "rec-2", "Initialise the z_stream", "zlib targets.",
                        "Call inflateInit before inflate.", 0.52, 0, 0.5, False, "project zlib")]
    user = "## Target function\nkv_t *kv_parse(const char *text);\n\n" + render_experience(shown) + \
        "\n\n## Task\nWrite the harness."
    facts = read_prompt("ROLE: prototyper", user)
    lessons = shown_lessons(facts)
    assert [(x.item_id, x.title) for x in lessons] == [("MEM-3f2a9c01", "Compile fixes needed for kv_parse"),
                                                       ("MEM-00c0ffee", "Initialise the z_stream")]
    assert "These fixes made the harness build: add #include <string.h> for memcpy." in lessons[0].text
    assert [x.item_id for x in applicable(facts, {"kv_parse", "kv_free"})] == ["MEM-3f2a9c01"]
    assert memories_used(shown, ["MEM-3f2a9c01"]) == [
        {"id": "MEM-3f2a9c01", "title": "Compile fixes needed for kv_parse", "similarity": 0.71, "used": True,
         "validation_level": 1, "trust": 0.55},
        {"id": "MEM-00c0ffee", "title": "Initialise the z_stream", "similarity": 0.52, "used": False,
         "validation_level": 0, "trust": 0.5}]
