"""bench/memory_ab.py: a cross-library transfer is an item with an action applied on another library.

An item without an action counts as used when a reply cites it; that shows nothing across
libraries, so it is never listed as a transfer.
"""

from __future__ import annotations

import json
from pathlib import Path

from benchkit.memory_ab import failure_trace, transfers


def test_only_an_item_with_an_action_used_on_another_library_is_a_transfer(tmp_path: Path) -> None:
    bank = tmp_path / "retrieve-extract" / "bank"
    bank.mkdir(parents=True)
    items = [{"item_id": "MEM-act", "title": "Release uint8_t results",
              "action": "release_out_param(type=uint8_t, releaser=vv_drop)"},
             {"item_id": "MEM-plain", "title": "stateless_parser harness: vv_parse"}]
    (bank / "fuzz-c.jsonl").write_text(json.dumps({"task_id": "vv/vv_pixels", "memory_items": items}) + "\n")
    elsewhere = {"project": "ww", "function": "ww_decode", "fix_rounds": 0, "runs": True}
    same = {"project": "vv", "function": "vv_other", "fix_rounds": 0, "runs": True}
    rows = {"retrieve-only": {"used_by": [(elsewhere, {"id": "MEM-act"}), (elsewhere, {"id": "MEM-plain"}),
                                          (same, {"id": "MEM-act"})]}}
    lines = transfers(rows, tmp_path)
    assert len(lines) == 1
    assert lines[0].startswith("- retrieve-only: [MEM-act] learned on vv/vv_pixels")
    assert "used on ww/ww_decode" in lines[0]


def _events(work: Path, *events: tuple[str, dict]) -> Path:
    work.mkdir(parents=True, exist_ok=True)
    (work / "events.jsonl").write_text("".join(json.dumps({"type": t, "data": d}) + "\n" for t, d in events))
    return work


def test_a_failure_is_resolved_when_a_later_version_runs_or_its_improvement_is_dropped(
        tmp_path: Path) -> None:
    leak = ("crash.triaged", {"kind": "leak", "signature": "leak@vv_alloc<vv_render"})
    misuse = ("crash.verdict", {"feasible": False})
    repaired = _events(tmp_path / "a", ("execution.done", {"crashed": True}), leak, misuse,
                       ("execution.done", {"crashed": False, "target_hits": 9}))
    dropped = _events(tmp_path / "b", ("execution.done", {"crashed": True}), leak, misuse,
                      ("iteration.reverted", {"version": 2}))
    stuck = _events(tmp_path / "c", ("execution.done", {"crashed": True}), leak, misuse,
                    ("execution.done", {"crashed": False, "target_hits": 0}))
    assert failure_trace(repaired) == (["crash:leak@vv_alloc"], 1, {"crash:leak@vv_alloc"})
    assert failure_trace(dropped)[2] == {"crash:leak@vv_alloc"}
    # never got past it: the target-not-reached run after it resolves nothing
    assert failure_trace(stuck) == (["crash:leak@vv_alloc", "target-not-reached"], 1, set())
    # a crash judged the library's bug is a finding, not a failure to repeat
    found = _events(tmp_path / "d", ("execution.done", {"crashed": True}), leak,
                    ("crash.verdict", {"feasible": True}))
    assert failure_trace(found) == ([], 0, set())


def test_each_librarys_rows_add_up_to_the_totals(tmp_path: Path, capsys: object) -> None:
    from benchkit.memory_ab import measure, print_per_library

    def lay_out(mode: str, lib: str, results: list[dict], union: float) -> None:
        out = tmp_path / mode / "runs" / lib
        out.mkdir(parents=True)
        (out / "summary.json").write_text(json.dumps(
            {"results": results, "union_coverage": {"lines": {"percent": union}}}))
        for r in results:
            _events(out / r["project"] / r["function"],
                    *[("crash.verdict", {"verdict": "harness_misuse"})] * r.pop("misuse", 0))

    ran = {"runs": True, "coverage": {"lines": {"percent": 5.0}}}
    lay_out("baseline", "vv", [{"project": "vv", "function": "a", "fix_rounds": 2, "misuse": 1, **ran},
                               {"project": "vv", "function": "b", "runs": False, "fix_rounds": 1}], 40.0)
    lay_out("baseline", "ww", [{"project": "ww", "function": "c", "fix_rounds": 0, "misuse": 2, **ran}], 10.0)
    row = measure([Path("vv.yaml"), Path("ww.yaml")], "baseline", tmp_path / "baseline")
    libs = [(x["library"], x["running"], x["fix_rounds"], x["crash_rounds"]) for x in row["per_library"]]
    assert libs == [("vv", 1, 3, 1), ("ww", 1, 0, 2)]
    assert (row["fix_rounds"], row["crash_rounds"], row["running"]) == (3, 3, 2)
    print_per_library({"baseline": row})
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert "| vv | baseline | 1/2 | 3 | 1 | 4 | 0 (0) | 40.0% |" in out
    assert "| ww | baseline | 1/1 | 0 | 2 | 2 | 0 (0) | 10.0% |" in out
