"""bench/memory_ab.py: a cross-library transfer is an item with an action applied on another library.

An item without an action counts as used when a reply cites it; that shows nothing across
libraries, so it is never listed as a transfer.
"""

from __future__ import annotations

import json
from pathlib import Path

from bench.memory_ab import failure_trace, transfers


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
