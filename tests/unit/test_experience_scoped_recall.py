"""Recall by scope: an actionable lesson reaches a target its scope fits, whatever its wording.

A lesson learned on one library is worded after that library; similarity search alone would
not bring it to another library's function of the same shape. The bank recalls it by scope,
leaves out what does not fit, and keeps up with items added after its first scan.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.offline.cdecl import parse_prototype
from long_term_memory.experience import Gatekeeper
from long_term_memory.experience.models import MemoryItem
from tests.unit.test_experience_support import open_bank, record

DECODE = parse_prototype("uint8_t *ww_decode(const uint8_t *data, size_t size, int *width);")
COUNT = parse_prototype("int ww_count(const uint8_t *data, size_t size);")
QUERY = "project ww; target uint8_t *ww_decode(const uint8_t *data, size_t size, int *width)"


def release_lesson(n: int = 0) -> MemoryItem:
    return MemoryItem(
        title=f"Release uint8_t results with vv_drop ({n})",
        description="Functions that hand back a uint8_t as a returned `uint8_t *` the caller owns.",
        # distinct words per lesson, so that the bank keeps each (near-duplicates are merged)
        content="vv_pixels_rgb hands back a buffer the harness owns; release it with vv_drop. "
                + " ".join(f"w{n}x{i}" for i in range(40)),
        scope={"shape": "returns_pointer", "type": "uint8_t"},
        failure="sanitizer:leak@vv_pixels_rgb",
        action="release_out_param(type=uint8_t, releaser=vv_drop)",
    )


def test_a_fitting_lesson_is_recalled_by_scope_where_similarity_misses_it(tmp_path: Path) -> None:
    bank = open_bank(tmp_path)
    [lesson_id] = bank.add_record(record("rec-0", "vv/vv_pixels_rgb", [release_lesson()])).added
    plain = MemoryItem(title="Keep the dictionary small", description="dictionary builders",
                       content="Cap the dictionary at 64 entries.")
    bank.add_record(record("rec-1", "vv/vv_dict", [plain]))
    assert bank.search(QUERY, exclude_task_id="ww/ww_decode", threshold=0.99) == []
    found = bank.search(QUERY, exclude_task_id="ww/ww_decode", threshold=0.99, target=DECODE)
    assert [m.item_id for m in found] == [lesson_id] and found[0].score == 0.99
    assert found[0].lesson["action"] == "release_out_param(type=uint8_t, releaser=vv_drop)"
    assert bank.search(QUERY, exclude_task_id="ww/ww_count", threshold=0.99, target=COUNT) == []
    assert bank.search(QUERY, exclude_task_id="vv/vv_pixels_rgb", threshold=0.99, target=DECODE) == []
    bank.close()


def test_recall_by_scope_keeps_up_with_new_items_and_with_a_reopened_bank(tmp_path: Path) -> None:
    bank = open_bank(tmp_path)
    first = bank.add_record(record("rec-0", "vv/a", [release_lesson(0)])).added
    assert len(bank.search(QUERY, exclude_task_id=None, threshold=0.99, target=DECODE)) == 1
    later = bank.add_record(record("rec-1", "vv/b", [release_lesson(1)])).added
    found = bank.search(QUERY, exclude_task_id=None, threshold=0.99, target=DECODE)
    assert [m.item_id for m in found] == first + later
    assert len(bank.search(QUERY, exclude_task_id=None, threshold=0.99, k=1, target=DECODE)) == 1
    bank.close()
    for n in range(2, 70):  # more than one pass reads row by row
        writer = open_bank(tmp_path)
        writer.add_record(record(f"rec-{n}", f"vv/f{n}", [release_lesson(n)]))
        writer.close()
    reopened = open_bank(tmp_path, read_only=True)
    assert len(reopened.search(QUERY, exclude_task_id=None, threshold=0.99, k=200, target=DECODE)) == 70
    reopened.close()


def test_a_release_lesson_is_recalled_for_a_harness_that_calls_a_function_it_fits(tmp_path: Path) -> None:
    bank = open_bank(tmp_path)
    [lesson_id] = bank.add_record(record("rec-0", "vv/vv_pixels_rgb", [release_lesson()])).added
    query = "project ww; target int ww_count(const uint8_t *data, size_t size)"
    assert bank.search(query, exclude_task_id="ww/ww_count", threshold=0.99, target=COUNT) == []
    found = bank.search(query, exclude_task_id="ww/ww_count", threshold=0.99, target=COUNT, callees=[DECODE])
    assert [m.item_id for m in found] == [lesson_id]
    assert Gatekeeper().screen(found, COUNT)[0] == []
    assert [i.item_id for i in Gatekeeper().screen(found, COUNT, [DECODE])[0]] == [lesson_id]
    bank.close()


def test_a_record_missing_mid_read_skips_recall_by_scope_once(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    bank = open_bank(tmp_path)
    [lesson_id] = bank.add_record(record("rec-0", "vv/vv_pixels_rgb", [release_lesson()])).added
    real = bank._view.entry

    def gone(row: int) -> None:  # what the view raises when the JSONL changed behind it
        raise KeyError(f"row {row} is not in its record")

    monkeypatch.setattr(bank._view, "entry", gone)
    assert bank.search(QUERY, exclude_task_id=None, threshold=0.99, target=DECODE) == []
    assert any(n.get("action", "").startswith("recall by scope skipped") for n in bank.notices)
    monkeypatch.setattr(bank._view, "entry", real)
    found = bank.search(QUERY, exclude_task_id=None, threshold=0.99, target=DECODE)
    assert [m.item_id for m in found] == [lesson_id]
    bank.close()
