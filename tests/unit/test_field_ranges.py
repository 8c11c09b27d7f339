"""Reading the values a header documents for a struct field (fuzzkit.field_ranges).

The comments are written in the styles C headers use; none is from a library this project is
measured on.
"""

from __future__ import annotations

import pytest

from agents.offline.type_table import read_types
from fuzzkit.field_ranges import documented_range
from fuzzkit.header_facts import HeaderFacts, Record
from tests.types_text import render_types


@pytest.mark.parametrize(("comment", "expected"), [
    ("// compression level, in [1..9]", (1, 9)),
    ("// range: [0 = none .. 12 = most]", (0, 12)),
    ("/**< between 0 and 100 */", (0, 100)),
    ("// Between 1 (fastest) and 22 (smallest).", (1, 22)),
    ("// strategy (0=default, 1=filtered, 3=rle)", (0, 3)),
    ("// dictionary mode:\n//   0: none, 1: shared, 2: private", (0, 2)),
    ("/** if true, verify the output */", (0, 1)),
    ("// from 8 to 15", (8, 15)),
])
def test_a_documented_range_is_read(comment: str, expected: tuple[int, int]) -> None:
    assert documented_range(comment) == expected


@pytest.mark.parametrize("comment", [
    "// if non-zero, the size in bytes to aim for",  # a magnitude, not a flag
    "/** format version 1.2.3 */",
    "// must be zero",
    "// 7 bits per symbol",
    "",
])
def test_no_range_is_made_up(comment: str) -> None:
    assert documented_range(comment) is None


def test_the_types_section_carries_the_range_to_the_offline_model() -> None:
    facts = HeaderFacts(records=[Record("struct", "cz_config", ("cz_config",),
                                        (("level", "int"), ("name", "const char *"), ("ratio", "float")),
                                        False, (("level", 1, 9), ("ratio", 0, 100)))])
    text = facts.render()
    assert "  ranges:\n    level: [1, 9]\n    ratio: [0, 100]" in text
    record = read_types(render_types(text)).record("cz_config")
    assert record is not None and record.ranges == (("level", 1, 9), ("ratio", 0, 100))
    assert [f[0] for f in record.fields] == ["level", "name", "ratio"]
    again = HeaderFacts.from_dict(facts.to_dict())
    assert again.records == facts.records
