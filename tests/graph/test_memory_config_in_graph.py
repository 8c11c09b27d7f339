"""The experience memory in real graph runs (offline model, real toolchain, the tiny kv library):
the memory config file's mode and model hold unless the caller sets them, the search matches
reach the end of the run even when nothing was shown, and a blocked item comes back through
probation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent_graph.builder import build_graph
from agent_graph.context import Context
from long_term_memory.experience import EventLog, Gatekeeper, MemoryItem
from tests.unit.test_experience_support import checksums, config, item, open_bank, outcome, record

pytestmark = pytest.mark.toolchain

QUERY = "project kv; target kv_t * kv_parse(const char * text); archetype stateless_parser"
LESSON = item("Copy the input into a NUL-terminated buffer",
              "kv_parse reads a C string: copy data into malloc(size + 1), set the last byte to 0, "
              "call kv_parse and kv_free the result.", "string parsers such as kv_parse")


def memory_file(tmp_path: Path, mode: str, probation_runs: int = 5) -> Path:
    path = tmp_path / "memory.yaml"
    path.write_text(f"mode: {mode}\nbank:\n  directory: {tmp_path / 'bank'}\n"
                    f"embedding:\n  model: {config().embedding.model}\n"
                    f"retrieval:\n  threshold: 0.0\ngatekeeper:\n  probation_runs: {probation_runs}\n")
    return path


def blocked_bank(tmp_path: Path, probation_runs: int) -> str:
    """A bank holding one kv lesson from another kv target, blocked by three failed validations."""
    cfg = config(gatekeeper__probation_runs=probation_runs)
    bank = open_bank(tmp_path / "bank", cfg=cfg)
    (item_id,) = bank.add_record(record("rec-1", "kv/kv_get", [LESSON], query=QUERY)).added
    gk = Gatekeeper(cfg)
    for n in range(3):
        matches = bank.search(QUERY, exclude_task_id="kv/other", threshold=-1.0)
        failed = outcome("kv/other", run_id=f"fail-{n}", compiles=False, runs=False)
        bank.apply(gk.evaluate(gk.prepare_inject(matches), [item_id], failed, matches),
                   EventLog(tmp_path / "seed.events.jsonl"))
    assert bank.stats([item_id])[item_id].status == "blocked"
    bank.close()
    return item_id


def run(kv_benchmark: Path, work: Path, **context: Any) -> dict[str, Any]:
    graph = build_graph(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": str(work)}}
    inputs = {"benchmark": str(kv_benchmark), "function": "kv_parse", "work_dir": str(work)}
    graph.invoke(inputs, cfg, context=Context(model="offline", fuzz_seconds=1, max_iterations=0,
                                              **context))
    return dict(graph.get_state(cfg).values)


def test_a_retrieve_only_file_never_writes_and_matches_reach_the_end(kv_benchmark: Path,
                                                                     tmp_path: Path) -> None:
    item_id = blocked_bank(tmp_path, probation_runs=100)
    before = checksums(tmp_path / "bank")
    state = run(kv_benchmark, tmp_path / "r" / "kv" / "kv_parse",
                memory_config=str(memory_file(tmp_path, "retrieve-only")))
    # The file's mode held (no CLI flag): the bank is byte-identical.
    assert checksums(tmp_path / "bank") == before
    # The blocked item matched but was not shown; the match still reached the final state.
    experience = state["extras"]["experience"]
    assert [m["item_id"] for m in experience["matches"]] == [item_id] and experience["shown"] == []


def test_a_caller_flag_beats_the_file_and_probation_brings_a_blocked_item_back(
        kv_benchmark: Path, tmp_path: Path) -> None:
    item_id = blocked_bank(tmp_path, probation_runs=1)
    path = str(memory_file(tmp_path, "retrieve-only", probation_runs=1))
    first = run(kv_benchmark, tmp_path / "r1" / "kv" / "kv_parse", memory_config=path,
                memory_mode="retrieve-extract")
    assert first["extras"]["experience"]["shown"] == []  # blocked: one run in its scope counted
    second = run(kv_benchmark, tmp_path / "r2" / "kv" / "kv_parse", memory_config=path,
                 memory_mode="retrieve-extract")
    assert [i["item_id"] for i in second["extras"]["experience"]["shown"]] == [item_id]
    bank = open_bank(tmp_path / "bank", cfg=config())
    stats = bank.stats([item_id])[item_id]
    bank.close()
    # The probation run's harness ran and covered code: a pass, so the item is active again.
    assert second["best"]["run"]["usable"]
    assert (stats.status, stats.consecutive_fail, stats.pass_count) == ("active", 0.0, 1)


def test_a_fitting_actionable_lesson_beats_a_trusted_plain_one_and_counts_as_used(
        kv_benchmark: Path, tmp_path: Path) -> None:
    """top_k=1 showed only the best-validated plain item, so an applicable lesson never reached
    the next target. Now the lesson whose scope fits is shown too; one whose scope does not fit is
    left out. Its change is in the measured harness, but the offline draft releases kv_t from the
    header's own facts with or without it: by the counterfactual it changed nothing, so it is not
    used (presence alone used to count it)."""
    cfg = config()
    bank = open_bank(tmp_path / "bank", cfg=cfg)
    (plain,) = bank.add_record(record("rec-1", "kv/kv_get", [LESSON], query=QUERY)).added
    release = MemoryItem.model_validate({**LESSON.model_dump(),
        "title": "Release kv_t results with kv_free", "scope": {"name": "kv_*", "type": "kv_t",
                                                             "shape": "returns_pointer"},
        "failure": "sanitizer:leak@kv_get", "action": "release_out_param(type=kv_t, releaser=kv_free)"})
    misfit = MemoryItem.model_validate({**LESSON.model_dump(), "title": "kv_other is a struct tag",
                                        "scope": {"type": "kv_other"}, "action": "keep_struct_tag(kv_other)"})
    fit_id, misfit_id = bank.add_record(record("rec-2", "kv/kv_count", [release, misfit], query=QUERY)).added
    gk = Gatekeeper(cfg)
    for n in range(2):  # the plain item earns validations: seed 001's order puts it first
        matches = bank.search(QUERY, exclude_task_id="kv/other", threshold=-1.0)
        bank.apply(gk.evaluate([plain], [plain], outcome("kv/other", run_id=f"ok-{n}"), matches),
                   EventLog(tmp_path / "seed.events.jsonl"))
    bank.close()
    state = run(kv_benchmark, tmp_path / "r" / "kv" / "kv_parse",
                memory_config=str(memory_file(tmp_path, "retrieve-extract")))
    shown = [i["item_id"] for i in state["extras"]["experience"]["shown"]]
    assert shown == [fit_id, plain] and misfit_id not in shown
    used = {m["id"]: m["used"] for m in state["memories_used"]}
    assert used[fit_id] is False and "kv_free(" in state["best"]["code"]
    assert state["extras"]["experience"]["changed"] == []
