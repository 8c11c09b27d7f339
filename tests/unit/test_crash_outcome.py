"""A run's table and summary show a harness-misuse crash of a dropped version as a repair.

``crashing`` counts library bugs only. The states below are hand-built the way a finished
graph run leaves them: the last crash stays in ``crash`` after the run reverted to its best
version, and ``crash_analysis`` holds the verdict of that crash's version.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from logicfuzz.cli import summary_table
from logicfuzz.report import load_run
from logicfuzz.results import crash_cell, crash_outcome, result_record, summarize


def _run(version: int, lines: float) -> dict[str, Any]:
    return {"version": version, "usable": True, "crashed": False, "target_hits": 9,
            "coverage": {"lines": {"covered": int(lines * 10), "count": 1000, "percent": lines}}}


def _build(version: int) -> dict[str, Any]:
    return {"version": version, "ok": True, "fuzz_binary": f"/run/t/v{version}/harness"}


UAF = {"kind": "heap-use-after-free", "signature": "heap-use-after-free@item_free<list_free",
       "summary": "READ of size 8", "reproducer": "/run/t/v3/run/artifacts/crash-1"}


def reverted_misuse() -> dict[str, Any]:
    """v2 was best; the improvement v3 crashed, was judged harness misuse and reverted to v2."""
    best = {"version": 2, "code": "/* v2 */", "build": _build(2), "run": _run(2, 41.0)}
    return {"best": best, "harness_version": 2, "harness_code": "/* v2 */", "build": _build(2),
            "run": _run(2, 41.0), "crash": {**UAF, "version": 3},
            "crash_analysis": {"version": 3, "verdict": "harness_misuse", "feasible": False}}


def library_bug() -> dict[str, Any]:
    """v2 crashed inside the library and was judged a library bug: the run stopped on it."""
    crashed = {**_run(2, 30.0), "usable": False, "crashed": True}
    return {"best": {"version": 1, "code": "/* v1 */", "build": _build(1), "run": _run(1, 30.0)},
            "harness_version": 2, "build": _build(2), "run": crashed,
            "crash": {**UAF, "kind": "heap-buffer-overflow", "version": 2},
            "crash_analysis": {"version": 2, "verdict": "library_bug", "feasible": True}}


def test_a_misuse_crash_of_a_reverted_version_is_a_repair_not_the_targets_crash() -> None:
    record = result_record(reverted_misuse(), "lib", "list_parse", 1.0)
    assert record["crashes"] is False and record["runs"] is True
    assert record["crash"]["outcome"] == "repaired"
    assert (record["crash"]["version"], record["crash"]["final_version"]) == (3, 2)
    assert "fuzz_binary" not in record["crash"]  # v3's binary is not the one the run kept
    assert crash_cell(record) == "none; v3 heap-use-after-free was harness misuse, repaired"


def test_a_library_bug_is_the_targets_crash_with_its_binary() -> None:
    record = result_record(library_bug(), "lib", "list_parse", 1.0)
    assert record["crashes"] is True and record["crash"]["outcome"] == "library_bug"
    assert record["crash"]["fuzz_binary"] == "/run/t/v2/harness"
    assert crash_cell(record) == "heap-buffer-overflow (library bug)"


def test_crashing_counts_library_bugs_only() -> None:
    misuse = [result_record(reverted_misuse(), "lib", f"f{i}", 1.0) for i in range(7)]
    summary = summarize([*misuse, result_record(library_bug(), "lib", "g", 1.0)])
    assert summary["crashing"] == 1 and summary["crashes_repaired"] == 7
    assert summarize(misuse)["crashing"] == 0


def test_a_misuse_crash_the_kept_harness_still_has_and_an_unjudged_crash_are_not_counted() -> None:
    state = reverted_misuse()
    state.update(best={}, harness_version=3, build=_build(3),
                 run={**_run(3, 10.0), "usable": False, "crashed": True})
    stuck = result_record(state, "lib", "f", 1.0)
    assert stuck["crash"]["outcome"] == "misuse" and stuck["crashes"] is False
    state["crash_analysis"] = {"version": 1, "verdict": "library_bug", "feasible": True}  # an older crash's
    unjudged = result_record(state, "lib", "f", 1.0)
    assert unjudged["crash"]["outcome"] == "unclear" and unjudged["crash"]["verdict"] is None
    assert summarize([stuck, unjudged])["crashing"] == 0


def test_a_verdict_its_feasibility_contradicts_is_unclear() -> None:
    state = library_bug()
    state["crash_analysis"] = {"version": 2, "verdict": "harness_misuse", "feasible": True}
    assert result_record(state, "lib", "f", 1.0)["crash"]["outcome"] == "unclear"


def test_records_written_before_outcomes_existed_are_read_from_their_verdict(tmp_path: Path) -> None:
    # What earlier versions wrote for the quick start: crashes true for a reverted misuse crash.
    old = {"project": "lib", "function": "f", "compiles": True, "runs": True, "crashes": True,
           "crash": {**UAF, "verdict": "harness_misuse", "feasible": False}}
    assert crash_outcome(old) == "repaired"
    (tmp_path / "summary.json").write_text(json.dumps({"project": "lib", "results": [old]}))
    data = load_run(tmp_path)
    assert data.targets[0].status == "runs" and data.totals()["crashing"] == 0
    assert data.totals()["repaired"] == 1


def test_the_cli_table_says_repaired(tmp_path: Path) -> None:
    from rich.console import Console

    summary = {"project": "lib", "run_dir": str(tmp_path),
               **summarize([result_record(reverted_misuse(), "lib", "list_parse", 1.0)])}
    console = Console(width=300, record=True)
    console.print(summary_table(summary))
    text = console.export_text()
    assert "none; v3 heap-use-after-free was harness misuse, repaired" in text
    assert "crashing (library bugs): 0; harness-misuse crashes repaired: 1; findings: 0" in text
