import copy
import itertools
import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from agent_graph.memory.session_consolidate import consolidate_session_memory
from agent_graph.memory.session_memory import (
    CATEGORIES,
    HEADERS,
    add_api_constraint,
    add_coverage_strategy,
    add_decision,
    add_known_fix,
    empty_session_memory,
    format_session_memory,
    memory_size_tokens,
    set_archetype,
)
from agent_graph.memory.tokens import count_text_tokens

T0 = datetime(2024, 1, 1, 12, 0, 0, tzinfo=UTC)


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def rich_memory() -> dict[str, Any]:
    m = empty_session_memory()
    m = add_api_constraint(m, "Call cJSON_Delete on every parsed object", "HIGH", now=at(0))
    m = add_api_constraint(m, "input need not be NUL-terminated with ParseWithLength", "LOW",
                           now=at(1))
    m = set_archetype(m, "stateless_parser", "HIGH", "one call parses a buffer", now=at(2))
    m = add_known_fix(m, "Add #include <stdlib.h> for malloc", True, "HIGH",
                      error_signature="implicit declaration of 'malloc'", now=at(3))
    m = add_known_fix(m, "cast data to const char *", False, "LOW", now=at(4))
    m = add_decision(m, "route:enhancer", "compile error in harness.c", now=at(5))
    m = add_decision(m, "route:coverage_analyzer", "coverage 12% below goal", now=at(6))
    m = add_coverage_strategy(m, "feed nested arrays to reach parse_array", "MEDIUM",
                              target_functions=["cJSON_Parse", "parse_array"], now=at(7))
    return m


# --- shape and helpers -----------------------------------------------------------------------

def test_empty_memory_has_every_category_and_is_json() -> None:
    m = empty_session_memory()
    assert set(m) == set(CATEGORIES)
    assert m["archetype"] == {} and all(m[c] == [] for c in CATEGORIES if c != "archetype")
    assert json.loads(json.dumps(rich_memory())) == rich_memory()


def test_add_api_constraint_entry_and_purity() -> None:
    before = empty_session_memory()
    after = add_api_constraint(before, "  init() before decode()  ", "high", now=T0)
    assert before == empty_session_memory()
    assert after["api_constraints"] == [{
        "type": "api_constraint", "content": "init() before decode()", "confidence": "HIGH",
        "source": "function_analyzer", "timestamp": "2024-01-01T12:00:00+00:00",
    }]


def test_set_archetype_replaces_and_keeps_input() -> None:
    first = set_archetype(None, "object_lifecycle", "MEDIUM", "create/use/destroy", now=T0)
    second = set_archetype(first, "stateless_parser", "HIGH", "single parse call",
                           source="prototyper", now=at(1))
    assert first["archetype"]["identified_archetype"] == "object_lifecycle"
    assert second["archetype"] == {
        "identified_archetype": "stateless_parser", "confidence": "HIGH",
        "reasoning": "single parse call", "source": "prototyper",
        "timestamp": "2024-01-01T12:01:00+00:00",
    }


def test_add_known_fix_entry() -> None:
    m = add_known_fix({}, "add NULL check after cJSON_Parse", success=True, confidence="LOW",
                      error_signature="SEGV in cJSON_GetObjectItem", now=T0)
    assert m["known_fixes"] == [{
        "type": "known_fix", "content": "add NULL check after cJSON_Parse", "confidence": "LOW",
        "source": "enhancer", "timestamp": "2024-01-01T12:00:00+00:00", "success": True,
        "error_signature": "SEGV in cJSON_GetObjectItem",
    }]


def test_add_decision_entry() -> None:
    m = add_decision(None, "route:enhancer", "compile error", now=T0)
    assert m["decisions"] == [{
        "type": "decision", "decision_type": "route:enhancer", "content": "compile error",
        "confidence": "HIGH", "source": "supervisor", "timestamp": "2024-01-01T12:00:00+00:00",
    }]


