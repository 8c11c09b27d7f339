"""Sequential MaTTS through the runner: self-refinement rounds of one trajectory, for real.

The tiny ``kv`` library is built and fuzzed by the real toolchain; a scripted model writes the
harnesses. Round 1 starts from round 0's best harness with the ``## Self-refinement`` section in
the enhancer's prompt, a crash inside round 1 resumes from its checkpoint without rerunning round
0, and one self-contrast extraction over both rounds writes the target's lesson.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from agent_graph.context import Context
from agents.llm import register_provider
from logicfuzz.runner import run_target
from tests.conftest import harness
from tests.graph.scripted import ScriptedChatModel, keys
from tests.graph.test_graph import ANALYSIS, FIXED, IMPROVED, c_reply

pytestmark = pytest.mark.toolchain

REFINED = harness("""\
kv_t *kv = kv_parse(text);
if (kv) { (void)kv_count(kv); (void)kv_get(kv, "a"); (void)kv_get(kv, "b"); }
kv_free(kv);""")
STRATEGIES = json.dumps({"summary": "getters never ran", "strategies": [
    {"strategy": "call kv_count and kv_get on the parsed list",
     "target_functions": ["kv_count", "kv_get"], "expected_gain": "HIGH"}]})
LESSON = json.dumps({"memory_items": [{
    "title": "Query what kv_parse returns",
    "description": "Targets that parse text into a list object.",
    "content": "Both rounds gained only once the harness called `kv_count` and `kv_get` on the list "
               "`kv_parse` returned; round 1 re-measured that harness and a second key added nothing."}]})


def directions(direction: str, outcome: str) -> str:
    return json.dumps({"updated_directions": [
        {"direction": direction, "outcome": outcome, "source_ref": "v2", "evidence": "measured"}],
        "new_memory_item": None})


def events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_sequential_rounds_refine_one_trajectory_resume_and_extract_once(
        kv_benchmark: Path, tmp_path: Path) -> None:
    # Round 1's enhancer reply is missing at first: the run stops there, as a dead model would.
    model = ScriptedChatModel(script={
        "function_analyzer": [ANALYSIS, ANALYSIS],
        "prototyper": [c_reply({"notes": ["parse only"], "functions_called": ["kv_parse"]}, FIXED)],
        "coverage_analyzer": [STRATEGIES, STRATEGIES],
        "enhancer:improve": [c_reply({"directions": ["query the parsed list"],
                                      "added_calls": ["kv_count", "kv_get"]}, IMPROVED)],
        "local_memory_extractor": [directions("query the parsed list", "Success")],
    })
    register_provider("scripted", lambda ctx, temperature: model)
    memory = tmp_path / "memory.yaml"
    memory.write_text("matts:\n  enabled: true\n  mode: sequential\n  refine_rounds: 1\n"
                      f"bank:\n  directory: {tmp_path / 'bank'}\n")
    ctx = asdict(Context(model="scripted:test", fuzz_seconds=1, max_iterations=1,
                         memory_config=str(memory), fallback=""))  # a script that runs out must fail
    out = tmp_path / "run"
    target = out / "kv" / "kv_parse"

    failed = run_target(str(kv_benchmark), "kv_parse", str(out), ctx)
    assert "no scripted reply left for enhancer:improve" in failed["error"]
    assert keys(model) == ["function_analyzer", "prototyper", "coverage_analyzer", "enhancer:improve",
                           "local_memory_extractor", "function_analyzer", "coverage_analyzer",
                           "enhancer:improve"]
    assert not (target / "result.json").exists()
    # Round 1 started from round 0's best harness (v2), not from a new prototype.
    assert (target / "attempt-1" / "v1" / "harness.c").read_text() == IMPROVED
    round1 = events(target / "attempt-1" / "events.jsonl")
    assert [e["data"]["by"] for e in round1 if e["type"] == "harness.written"] == ["refinement: round 0's v2"]
    prompt = model.seen[-1]["messages"][-1][1]
    runs0 = [e for e in events(target / "attempt-0" / "events.jsonl") if e["type"] == "execution.done"]
    lines0 = runs0[-1]["data"]["lines"]["percent"]  # v2, the best version of round 0
    assert "## Self-refinement (round 1)\nPrevious attempt: round 0: compiles: yes; runs: yes" in prompt
    assert f"line coverage: {lines0:.1f}%" in prompt and "best harness v2" in prompt
    assert "- [Success] query the parsed list (round 0: measured)" in prompt
    assert "starts from the best harness of round 0 (its v2)" in prompt
    assert f"## Current harness\n```c\n{IMPROVED}" in prompt
    assert not any("Self-refinement" in m["messages"][-1][1] for m in model.seen[:5])

    # Resume: round 0 is finished and not rerun, round 1 goes on from its checkpoint.
    model.script["enhancer:improve"].append(c_reply({"directions": ["also look up key b"],
                                                     "added_calls": ["kv_get"]}, REFINED))
    model.script["local_memory_extractor"].append(directions("also look up key b", "Noise"))
    model.script["experience_contrastive"] = [LESSON, LESSON]
    seen_before = len(model.seen)
    record = run_target(str(kv_benchmark), "kv_parse", str(out), ctx)
    assert record.get("error") is None, record
    assert keys(model)[seen_before:] == ["enhancer:improve", "local_memory_extractor",
                                         "experience_contrastive"]
    matts = record["matts"]
    assert (matts["mode"], matts["rounds"]) == ("sequential", 2) and len(matts["lines"]) == 2
    assert record["coverage"]["lines"]["percent"] == matts["lines"][matts["best"]] == max(matts["lines"])
    assert record["runs"] and record["model_calls"] == sum(matts["model_calls"]) + 1
    assert matts["model_calls"] == [5, 4]  # round 1 wrote no prototype: it refined the old harness
    assert record["usage"]["enhancer"]["calls"] == 2 and record["usage"]["experience_extractor"]["calls"] == 1
    assert len([e for e in events(target / "attempt-1" / "events.jsonl")
                if e["type"] == "matts.refine.start"]) == 1
    assert json.loads((target / "result.json").read_text())["matts"] == matts

    # One self-contrast extraction over both rounds, one lesson, one decision.
    contrast = model.seen[-1]["messages"][-1][1]
    assert "2 successive self-refinement rounds of one trajectory" in contrast
    assert "Round 0: the first attempt" in contrast and "Round 1: refinement round 1" in contrast
    run_events = events(out / "run.events.jsonl")
    assert [e["type"] for e in run_events].count("memory.candidate.write") == 1

    # A rerun without result.json reruns no round; the same decision stores nothing new.
    sizes = {i: len((target / f"attempt-{i}" / "events.jsonl").read_text()) for i in (0, 1)}
    (target / "result.json").unlink()
    again = run_target(str(kv_benchmark), "kv_parse", str(out), ctx)
    assert again["matts"] == matts and keys(model)[-1] == "experience_contrastive"
    assert {i: len((target / f"attempt-{i}" / "events.jsonl").read_text()) for i in (0, 1)} == sizes
    run_events = events(out / "run.events.jsonl")
    assert [e["type"] for e in run_events].count("memory.candidate.write") == 1
    assert any(e["type"] == "memory.candidate.skip" and "already stored" in e["data"].get("reason", "")
               for e in run_events)
