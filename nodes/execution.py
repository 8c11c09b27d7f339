"""Execution node: fuzz the built harness, then measure coverage of the library's own code."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from agent_graph.context import Context
from agent_graph.state import FuzzState
from fuzzkit.api import FunctionDecl
from fuzzkit.input_flow import INPUT_PROBLEM, feeder_exists, input_reaches_api
from fuzzkit.library import LibraryBuild
from fuzzkit.toolchain import toolchain_named
from nodes._common import ctx_of, log_event, visit, work_dir
from nodes._prompt_text import crash_for_prompt


def execution_node(state: FuzzState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Run libFuzzer for the budget; a crash, timeout or OOM is recorded, never raised."""
    ctx = ctx_of(runtime)
    version = int(state.get("harness_version") or 0)
    build = state["build"]
    out = work_dir(state) / f"v{version}" / "run"
    lib = LibraryBuild.from_dict(state["library"])
    tools = toolchain_named(ctx.toolchain)
    seed_dir = state.get("seed_dir") or ""
    seeds = [Path(seed_dir)] if ctx.seeds and seed_dir and Path(seed_dir).is_dir() else []
    fuzz = tools.run_fuzzer(Path(build["fuzz_binary"]), out, seconds=ctx.fuzz_seconds,
                            rss_limit_mb=ctx.rss_limit_mb, harness_name="harness.c", seed_dirs=seeds)
    inputs = [Path(p) for p in fuzz.replay_inputs()]
    cov = tools.measure_coverage(Path(build["cov_binary"]), inputs, lib, out / "coverage")
    target = state["target"]["name"]
    target_hits = int(cov.function_hits.get(target, 0))
    crashed = bool(fuzz.crashed and fuzz.crash is not None)
    problem = ""
    api = [FunctionDecl.from_dict(d) for d in state.get("api") or []]
    api_names = [d.name for d in api] or [target]
    if not crashed and target_hits == 0:
        problem = (f"the harness never called {target} (0 executions of it in coverage); "
                   f"fuzzer exit code {fuzz.exit_code}")
    elif (not crashed and feeder_exists(FunctionDecl.from_dict(state["target"]), api)
          and not input_reaches_api(state.get("harness_code", ""), api_names)):
        problem = (f"{INPUT_PROBLEM}: {target} runs, but no call gets `data` or a buffer made "
                   "from it; hand the input to the function that takes data (a setter such as "
                   "`set_buffer(ctx, data, size)` included) before the target")
    coverage = cov.to_dict()
    summary = {k: coverage[k] for k in ("lines", "branches", "functions")}
    record: dict[str, Any] = {
        "version": version,
        "crashed": crashed,
        "usable": not crashed and not problem,
        "problem": problem,
        "target_hits": target_hits,
        "exit_code": fuzz.exit_code,
        "seconds": round(fuzz.seconds, 2),
        "timed_out": fuzz.timed_out,
        "stats": asdict(fuzz.stats),
        "progress": [list(p) for p in fuzz.progress],
        "log_path": str(fuzz.log_path),
        "corpus_dir": str(fuzz.corpus_dir),
        "crash_files": list(fuzz.crash_files),
        "coverage": summary,
        "uncovered_functions": cov.uncovered([d["name"] for d in state.get("api") or []]),
    }
    update: dict[str, Any] = {**visit("execution"), "run": record, "counters": {"fuzz_runs": 1}}
    if crashed:
        assert fuzz.crash is not None
        # The harness wrote the log the report was parsed from: redact and cap what prompts see.
        update["crash"] = {"version": version, **crash_for_prompt(fuzz.crash.to_dict()),
                           "reproducer": str(fuzz.crash_files[0]) if fuzz.crash_files else ""}
    log_event(state, "execution.done", version=version, crashed=crashed,
              lines=summary["lines"], target_hits=target_hits,
              exec_per_sec=fuzz.stats.exec_per_sec)
    return update
