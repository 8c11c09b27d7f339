"""Per-target result records and the run's summary, written as JSON next to the artifacts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from agent_graph.memory.session_memory import CATEGORIES
from long_term_memory.experience.trajectory import harness_runs

MAX_SAMPLES = 200


def downsample(points: list[Any], limit: int = MAX_SAMPLES) -> list[list[Any]]:
    """At most ``limit`` evenly spaced samples, always keeping the last (enough for a plot)."""
    if len(points) <= limit:
        return [list(p) for p in points]
    step = len(points) / (limit - 1)
    picked = [points[int(i * step)] for i in range(limit - 1)] + [points[-1]]
    return [list(p) for p in picked]


def _cov(run: dict[str, Any]) -> dict[str, Any]:
    return (run or {}).get("coverage") or {}


def result_record(state: dict[str, Any], project: str, function: str, seconds: float) -> dict[str, Any]:
    """What one target's run achieved, from its final state (measured values only)."""
    best = state.get("best") or {}
    run = best.get("run") or state.get("run") or {}
    build = best.get("build") or state.get("build") or {}
    crash = state.get("crash") or {}
    verdict = state.get("crash_analysis") or {}
    usage = state.get("usage") or {}
    counters = state.get("counters") or {}
    memory = state.get("session_memory") or {}
    return {
        "project": project,
        "function": function,
        "archetype": (state.get("analysis") or {}).get("archetype"),
        "compiles": bool(build.get("ok")),
        "runs": harness_runs(state),
        "crashes": bool(crash),
        "crash": {k: crash.get(k) for k in ("kind", "signature", "summary", "reproducer")}
        | {"verdict": verdict.get("verdict"), "feasible": verdict.get("feasible")} if crash else None,
        "coverage": {k: _cov(run).get(k) for k in ("lines", "branches", "functions")},
        "target_hits": run.get("target_hits", 0),
        "best_version": best.get("version"),
        "iterations": counters.get("iterations", 0),
        "fix_rounds": counters.get("fix_rounds_total", 0),
        "fallbacks": {k.split(":", 1)[1]: v for k, v in counters.items() if k.startswith("fallback:")},
        "harness_versions": counters.get("harness_versions", 0),
        "model_calls": sum(u.get("calls", 0) for u in usage.values()),
        "prompt_tokens": sum(u.get("prompt_tokens", 0) for u in usage.values()),
        "completion_tokens": sum(u.get("completion_tokens", 0) for u in usage.values()),
        "usage": usage,
        "guards": {k: v for k, v in counters.items() if k.startswith("guard_")},
        "termination_reason": state.get("termination_reason", ""),
        "memory_used": {
            "session": {c: len(memory.get(c) or []) if c != "archetype" else int(bool(memory.get(c)))
                        for c in CATEGORIES},
            "experience": state.get("memories_used") or [],
        },
        "coverage_history": [
            {**{k: row.get(k) for k in ("iteration", "version", "lines", "branches")},
             "progress": downsample(row.get("progress") or [])}
            for row in state.get("coverage_history") or []
        ],
        "coverage_over_time": downsample(run.get("progress") or []),
        "artifacts": {"cov_binary": build.get("cov_binary", ""), "corpus_dir": run.get("corpus_dir", ""),
                      "crash_files": run.get("crash_files") or []},
        "seconds": round(seconds, 1),
    }


def write_target_outputs(out: Path, state: dict[str, Any], record: dict[str, Any]) -> None:
    """``result.json``, the final harness and its logs in the target's directory."""
    out.mkdir(parents=True, exist_ok=True)
    best = state.get("best") or {}
    code = best.get("code") or state.get("harness_code") or ""
    if code:
        (out / "harness.c").write_text(code, encoding="utf-8")
    build = best.get("build") or state.get("build") or {}
    run = best.get("run") or state.get("run") or {}
    for src, name in ((build.get("log_path"), "build.log"), (run.get("log_path"), "fuzz.log")):
        if src and Path(src).is_file():
            shutil.copyfile(src, out / name)
    (out / "coverage.json").write_text(json.dumps(_cov(run), indent=1), encoding="utf-8")
    tmp = out / "result.json.tmp"
    tmp.write_text(json.dumps(record, indent=1), encoding="utf-8")
    tmp.replace(out / "result.json")  # a result file exists only once it is complete


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals over a run's targets."""
    return {
        "targets": len(records),
        "compiling": sum(r.get("compiles", False) for r in records),
        "running": sum(r.get("runs", False) for r in records),
        "crashing": sum(r.get("crashes", False) for r in records),
        "failed": [r["function"] for r in records if r.get("error")],
        "model_calls": sum(r.get("model_calls", 0) for r in records),
        "prompt_tokens": sum(r.get("prompt_tokens", 0) for r in records),
        "results": records,
    }
