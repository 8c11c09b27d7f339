"""Experience memory on a real run: the graph (offline model, real clang/libFuzzer/llvm-cov) fuzzes
the tiny kv library; its final state becomes a trajectory, the offline model distils it, the
Gatekeeper admits it, the bank stores it, and the next kv target retrieves it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent_graph.builder import build_graph
from agent_graph.context import Context
from agents.offline.experience import distil
from agents.offline.model import reply_text
from agents.offline.prompt_reader import read_prompt
from long_term_memory.embeddings import get_embedder
from long_term_memory.experience import (
    EventLog,
    ExperienceBank,
    ExperienceConfig,
    Gatekeeper,
    build_extraction_prompt,
    detect_used,
    extraction_kind,
    outcome_from_state,
    parse_memory_items,
    read_events,
    render_experience,
    target_query,
    trajectory_from_state,
)
from prompts import render

pytestmark = pytest.mark.toolchain


def run_target(kv_benchmark: Path, work: Path) -> dict[str, Any]:
    graph = build_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "kv"}}
    inputs = {"benchmark": str(kv_benchmark), "function": "kv_parse", "work_dir": str(work)}
    context = Context(model="offline", fuzz_seconds=2, max_iterations=1, memory_mode="baseline")
    graph.invoke(inputs, config, context=context)
    return dict(graph.get_state(config).values)


def test_a_real_run_becomes_a_lesson_the_next_target_retrieves(kv_benchmark: Path, tmp_path: Path) -> None:
    state = run_target(kv_benchmark, tmp_path / "run" / "kv" / "kv_parse")
    cfg = ExperienceConfig.load()
    outcome = outcome_from_state(state, run_id="run")
    assert outcome.task_id == "kv/kv_parse" and outcome.compiles and outcome.runs
    assert outcome.lines_percent > 0 and outcome.model_calls >= 2 and outcome.harness_versions >= 1

    trajectory = trajectory_from_state(state, cfg, run_id="run")
    tags = {step.tag for step in trajectory.steps}
    assert {"harness", "build", "run"} <= tags and trajectory.is_success
    template, variables = build_extraction_prompt(extraction_kind([trajectory]), [trajectory])
    assert template == "experience_success"
    system, user = render(template, variables)
    reply = reply_text(*distil(read_prompt(system, user)))
    items = parse_memory_items(reply)
    assert "kv_parse" in items[0].content and f"{outcome.lines_percent:.1f}%" in items[0].content

    events = EventLog(tmp_path / "run" / "run.events.jsonl")
    bank = ExperienceBank.open("fuzz-c", tmp_path / "bank", cfg, get_embedder())
    gk = Gatekeeper(cfg)
    matches = bank.search(trajectory.query, exclude_task_id=outcome.task_id, events=events)
    decision = gk.evaluate(gk.prepare_inject(matches), [], outcome, matches)
    decision = gk.admit(decision, outcome, items, query=trajectory.query, task_type="fuzz-c",
                        trajectory=variables["trajectory"])
    applied = bank.apply(decision, events)
    assert applied.record is not None and applied.record.added
    assert bank.apply(decision, events).replayed  # a resumed run writes nothing twice

    # The next target of the same library: retrieved above the default threshold, injectable.
    nxt = {**state, "function": "kv_count", "target": {
        "name": "kv_count", "return_type": "int", "params": [{"name": "kv", "type": "const kv_t *"}],
        "header": "kv.h"}}
    query = target_query(nxt)
    matches = bank.search(query, exclude_task_id="kv/kv_count", events=events)
    assert matches and matches[0].item_id == applied.record.added[0] and matches[0].score >= 0.5
    shown = gk.prepare_inject(matches)
    section = render_experience(shown)
    assert section.startswith("## Relevant experience") and shown[0].item_id in section
    used = detect_used(f'{{"notes": ["applied [{shown[0].item_id}]"]}}', [s.item_id for s in shown])
    later = outcome.model_copy(update={"task_id": "kv/kv_count"})
    bank.apply(gk.evaluate(shown, used, later, matches), events)
    stats = bank.stats(used)[used[0]]
    assert (stats.hit_count, stats.use_count, stats.validation_level, stats.trust) == (1, 1, 1, 0.55)
    bank.close()
    kinds = [e["type"] for e in read_events(tmp_path / "run" / "run.events.jsonl")]
    assert kinds == ["memory.search.result", "memory.candidate.write", "memory.candidate.skip",
                     "memory.write.skip", "memory.search.result", "memory.candidate.skip",
                     "memory.hit.write", "memory.validation.write"]
