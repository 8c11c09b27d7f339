"""One target's run: a checkpointed graph run (or MaTTS attempts), resumed when unfinished.

Each target has its own checkpoint thread (a SQLite file in its directory, or the shared
``--store`` database), so a rerun with the same ``--out`` skips a target that has a
``result.json`` and resumes an interrupted one from its last checkpoint (synchronous
durability: a checkpoint is saved before the next node starts).
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_graph.benchmark import Benchmark, load_benchmark
from agent_graph.builder import build_graph
from agent_graph.context import Context
from agent_graph.state import add_usage
from agents.base import ModelCallError
from agents.llm import ModelConfigError
from agents.parsing import ReplyParseError
from fuzzkit.paths import safe_path
from logicfuzz.checkpoints import checkpointer, thread_id
from logicfuzz.results import result_record, write_target_outputs
from long_term_memory.experience import attempt_specs, best_attempt, outcome_from_state
from long_term_memory.experience.matts import REFINEMENT_KEY, matts_record, refinement_seed, round_specs
from nodes.common import log_event
from nodes.experience import config_of, matts_lifecycle
from nodes.prepare import prepared_fields

if TYPE_CHECKING:
    from long_term_memory.experience import Outcome
    from long_term_memory.experience.matts import AttemptSpec


def prepared_input(bench: Benchmark, function: str, work_dir: Path, usage: bool = True) -> dict[str, Any]:
    """Graph input with the library built and the API parsed (``usage``: and its own usage read)."""
    return {"benchmark": bench.path, "function": function, "work_dir": str(work_dir),
            **prepared_fields(bench, function, usage=usage)}


def target_dir(out: Path, project: str, function: str) -> Path:
    """Where one target's outputs live: ``out/project/function``, refused if that leaves ``out``.

    The benchmark loader already allows only safe names; this keeps every writer of a
    target's files inside the run directory whatever reaches it.
    """
    return safe_path(out, Path(project) / function)


def _run_graph(bench: Benchmark, function: str, wdir: Path, run_dir: Path, ctx: Context,
               thread: str, seed: dict[str, Any] | None = None) -> dict[str, Any]:
    """One checkpointed graph run in ``wdir``: resumed when unfinished, not rerun when finished.

    ``seed`` (state values, e.g. a refinement round's starting harness) is written once, as part
    of ``prepare``'s update: the graph's input schema takes only the target.
    """
    wdir.mkdir(parents=True, exist_ok=True)
    config = {"configurable": {"thread_id": thread_id(ctx.store, wdir, thread)}}
    with checkpointer(ctx.store, wdir) as saver:
        graph = build_graph(checkpointer=saver)
        snapshot = graph.get_state(config)
        # ``next`` leaves out a task whose writes were saved before the step's checkpoint (a
        # kill between the two): that run is unfinished, and only ``tasks`` shows it.
        if snapshot.values and not snapshot.tasks:
            return dict(snapshot.values)
        payload = None
        if not snapshot.tasks:
            payload = {**prepared_input(bench, function, wdir, ctx.usage), "run_dir": str(run_dir)}
        # Stopped with the input's or prepare's writes saved but not their checkpoint.
        before_seed = bool(snapshot.tasks) and not snapshot.next and {
            t.name for t in snapshot.tasks} <= {"__start__", "prepare"}
        if seed and (payload or before_seed):  # the seed goes in right after prepare
            graph.invoke(payload, config, context=ctx, durability="sync", interrupt_after=["prepare"])
            payload, snapshot = None, graph.get_state(config)
        if seed and _awaits_seed(snapshot.values, snapshot.next):
            graph.update_state(config, seed, as_node="prepare")
            _log_seed(snapshot.values, seed)
        graph.invoke(payload, config, context=ctx, durability="sync")
        return dict(graph.get_state(config).values)


def _awaits_seed(values: dict[str, Any], next_nodes: tuple[str, ...]) -> bool:
    """True right after ``prepare`` of a run that was not seeded yet (also after a crash there)."""
    return (tuple(next_nodes) == ("supervisor",) and set(values.get("node_visits") or {}) <= {"prepare"}
            and REFINEMENT_KEY not in (values.get("extras") or {}))


def _log_seed(values: dict[str, Any], seed: dict[str, Any]) -> None:
    info = seed["extras"][REFINEMENT_KEY]
    log_event(values, "matts.refine.start", round=info["round"], rounds=info["rounds"], start=info["start"])
    if seed.get("harness_code"):
        start = info["start"]
        log_event(values, "harness.written", version=seed["harness_version"],
                  by=f"refinement: round {start['round']}'s v{start['version']}")


def _run_attempts(bench: Benchmark, function: str, tdir: Path, out: Path, ctx: Context,
                  specs: list[AttemptSpec]) -> tuple[str, list[Any], list[Outcome]]:
    """MaTTS: the parallel attempts, or the rounds of one sequential trajectory, in order.

    Each attempt or round has its own work dir (``attempt-N``) and checkpoint thread; a finished
    one is not rerun. Round r > 0 of a sequential trajectory is seeded from rounds 0..r-1.
    """
    sequential = len(specs) == 1 and specs[0].refine_rounds > 0
    rounds = specs[0].refine_rounds
    states: list[Any] = []
    outcomes: list[Outcome] = []
    for each in round_specs(specs[0]) if sequential else specs:
        attempt_ctx = replace(
            ctx, defer_experience=True,
            temperature=ctx.temperature if each.temperature is None else each.temperature,
            max_output_tokens=each.max_tokens or ctx.max_output_tokens)
        seed = refinement_seed(states, outcomes, rounds) if sequential and states else None
        states.append(_run_graph(bench, function, tdir / f"attempt-{each.attempt}", out, attempt_ctx,
                                 f"{bench.project}/{function}#a{each.attempt}", seed))
        outcomes.append(outcome_from_state(states[-1], out.name, attempt=each.attempt))
    return ("sequential" if sequential else "parallel"), states, outcomes


def run_target(bench_path: str, function: str, out: str, ctx_data: dict[str, Any]) -> dict[str, Any]:
    """Run (or resume) one target and write its outputs. Runs in a worker; returns its record.

    With MaTTS on (the experience config's ``matts``), the target runs as N parallel attempts at
    a higher temperature, or (``mode: sequential``) as 1 + ``refine_rounds`` self-refinement
    rounds of one trajectory. The best attempt or round is the target's result, its usage is
    that of all of them, and one contrastive extraction learns from all of them.
    """
    bench = load_benchmark(bench_path)
    ctx = Context(**ctx_data)
    tdir = target_dir(Path(out), bench.project, function)
    result_file = tdir / "result.json"
    if result_file.is_file():
        return {**json.loads(result_file.read_text()), "skipped": True}
    started = time.monotonic()
    specs = attempt_specs(config_of(ctx))
    try:
        if len(specs) == 1 and not specs[0].refine_rounds:
            state = _run_graph(bench, function, tdir, Path(out), ctx, f"{bench.project}/{function}")
            matts: dict[str, Any] | None = None
        else:
            mode, states, outcomes = _run_attempts(bench, function, tdir, Path(out), ctx, specs)
            best = best_attempt(outcomes)
            extra_usage = matts_lifecycle(states, ctx, best, sequential=mode == "sequential")
            state = dict(states[best])
            usage: dict[str, Any] = {}
            for each in states:
                usage = add_usage(usage, each.get("usage") or {})
            if extra_usage:
                usage = add_usage(usage, {"experience_extractor": extra_usage})
            state["usage"] = usage
            matts = matts_record(mode, outcomes, best)
    except (ModelCallError, ModelConfigError, ReplyParseError) as exc:
        record: dict[str, Any] = {"project": bench.project, "function": function, "error": str(exc)}
        tdir.mkdir(parents=True, exist_ok=True)
        (tdir / "error.json").write_text(json.dumps(record, indent=1))
        return record
    record = result_record(state, bench.project, function, time.monotonic() - started)
    if matts:
        record["matts"] = matts
    write_target_outputs(tdir, state, record)
    return record
