"""Execution node: fuzz the built harness, then measure coverage of the library's own code."""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from agent_graph.context import Context
from agent_graph.state import FuzzState
from agents.sections import documented_conditions, terminated_arguments, utf8_arguments
from fuzzkit.api import FunctionDecl
from fuzzkit.input_flow import INPUT_PROBLEM, feeder_exists, input_reaches_api
from fuzzkit.library import LibraryBuild
from fuzzkit.toolchain import FuzzRun, Toolchain, toolchain_named
from fuzzkit.utf8 import describe
from nodes.common import ctx_of, log_event, visit, work_dir
from nodes.lesson_checks import merged_extras, observe_run
from nodes.prompt_text import crash_for_prompt


def execution_node(state: FuzzState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Run libFuzzer for the budget; a crash, timeout or OOM is recorded, never raised."""
    ctx = ctx_of(runtime)
    version = int(state.get("harness_version") or 0)
    build = state["build"]
    out = work_dir(state) / f"v{version}" / "run"
    lib = LibraryBuild.from_dict(state["library"])
    tools = toolchain_named(ctx.toolchain)
    dict_path = (state.get("dict_path") or "") if ctx.dictionary else ""
    fuzz = tools.run_fuzzer(Path(build["fuzz_binary"]), out, seconds=ctx.fuzz_seconds,
                            rss_limit_mb=ctx.rss_limit_mb, harness_name="harness.c", dict_path=dict_path,
                            seed=ctx.fuzz_seed, runs=ctx.fuzz_runs)
    inputs = [Path(p) for p in fuzz.replay_inputs()]
    cov = tools.measure_coverage(Path(build["cov_binary"]), inputs, lib, out / "coverage")
    target = state["target"]["name"]
    target_hits = int(cov.function_hits.get(target, 0))
    crashed = bool(fuzz.crashed and fuzz.crash is not None)
    seed_hits = 0
    seed_dir = state.get("seed_dir") or ""
    if not crashed and ctx.seeds and seed_dir and Path(seed_dir).is_dir():
        seeded, seed_hits = _run_seeds(state, tools, lib, out.parent / "seeds", ctx.rss_limit_mb,
                                       count_hits=target_hits == 0)
        if seeded.crashed and seeded.crash is not None:
            fuzz, crashed = replace(fuzz, crash=seeded.crash, crash_files=seeded.crash_files), True
    problem = "" if crashed else _problem(state, target_hits + seed_hits, fuzz.exit_code)
    coverage = cov.to_dict()
    summary = {k: coverage[k] for k in ("lines", "branches", "functions")}
    record: dict[str, Any] = {
        "version": version,
        "crashed": crashed,
        "usable": not crashed and not problem,
        "problem": problem,
        "target_hits": target_hits,
        "seed_target_hits": seed_hits,
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
        reproducer = str(fuzz.crash_files[0]) if fuzz.crash_files else ""
        update["crash"] = {"version": version, **crash_for_prompt(fuzz.crash.to_dict()),
                           "reproducer": reproducer, "input_text": describe(reproducer) if reproducer else "",
                           "utf8_arguments": utf8_arguments(state),
                           "terminated_arguments": terminated_arguments(state),
                           "documented_conditions": documented_conditions(state)}
    merged_extras(update, observe_run(state, record, update.get("crash"), version))
    log_event(state, "execution.done", version=version, crashed=crashed,
              lines=summary["lines"], target_hits=target_hits,
              exec_per_sec=fuzz.stats.exec_per_sec)
    return update


def _run_seeds(state: FuzzState, tools: Toolchain, lib: LibraryBuild, out: Path, rss_limit_mb: int,
               count_hits: bool) -> tuple[FuzzRun, int]:
    """The library's sample files run once through the harness, and the target's calls among them.

    The sanitizers see the harness handle valid input (a leak or a misuse that only a file
    passing the format check reaches); when the fuzzer's own inputs never reached the target,
    a sample file that does shows the harness calls it. Coverage figures stay the fuzzer's own.
    """
    seeds, build = Path(state["seed_dir"]), state["build"]
    run = tools.run_inputs(Path(build["fuzz_binary"]), seeds, out, rss_limit_mb=rss_limit_mb,
                           harness_name="harness.c")
    hits = 0
    if count_hits and not run.crashed:
        cov = tools.measure_coverage(Path(build["cov_binary"]), [seeds], lib, out / "coverage")
        hits = int(cov.function_hits.get(state["target"]["name"], 0))
    elif count_hits and run.crash is not None and run.crash.entry_function == state["target"]["name"]:
        hits = 1  # a sample file crashed inside the target: the harness reached it
    log_event(state, "execution.seeds", crashed=run.crashed, target_hits=hits)
    return run, hits


def _problem(state: FuzzState, target_hits: int, exit_code: int | None) -> str:
    """Why a run that did not crash is not a running harness yet ("" when it is)."""
    target = state["target"]["name"]
    api = [FunctionDecl.from_dict(d) for d in state.get("api") or []]
    if target_hits == 0:
        return (f"the harness never called {target} (0 executions of it in coverage); "
                f"fuzzer exit code {exit_code}")
    if (feeder_exists(FunctionDecl.from_dict(state["target"]), api)
            and not input_reaches_api(state.get("harness_code", ""), [d.name for d in api] or [target])):
        return (f"{INPUT_PROBLEM}: {target} runs, but no call gets `data` or a buffer made "
                "from it; hand the input to the function that takes data (a setter such as "
                "`set_buffer(ctx, data, size)` included) before the target")
    return ""