def test_add_coverage_strategy_entry() -> None:
    targets = ["parse_number"]
    m = add_coverage_strategy({}, "boundary numbers", target_functions=targets, now=T0)
    targets.append("mutated later")
    assert m["coverage_strategies"] == [{
        "type": "coverage_strategy", "content": "boundary numbers", "confidence": "MEDIUM",
        "source": "coverage_analyzer", "timestamp": "2024-01-01T12:00:00+00:00",
        "target_functions": ["parse_number"],
    }]


def test_helpers_never_mutate_their_input() -> None:
    base = rich_memory()
    snapshot = copy.deepcopy(base)
    results = [
        add_api_constraint(base, "x", now=T0),
        set_archetype(base, "round_trip", "LOW", "r", now=T0),
        add_known_fix(base, "y", False, now=T0),
        add_decision(base, "route:end", "done", now=T0),
        add_coverage_strategy(base, "z", now=T0),
        consolidate_session_memory(base),
    ]
    assert base == snapshot
    for result in results:
        result["coverage_strategies"][0]["target_functions"].append("changed")
        result["archetype"]["reasoning"] = "changed"
        result["decisions"].clear()
    assert base == snapshot


def test_timestamps_default_to_utc_now_and_naive_means_utc() -> None:
    stamp = add_decision({}, "d", "r")["decisions"][0]["timestamp"]
    assert abs(datetime.fromisoformat(stamp) - datetime.now(UTC)) < timedelta(seconds=5)
    naive = add_decision({}, "d", "r", now=datetime(2024, 5, 1, 8, 30))
    assert naive["decisions"][0]["timestamp"] == "2024-05-01T08:30:00+00:00"
    plus2 = add_decision({}, "d", "r", now=datetime(2024, 5, 1, 10, 30,
                                                    tzinfo=timezone(timedelta(hours=2))))
    assert plus2["decisions"][0]["timestamp"] == "2024-05-01T08:30:00+00:00"


@pytest.mark.parametrize("bad", ["VERY HIGH", "", "certain", None])
def test_invalid_confidence_is_rejected(bad: Any) -> None:
    with pytest.raises(ValueError, match="confidence must be one of HIGH, MEDIUM, LOW"):
        add_api_constraint({}, "c", bad)
    with pytest.raises(ValueError, match="confidence must be one of"):
        set_archetype({}, "a", bad, "r")


def test_empty_content_is_rejected() -> None:
    with pytest.raises(ValueError, match="constraint must be a non-empty string"):
        add_api_constraint({}, "   ")
    with pytest.raises(ValueError, match="decision_type"):
        add_decision({}, "", "r")


# --- formatting ------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "wanted", [c for n in range(len(CATEGORIES) + 1) for c in itertools.combinations(CATEGORIES, n)]
)
def test_format_shows_exactly_the_requested_categories(wanted: tuple[str, ...]) -> None:
    text = format_session_memory(rich_memory(), wanted)
    for cat in CATEGORIES:
        assert (HEADERS[cat] in text) == (cat in wanted)
    assert (text == "") == (not wanted)
    if wanted:
        assert text.startswith("## Session memory\n")
        positions = [text.index(HEADERS[c]) for c in CATEGORIES if c in wanted]
        assert positions == sorted(positions)
        assert format_session_memory(rich_memory(), reversed(wanted)) == text


def test_format_golden() -> None:
    expected = """## Session memory

### API constraints
- [HIGH] Call cJSON_Delete on every parsed object
- [LOW] input need not be NUL-terminated with ParseWithLength

### Archetype
- [HIGH] stateless_parser: one call parses a buffer

### Known fixes
- [HIGH] worked: Add #include <stdlib.h> for malloc (error: implicit declaration of 'malloc')
- [LOW] failed: cast data to const char *

### Decisions
- [HIGH] route:coverage_analyzer: coverage 12% below goal
- [HIGH] route:enhancer: compile error in harness.c

### Coverage strategies
- [MEDIUM] feed nested arrays to reach parse_array (targets: cJSON_Parse, parse_array)
"""
    assert format_session_memory(rich_memory(), CATEGORIES) == expected


