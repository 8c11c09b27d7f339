"""bench/memory_ab.py: a cross-library transfer is an item with an action applied on another library.

An item without an action counts as used when a reply cites it; that shows nothing across
libraries, so it is never listed as a transfer.
"""

from __future__ import annotations

import json
from pathlib import Path

from bench.memory_ab import transfers


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
