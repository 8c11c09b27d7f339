"""A run stopped after a node's writes were saved but before the step's checkpoint resumes.

LangGraph saves each finished task's writes, then the step's checkpoint. A process killed
between the two leaves a snapshot whose ``next`` is empty (the task has its writes) although
the graph is not finished; the runner once took that for a finished run and wrote a result
with nothing built, and a refinement round stopped there lost its seed. Here a checkpointer fails
at the k-th checkpoint, exactly in that window.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from agent_graph.benchmark import load_benchmark
from agent_graph.builder import build_graph
from agent_graph.context import Context
from logicfuzz.runner import prepared_input, run_target, target_dir

pytestmark = pytest.mark.toolchain


class Stopped(Exception):
    """Stands for the kill: raised where the checkpoint would be written."""


class StopsAtCheckpoint(SqliteSaver):
    """A SQLite checkpointer that stops the run instead of writing checkpoint number ``at``."""

    def __init__(self, conn: sqlite3.Connection, at: int) -> None:
        super().__init__(conn)
        self.at, self.count = at, 0

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        self.count += 1
        if self.count == self.at:
            raise Stopped
        return super().put(config, checkpoint, metadata, new_versions)


def _sources(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [json.loads(m)["source"] for (m,) in conn.execute(
            "SELECT metadata FROM checkpoints WHERE checkpoint_ns = '' ORDER BY checkpoint_id")]


@pytest.mark.parametrize("at", [4, 6])
def test_writes_saved_without_their_checkpoint_resume(kv_benchmark: Path, tmp_path: Path, at: int) -> None:
    out = tmp_path / "run"
    bench = load_benchmark(kv_benchmark)
    ctx = Context(fuzz_seconds=1, max_iterations=0, memory_mode="baseline")
    wdir = target_dir(out, bench.project, "kv_parse")
    wdir.mkdir(parents=True)
    config = {"configurable": {"thread_id": f"{bench.project}/kv_parse"}}
    conn = sqlite3.connect(wdir / "checkpoints.sqlite", check_same_thread=False)
    graph = build_graph(checkpointer=StopsAtCheckpoint(conn, at))
    with pytest.raises(Stopped):
        graph.invoke({**prepared_input(bench, "kv_parse", wdir), "run_dir": str(out)}, config,
                     context=ctx, durability="sync")
    conn.close()
    stopped = build_graph(checkpointer=SqliteSaver(sqlite3.connect(wdir / "checkpoints.sqlite")))
    snapshot = stopped.get_state(config)
    assert snapshot.tasks and not snapshot.next  # the window this test is about
    kept = _sources(wdir / "checkpoints.sqlite")

    record = run_target(str(kv_benchmark), "kv_parse", str(out), ctx.__dict__)
    assert record["compiles"] and record["runs"] and record["termination_reason"], record
    after = _sources(wdir / "checkpoints.sqlite")
    assert after[: len(kept)] == kept and len(after) > len(kept)
    assert after.count("input") == 1  # continued, not started again


@pytest.mark.parametrize("at", [2, 3])  # the input's writes saved, then prepare's
def test_seeded_round_stopped_before_its_seed_still_gets_it(kv_benchmark: Path, tmp_path: Path,
                                                            at: int) -> None:
    from logicfuzz.target_run import _run_graph
    from long_term_memory.experience.matts import REFINEMENT_KEY

    out = tmp_path / "run"
    bench = load_benchmark(kv_benchmark)
    ctx = Context(fuzz_seconds=1, max_iterations=0, memory_mode="baseline")
    wdir = target_dir(out, bench.project, "kv_parse") / "attempt-1"
    wdir.mkdir(parents=True)
    thread = f"{bench.project}/kv_parse#a1"
    conn = sqlite3.connect(wdir / "checkpoints.sqlite", check_same_thread=False)
    graph = build_graph(checkpointer=StopsAtCheckpoint(conn, at))
    with pytest.raises(Stopped):
        graph.invoke({**prepared_input(bench, "kv_parse", wdir), "run_dir": str(out)},
                     {"configurable": {"thread_id": thread}}, context=ctx, durability="sync",
                     interrupt_after=["prepare"])
    conn.close()
    seed = {"extras": {REFINEMENT_KEY: {"round": 1, "rounds": 1, "start": {"round": 0, "version": 1}}}}
    state = _run_graph(bench, "kv_parse", wdir, out, ctx, thread, seed)
    assert REFINEMENT_KEY in (state.get("extras") or {})  # the round ran as the refinement it is
    assert state["termination_reason"]
