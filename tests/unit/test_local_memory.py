"""Local memory: metric branch, extraction prompt values, direction replacement, rendering, tabu."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from agent_graph.memory.local_memory import (
    branch_for,
    describe_approach,
    empty_local_memory,
    extraction_variables,
    failed_directions,
    harness_diff,
    is_tabu,
    metrics_delta,
    record_failed_attempt,
    render_local_memory,
    set_global_status,
)
from agent_graph.memory.local_memory_schema import same_direction
from agent_graph.memory.session_memory import HEADERS
from agents.local_memory_extractor import fold_reply
from long_term_memory.directions_facts import DirectionsFacts, read_directions
from prompts import placeholders, render

OLD = """#include <stdint.h>
#include "cJSON.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cJSON *json = cJSON_ParseWithLength((const char *)data, size);
  cJSON_Delete(json);
  return 0;
}
"""
NEW = OLD.replace("  cJSON_Delete(json);",
                  "  char *out = cJSON_Print(json);\n  cJSON_free(out);\n  cJSON_Delete(json);")


def memory_with(*rows: tuple[str, str, str]) -> dict[str, Any]:
    mem = empty_local_memory()
    mem["attempted_directions"] = [
        {"direction": d, "outcome": o, "source_ref": ref, "evidence": f"evidence of {ref}"}
        for d, o, ref in rows]
    return mem


def reply(payload: Any) -> str:
    return "Here is the update.\n```json\n" + json.dumps(payload) + "\n```\n"


@pytest.mark.parametrize(("old", "new", "noise", "branch"), [
    (30.0, 32.5, 1.0, "success"),
    (30.0, 31.0, 1.0, "success"),     # a gain of exactly the noise counts
    (30.0, 30.9, 1.0, "noise"),
    (30.0, 30.0, 1.0, "noise"),
    (30.0, 29.2, 1.0, "noise"),
    (30.0, 29.0, 1.0, "failure"),
    (30.0, 12.0, 1.0, "failure"),
    (30.0, 30.01, 0.0, "success"),    # seed rule without noise: perf_diff > 0 succeeds
    (30.0, 30.0, 0.0, "failure"),     # ... and perf_diff <= 0 fails
    (30.0, 32.0, 2.5, "noise"),
])
def test_branch_for(old: float, new: float, noise: float, branch: str) -> None:
    assert branch_for(old, new, noise) == branch


def test_branch_for_rejects_negative_noise() -> None:
    with pytest.raises(ValueError, match="noise must be >= 0"):
        branch_for(1.0, 2.0, -0.5)


def variables(memory: dict[str, Any], old_cov: float, new_cov: float) -> dict[str, str]:
    return extraction_variables(
        memory, target="cJSON * cJSON_ParseWithLength(const char * value, size_t buffer_length);",
        archetype="stateless_parser", old_code=OLD, new_code=NEW, old_coverage=old_cov,
        new_coverage=new_cov, noise=1.0, change=["call cJSON_Print on the parsed tree"],
        operator="improve", source_ref="v3", parent_ref="v2", iteration=2)


@pytest.mark.parametrize(("new_cov", "verdict"), [
    (33.5, "Outcome: SUCCESS"), (30.4, "Outcome: NOISE"), (27.0, "Outcome: FAILURE")])
def test_extraction_prompt_carries_diff_metrics_branch_and_directions(new_cov: float,
                                                                      verdict: str) -> None:
    mem = memory_with(("derive options from the first byte", "Noise", "v2"))
    values = variables(mem, 30.0, new_cov)
    assert set(values) == placeholders("local_memory_extraction")
    system, user = render("local_memory_extraction", values)
    assert system.startswith("ROLE: local_memory_extractor")
    assert verdict in user
    assert "- Old line coverage (v2): 30.00%" in user
    assert f"- New line coverage (v3): {new_cov:.2f}%" in user
    assert "+  char *out = cJSON_Print(json);" in user
    assert "-  cJSON_Delete(json);" not in user  # unchanged line: context, not removed
    assert "- call cJSON_Print on the parsed tree" in user
    assert json.loads(values["current_directions"]) == mem["attempted_directions"]
    assert "stateless_parser" in values["problem"]


def test_harness_diff_marks_no_change_and_cuts_long_diffs() -> None:
    assert harness_diff(OLD, OLD) == "(no code change)"
    long_new = OLD + "".join(f"int g{i};\n" for i in range(300))
    diff = harness_diff(OLD, long_new, max_lines=50)
    assert len(diff.splitlines()) == 51
    assert diff.endswith("more diff lines not shown)")


def test_updated_directions_replace_the_list_whole() -> None:
    mem = memory_with(("call cJSON_Minify on a copy", "Failed", "v1"),
                      ("derive options from the first byte", "Noise", "v2"),
                      ("call cJSON_Print", "Success", "v2"))
    before = copy.deepcopy(mem)
    new_rows = [{"direction": "call cJSON_Print on the parsed tree", "outcome": "success",
                 "source_ref": 3, "evidence": "30.00% -> 33.50%"},
                {"direction": "call cJSON_Minify on a copy", "outcome": "Failed",
                 "source_ref": "v1", "evidence": "lost 2 points"}]
    out, why = fold_reply(mem, reply({"updated_directions": new_rows,
                                            "new_memory_item": None}))
    assert out["attempted_directions"] == [
        {"direction": "call cJSON_Print on the parsed tree", "outcome": "Success",
         "source_ref": "3", "evidence": "30.00% -> 33.50%"},
        {"direction": "call cJSON_Minify on a copy", "outcome": "Failed", "source_ref": "v1",
         "evidence": "lost 2 points"}]
    assert out["reasoning_bank"] == []
    assert why == "directions 3 -> 2 (1 failed); no new lesson"
    assert mem == before  # pure


def test_new_item_is_appended_with_measured_refs_and_delta() -> None:
    mem = empty_local_memory()
    mem["reasoning_bank"] = [{"type": "Failure", "title": "old lesson", "description": "",
                              "content": "x", "related_operator": "fix", "source_ref": {},
                              "evidence": {}}]
    item = {"type": "success", "title": "Round-trip printing", "description": "Print the tree.",
            "content": "cJSON_Print walks every node type.", "related_operator": "improve",
            "source_ref": "v9", "evidence": {"code_change": "added cJSON_Print",
                                             "metrics_delta": "made up", "context": "parsers"}}
    rows = [{"direction": "call cJSON_Print", "outcome": "Success", "source_ref": "v3",
             "evidence": "+3.5"}]
    ref = {"iteration": 2, "harness_id": "v3", "parent_id": "v2"}
    out, why = fold_reply(mem, reply({"updated_directions": rows, "new_memory_item": item}),
                                source_ref=ref, metrics=metrics_delta(30.0, 33.5))
    assert len(out["reasoning_bank"]) == 2
    added = out["reasoning_bank"][-1]
    assert added["type"] == "Success"
    assert added["source_ref"] == ref
    assert added["evidence"] == {"code_change": "added cJSON_Print", "context": "parsers",
                                 "metrics_delta": "line coverage 30.00% -> 33.50% (+3.50 points)"}
    assert why.endswith("lesson added: Success 'Round-trip printing'")


def test_render_is_compact_markdown_without_json_keys() -> None:
    mem = memory_with(("call cJSON_PrintPreallocated with a fixed buffer", "Failed", "v2"),
                      ("call cJSON_Print on the parsed tree", "Success", "v3"))
    mem = set_global_status(mem, iteration=3, best_coverage=33.456, best_harness_id="v3",
                            current_approach=describe_approach(
                                "stateless_parser", ["cJSON_ParseWithLength", "cJSON_Print",
                                                     "cJSON_Print", "cJSON_Delete"]))
    mem["reasoning_bank"] = [{"type": "Success", "title": "Round-trip printing",
                              "description": "Print the parsed tree.", "content": "Covers print.c.",
                              "related_operator": "improve", "source_ref": {"harness_id": "v3"},
                              "evidence": {"code_change": "added cJSON_Print",
                                           "metrics_delta": "line coverage 30.00% -> 33.46%",
                                           "context": "the tree is valid"}}]
    text = render_local_memory(mem)
    assert text.splitlines()[:2] == [
        "### Progress",
        "Iteration 3; best line coverage 33.46% (harness v3); approach: stateless_parser: "
        "cJSON_ParseWithLength -> cJSON_Print -> cJSON_Delete"]
    assert ("- [Failed] call cJSON_PrintPreallocated with a fixed buffer (v2: evidence of v2)"
            in text.splitlines())
    assert "Do not propose a [Failed] direction again unless you state new evidence" in text
    assert ("- [Success] Round-trip printing: Print the parsed tree. Covers print.c. (added "
            "cJSON_Print; line coverage 30.00% -> 33.46%; applies when the tree is valid; by "
            "improve)") in text
    for key in ("global_status", "attempted_directions", "reasoning_bank", "source_ref",
                "related_operator", "code_change", "metrics_delta", "best_harness_id",
                "recorded_version", "current_approach", '"', "{", "}"):
        assert key not in text, key
    assert not any(header in text for header in HEADERS.values())


def test_render_empty_and_new_evidence() -> None:
    assert render_local_memory(None) == "(none yet)"
    assert render_local_memory(empty_local_memory()) == "(none yet)"
    text = render_local_memory(empty_local_memory(), new_evidence=["", " buffer needs 5 bytes "])
    lines, _, block = text.partition("\n\n```yaml\n# facts: directions v1\n")
    assert lines == "### New evidence\n- buffer needs 5 bytes"
    assert read_directions(text) == [DirectionsFacts(new_evidence=["buffer needs 5 bytes"])]
    assert render_local_memory(empty_local_memory(), ["buffer needs 5 bytes"], facts=False) == lines


@pytest.mark.parametrize(("a", "b", "same"), [
    ("call cJSON_Print on the parsed tree", "print the parsed tree with cJSON_Print", True),
    ("call cJSON_Print on the parsed tree", "call cJSON_PrintUnformatted on the parsed tree", False),
    ("call cJSON_PrintBuffered with a fixed buffer",
     "call cJSON_PrintBuffered with a prebuffer size taken from the input", False),
    ("derive parse options from the first input byte",
     "derive the parse options from the first byte of the input", True),
    ("derive parse options from the first input byte", "split the input into two documents", False),
])
def test_same_direction(a: str, b: str, same: bool) -> None:
    assert same_direction(a, b) is same
    assert same_direction(b, a) is same


def test_tabu_rule() -> None:
    mem = memory_with(("call cJSON_PrintPreallocated with a fixed buffer", "Failed", "v2"),
                      ("derive options from the first input byte", "Noise", "v3"),
                      ("call cJSON_Print on the parsed tree", "Success", "v4"))
    mem["attempted_directions"][0]["evidence"] = "crashed: stack-buffer-overflow in print"
    assert failed_directions(mem) == ["call cJSON_PrintPreallocated with a fixed buffer"]
    retry = "use cJSON_PrintPreallocated with a fixed buffer again"
    assert is_tabu(retry, mem)
    assert is_tabu(retry, mem, new_evidence="   ")
    assert is_tabu(retry, mem, new_evidence="Stack-buffer-overflow in print")  # nothing new
    assert not is_tabu(retry, mem, new_evidence="the buffer now gets length + 5 bytes")
    assert not is_tabu("call cJSON_Print on the parsed tree", mem)
    assert not is_tabu("derive options from the first input byte", mem)
    assert not is_tabu("call cJSON_Minify on a copy", mem)


def test_record_failed_attempt_updates_the_same_direction() -> None:
    mem = memory_with(("call cJSON_Minify on a copy", "Noise", "v2"))
    out = record_failed_attempt(mem, "minify a copy with cJSON_Minify", "did not compile", "v5")
    assert out["attempted_directions"] == [
        {"direction": "call cJSON_Minify on a copy", "outcome": "Failed", "source_ref": "v5",
         "evidence": "did not compile"}]
    out = record_failed_attempt(out, "call cJSON_Compare on a duplicate", "crashed", "v6")
    assert [d["direction"] for d in out["attempted_directions"]] == [
        "call cJSON_Minify on a copy", "call cJSON_Compare on a duplicate"]
    assert mem["attempted_directions"][0]["outcome"] == "Noise"


def test_set_global_status_keeps_approach_unless_given() -> None:
    mem = set_global_status(None, iteration=1, best_coverage=25.0, best_harness_id="v1",
                            current_approach="stateless_parser: cJSON_Parse")
    mem = set_global_status(mem, iteration=2, best_coverage=31.0, best_harness_id="v2")
    assert mem["global_status"] == {"iteration": 2, "best_coverage": 31.0, "best_harness_id": "v2",
                                    "current_approach": "stateless_parser: cJSON_Parse"}
    assert set(mem) == {"global_status", "attempted_directions", "reasoning_bank",
                        "recorded_version"}
    many = [f"f{i}" for i in range(10)]
    assert describe_approach("x", many, limit=3) == "x: f0 -> f1 -> f2 -> ..."
    assert describe_approach("x", []) == "x"


def test_gain_noise_is_a_share_of_what_the_best_harness_covers() -> None:
    from agent_graph.context import Context
    from nodes.memory_manager import gain_noise

    ctx = Context()
    assert gain_noise(ctx, 60.0) == 1.0  # high coverage: the absolute points
    assert gain_noise(ctx, 5.94) == pytest.approx(0.4752)  # 8% of a few-percent harness
    assert gain_noise(ctx, 0.5) == 0.1  # never below a tenth of the points
    # +0.51 points on a harness covering 5.94% of a large library (hundreds of lines) is a gain;
    # +0.41 on one covering 29.3% is not.
    assert branch_for(5.94, 6.45, gain_noise(ctx, 5.94)) == "success"
    assert branch_for(29.3, 29.71, gain_noise(ctx, 29.3)) == "noise"
    assert gain_noise(Context(min_gain_share=1.0), 5.94) == 1.0