def test_format_skips_empty_categories_and_orders_entries() -> None:
    m = add_api_constraint({}, "old low", "LOW", now=at(0))
    m = add_api_constraint(m, "old high", "HIGH", now=at(1))
    m = add_api_constraint(m, "new high", "HIGH", now=at(2))
    m = add_api_constraint(m, "multi\n  line\tcontent", "MEDIUM", now=at(3))
    text = format_session_memory(m, ["api_constraints", "known_fixes", "archetype"])
    assert text == (
        "## Session memory\n\n### API constraints\n- [HIGH] new high\n- [HIGH] old high\n"
        "- [MEDIUM] multi line content\n- [LOW] old low\n"
    )
    assert format_session_memory(empty_session_memory(), CATEGORIES) == ""
    assert format_session_memory(None, ["decisions"]) == ""


def test_format_rejects_unknown_category() -> None:
    with pytest.raises(ValueError, match="unknown session memory categories"):
        format_session_memory(rich_memory(), ["api_constraint"])


# --- consolidation ---------------------------------------------------------------------------

def test_consolidate_dedupes_normalized_content() -> None:
    m = add_api_constraint({}, "Call init() before decode().", "LOW", now=at(0))
    m = add_api_constraint(m, "call   INIT before decode", "MEDIUM", now=at(5))
    m = add_api_constraint(m, "free the parser", "LOW", now=at(1))
    c = consolidate_session_memory(m)
    merged = {e["content"]: e for e in c["api_constraints"]}
    assert set(merged) == {"call   INIT before decode", "free the parser"}
    init = merged["call   INIT before decode"]
    assert (init["count"], init["confidence"], init["timestamp"]) == (
        2, "MEDIUM", "2024-01-01T12:05:00+00:00")
    assert [e["content"] for e in c["api_constraints"]] == [
        "free the parser", "call   INIT before decode"]  # chronological


@pytest.mark.parametrize(
    ("records", "expected"),
    [
        ([("LOW", "a")], "LOW"),
        ([("LOW", "a"), ("LOW", "a")], "LOW"),
        ([("LOW", "a"), ("LOW", "a"), ("LOW", "a")], "MEDIUM"),
        ([("LOW", "a"), ("LOW", "b")], "MEDIUM"),
        ([("MEDIUM", "a"), ("LOW", "b")], "HIGH"),
        ([("HIGH", "a"), ("HIGH", "b"), ("HIGH", "c")], "HIGH"),
        ([("LOW", "a"), ("HIGH", "a")], "HIGH"),
    ],
)
def test_consolidate_confidence_merge(records: list[tuple[str, str]], expected: str) -> None:
    m: dict[str, Any] = {}
    for i, (conf, source) in enumerate(records):
        m = add_api_constraint(m, "Check the return value", conf, source=source, now=at(i))
    (entry,) = consolidate_session_memory(m)["api_constraints"]
    assert entry["confidence"] == expected
    assert entry["count"] == len(records)
    assert entry["sources"] == sorted({s for _, s in records})


def test_bump_is_one_step_across_repeated_consolidations() -> None:
    m: dict[str, Any] = {}
    for i in range(3):
        m = add_api_constraint(m, "fact", "LOW", now=at(i))
    once = consolidate_session_memory(m)
    again = consolidate_session_memory(add_api_constraint(once, "FACT!", "LOW", now=at(9)))
    (entry,) = again["api_constraints"]
    assert (entry["confidence"], entry["recorded_confidence"], entry["count"]) == (
        "MEDIUM", "LOW", 4)


