"""The benchmark runner: one run directory, one checkpointed graph run per target, resumable.

A rerun with the same ``--out`` skips targets that already have a ``result.json`` and resumes
an interrupted target from its last checkpoint (SQLite, synchronous durability).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver

from agent_graph.benchmark import Benchmark, load_benchmark
from agent_graph.builder import build_graph
from agent_graph.context import Context
from agent_graph.results import result_record, summarize, write_target_outputs
from agents.base import ModelCallError

Progress = Callable[[str, str, dict[str, Any]], None]


@dataclass
class RunOptions:
    """What ``logicfuzz run`` was asked to do."""

    benchmark: Path
    functions: list[str] = field(default_factory=list)
    out: Path | None = None
    context: Context = field(default_factory=Context)


def new_run_dir(root: Path = Path("results")) -> Path:
    """``results/<timestamp>`` (suffixed when two runs start in the same second)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path, n = root / stamp, 1
    while path.exists():
        n += 1
        path = root / f"{stamp}-{n}"
    return path


def prepared_input(bench: Benchmark, function: str, work_dir: Path) -> dict[str, Any]:
    """Graph input with the library built and the API parsed, shared by all targets."""
    from nodes.prepare import api_of, library_for

    lib = library_for(bench)
    api = api_of(lib)
    spec = bench.function(function)
    target = next((d for d in api if d.name == function), None) or spec.decl()
    return {
        "benchmark": bench.path, "function": function, "project": bench.project,
        "work_dir": str(work_dir), "target": target.to_dict(),
        "api": [d.to_dict() for d in api], "headers": [Path(h).name for h in lib.headers],
        "library": lib.to_dict(),
    }


def run_target(
    graph: Any, bench: Benchmark, function: str, out: Path, ctx: Context,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run (or resume) one target and write its outputs; failures become error records."""
    target_dir = out / bench.project / function
    result_file = target_dir / "result.json"
    if result_file.is_file():
        record: dict[str, Any] = json.loads(result_file.read_text())
        if progress:
            progress(function, "skipped (already done)", record)
        return record
    config = {"configurable": {"thread_id": f"{bench.project}/{function}"}}
    started = time.monotonic()
    snapshot = graph.get_state(config)
    payload = None if snapshot.next else prepared_input(bench, function, target_dir)
    try:
        for update in graph.stream(payload, config, context=ctx, stream_mode="updates",
                                   durability="sync"):
            for node, _ in update.items():
                if progress and node != "supervisor":
                    progress(function, node, {})
    except ModelCallError as exc:
        record = {"project": bench.project, "function": function, "error": str(exc)}
        if progress:
            progress(function, "failed", record)
        return record
    state = graph.get_state(config).values
    record = result_record(state, bench.project, function, time.monotonic() - started)
    write_target_outputs(target_dir, state, record)
    if progress:
        progress(function, "done", record)
    return record


def run_benchmark(options: RunOptions, progress: Progress | None = None) -> dict[str, Any]:
    """Run every requested function of a benchmark; returns the summary written to disk."""
    bench = load_benchmark(options.benchmark)
    functions = options.functions or [f.name for f in bench.functions]
    for name in functions:
        bench.function(name)  # unknown names fail before any work starts
    out = options.out or new_run_dir()
    out.mkdir(parents=True, exist_ok=True)
    (out / "run.json").write_text(json.dumps({
        "benchmark": str(options.benchmark), "functions": functions,
        "context": {k: v for k, v in vars(options.context).items() if k != "api_key_env"},
    }, indent=1))
    records = []
    with SqliteSaver.from_conn_string(str(out / "checkpoints.sqlite")) as saver:
        graph = build_graph(checkpointer=saver)
        for name in functions:
            records.append(run_target(graph, bench, name, out, options.context, progress))
    summary = {"run_dir": str(out), "project": bench.project, **summarize(records)}
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary
