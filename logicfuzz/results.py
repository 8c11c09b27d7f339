"""Per-target result records and the run's summary, written as JSON next to the artifacts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from agent_graph.memory.session_memory import CATEGORIES
from long_term_memory.experience.trajectory import harness_runs

MAX_SAMPLES = 200
LIBRARY_BUG = "library_bug"
OUTCOMES = (LIBRARY_BUG, "repaired", "misuse", "unclear")


def downsample(points: list[Any], limit: int = MAX_SAMPLES) -> list[list[Any]]:
    """At most ``limit`` evenly spaced samples, always keeping the last (enough for a plot)."""
    if len(points) <= limit:
        return [list(p) for p in points]
    step = len(points) / (limit - 1)
    picked = [points[int(i * step)] for i in range(limit - 1)] + [points[-1]]
    return [list(p) for p in picked]


def _cov(run: dict[str, Any]) -> dict[str, Any]:
    return (run or {}).get("coverage") or {}


def crash_entry(state: dict[str, Any]) -> dict[str, Any] | None:
    """The last crash of a target's run, with its verdict and what became of it (None: no crash).

    ``version`` is the harness version that crashed and ``final_version`` the one the run kept:
    a misuse crash of a version that was reverted or repaired is a repair, not the target's
    crash. ``fuzz_binary`` is the binary that crashed, when the run kept it (a library bug).
    """
    crash = state.get("crash") or {}
    if not crash:
        return None
    analysis = state.get("crash_analysis") or {}
    judged = analysis.get("version") == crash.get("version")
    entry = {k: crash.get(k) for k in ("kind", "signature", "summary", "reproducer")} | {
        "verdict": analysis.get("verdict") if judged else None,
        "feasible": analysis.get("feasible") if judged else None,
        "version": crash.get("version"), "final_version": state.get("harness_version"),
        "excerpt": crash.get("excerpt") or ""}
    build = state.get("build") or {}
    if build.get("fuzz_binary") and build.get("version") == crash.get("version"):
        entry["fuzz_binary"] = build["fuzz_binary"]
    return entry


def crash_outcome(record: dict[str, Any]) -> str:
    """What a target's recorded crash was: one of :data:`OUTCOMES`, or ``""`` with no crash.

    ``library_bug`` is the verdict library bug; a harness-misuse crash is ``repaired`` when the
    run kept another version that runs (reverted to the best, or fixed), else ``misuse``; a
    crash never judged, or judged with a verdict its feasibility contradicts, is ``unclear``.
    Records written before ``outcome`` existed are read the same way from their verdict.
    """
    crash = record.get("crash") or {}
    if not crash:
        return ""
    if crash.get("outcome") in OUTCOMES:
        return str(crash["outcome"])
    verdict, feasible = crash.get("verdict"), crash.get("feasible")
    if verdict == LIBRARY_BUG and feasible is not False:
        return LIBRARY_BUG
    if verdict != "harness_misuse" or feasible is True:
        return "unclear"  # never judged, or a verdict its own feasibility contradicts
    if crash.get("version") is not None and crash.get("version") == crash.get("final_version"):
        return "misuse"
    return "repaired" if record.get("runs") else "misuse"


def crash_cell(record: dict[str, Any]) -> str:
    """The crash as a table shows it: a library bug by its kind, a repair said to be one."""
    crash = record.get("crash") or {}
    kind = crash.get("kind") or "crash"
    version = f"v{crash['version']} " if crash.get("version") is not None else ""
    return {"": "", LIBRARY_BUG: f"{kind} (library bug)",
            "repaired": f"none; {version}{kind} was harness misuse, repaired",
            "misuse": f"{kind} (harness misuse, not repaired)",
            "unclear": f"{kind} (unclear)"}[crash_outcome(record)]


def result_record(state: dict[str, Any], project: str, function: str, seconds: float) -> dict[str, Any]:
    """What one target's run achieved, from its final state (measured values only)."""
    best = state.get("best") or {}
    run = best.get("run") or state.get("run") or {}
    build = best.get("build") or state.get("build") or {}
    crash = crash_entry(state)
    usage = state.get("usage") or {}
    counters = state.get("counters") or {}
    memory = state.get("session_memory") or {}
    record = {
        "project": project,
        "function": function,
        "archetype": (state.get("analysis") or {}).get("archetype"),
        "compiles": bool(build.get("ok")),
        "runs": harness_runs(state),
        "crashes": False,  # a library bug only, set below
        "crash": crash,
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
    if crash:
        crash["outcome"] = crash_outcome(record)
    record["crashes"] = crash_outcome(record) == LIBRARY_BUG
    return record


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
    """Totals over a run's targets: ``crashing`` counts library bugs only (see :func:`crash_outcome`)."""
    return {
        "targets": len(records),
        "compiling": sum(r.get("compiles", False) for r in records),
        "running": sum(r.get("runs", False) for r in records),
        "crashing": sum(crash_outcome(r) == LIBRARY_BUG for r in records),
        "crashes_repaired": sum(crash_outcome(r) == "repaired" for r in records),
        "crashes_unrepaired": sum(crash_outcome(r) == "misuse" for r in records),
        "crashes_unclear": sum(crash_outcome(r) == "unclear" for r in records),
        "failed": [r["function"] for r in records if r.get("error")],
        "model_calls": sum(r.get("model_calls", 0) for r in records),
        "prompt_tokens": sum(r.get("prompt_tokens", 0) for r in records),
        "results": records,
    }