def test_successful_fix_beats_failed_one() -> None:
    m = add_known_fix({}, "Add a NULL check", True, "LOW", now=at(0))
    m = add_known_fix(m, "add a null check", False, "HIGH", source="crash_analyzer",
                      error_signature="SEGV", now=at(5))
    (entry,) = consolidate_session_memory(m)["known_fixes"]
    assert entry["success"] is True
    assert entry["content"] == "Add a NULL check"
    assert entry["error_signature"] == "SEGV"
    assert entry["timestamp"] == "2024-01-01T12:05:00+00:00"
    # the failed record (HIGH, another source) is no evidence that the fix works
    assert (entry["confidence"], entry["count"], entry["sources"]) == ("LOW", 1, ["enhancer"])
    m = add_known_fix(m, "ADD A NULL CHECK", True, "LOW", source="crash_analyzer", now=at(6))
    (entry,) = consolidate_session_memory(m)["known_fixes"]
    assert (entry["confidence"], entry["count"]) == ("MEDIUM", 2)
    assert entry["sources"] == ["crash_analyzer", "enhancer"]


def test_coverage_strategy_targets_are_united() -> None:
    m = add_coverage_strategy({}, "nested arrays", target_functions=["parse_array"], now=at(0))
    m = add_coverage_strategy(m, "Nested arrays.", target_functions=["parse_value",
                                                                     "parse_array"], now=at(1))
    (entry,) = consolidate_session_memory(m)["coverage_strategies"]
    assert entry["target_functions"] == ["parse_array", "parse_value"]


def test_cap_keeps_highest_confidence_then_newest() -> None:
    m: dict[str, Any] = {}
    confs = ["LOW", "HIGH", "MEDIUM", "LOW", "HIGH", "LOW"]
    for i, conf in enumerate(confs):
        m = add_api_constraint(m, f"constraint {i}", conf, now=at(i))
    kept = consolidate_session_memory(m, max_per_category=3)["api_constraints"]
    assert [e["content"] for e in kept] == ["constraint 1", "constraint 2", "constraint 4"]


def test_decisions_are_a_log_capped_to_the_newest() -> None:
    m: dict[str, Any] = {}
    for i in range(6):
        m = add_decision(m, "route:enhancer", "compile error", now=at(i))
    kept = consolidate_session_memory(m, max_per_category=4)["decisions"]
    assert [e["timestamp"] for e in kept] == [
        f"2024-01-01T12:0{i}:00+00:00" for i in range(2, 6)]
    assert all("count" not in e for e in kept)


def test_consolidate_is_idempotent_and_pure() -> None:
    m = rich_memory()
    for i in range(12):
        m = add_api_constraint(m, f"rule {i % 5}.", ["LOW", "MEDIUM", "HIGH"][i % 3],
                               source=f"agent{i % 2}", now=at(10 + i))
        m = add_known_fix(m, f"fix {i % 4}", i % 3 == 0, now=at(30 + i))
        m = add_decision(m, "route:x", f"reason {i}", now=at(50 + i))
    snapshot = copy.deepcopy(m)
    once = consolidate_session_memory(m, max_per_category=4)
    assert m == snapshot
    assert consolidate_session_memory(once, max_per_category=4) == once
    assert all(len(once[c]) <= 4 for c in CATEGORIES if c != "archetype")
    assert once["archetype"] == m["archetype"]
    assert json.loads(json.dumps(once)) == once


def test_consolidate_rejects_negative_cap() -> None:
    with pytest.raises(ValueError, match="max_per_category"):
        consolidate_session_memory(rich_memory(), max_per_category=-1)


def test_memory_size_tokens() -> None:
    assert memory_size_tokens(empty_session_memory()) == 0
    m = rich_memory()
    assert memory_size_tokens(m) == count_text_tokens(format_session_memory(m, CATEGORIES)) > 0
    bigger = add_api_constraint(m, "one more rule about buffer sizes", now=T0)
    assert memory_size_tokens(bigger) > memory_size_tokens(m)
