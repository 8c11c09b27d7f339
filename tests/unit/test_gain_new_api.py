"""A small gain from API functions the harness now calls, which the best never ran, is kept.

An improvement that adds a call running on every input (a compiled pattern now executed, not
only compiled) can gain less than the fuzzer's noise in a short run; dropping it as noise
throws away code that a longer run would grow from. A gain of the same size from the same calls
(or from a library-internal public function a run happened to reach) is still noise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from agent_graph.context import Context
from fuzzkit.api import FunctionDecl, Param
from nodes.memory_manager import record_measurement

BEST_CODE = "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { r = lib_compile(t); return 0; }"
NEW_CODE = ("int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { r = lib_compile(t);\n"
            "  /* LF improve: call lib_exec on r */\n  lib_exec(r, t); return 0; }")


def _state(tmp_path: Path, code: str, uncovered_after: list[str]) -> dict[str, Any]:
    run_of = lambda version, lines, unc: {  # noqa: E731
        "version": version, "usable": True, "crashed": False, "uncovered_functions": unc,
        "coverage": {"lines": {"covered": int(lines * 100), "count": 10000, "percent": lines}}}
    best = {"version": 2, "code": BEST_CODE, "lines_percent": 2.02, "build": {"version": 2, "ok": True},
            "run": run_of(2, 2.02, ["lib_exec", "lib_internal"]), "coverage": None}
    return {"best": best, "harness_version": 3, "harness_code": code, "phase": "optimization",
            "build": {"version": 3, "ok": True}, "run": run_of(3, 2.11, uncovered_after),
            "last_change": {"kind": "improve", "version": 3, "directions": ["call lib_exec on r"]},
            "counters": {}, "project": "p", "function": "lib_compile", "work_dir": str(tmp_path),
            "target": _fn("lib_compile").to_dict(), "api": [_fn(n).to_dict() for n in NAMES]}


NAMES = ("lib_compile", "lib_exec", "lib_internal")


def _fn(name: str) -> FunctionDecl:
    return FunctionDecl(name, "int", (Param("t", "const char *"),))


def _measure(tmp_path: Path, code: str, uncovered_after: list[str]) -> dict[str, Any]:
    state = _state(tmp_path, code, uncovered_after)
    return record_measurement(state, Runtime(context=Context()))  # type: ignore[arg-type]


def test_a_small_gain_that_runs_a_newly_called_function_becomes_best(tmp_path: Path) -> None:
    update = _measure(tmp_path, NEW_CODE, ["lib_internal"])
    assert update.get("best", {}).get("version") == 3
    assert '"outcome": "success"' in (tmp_path / "events.jsonl").read_text()


def test_the_same_gain_without_a_new_call_is_noise(tmp_path: Path) -> None:
    # lib_internal ran this time, but no call of the harness names it: the fuzzer's luck.
    update = _measure(tmp_path, BEST_CODE.replace("return 0", "x = 1; return 0"), ["lib_exec"])
    assert "best" not in update
    assert '"outcome": "noise"' in (tmp_path / "events.jsonl").read_text()
