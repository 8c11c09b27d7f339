"""Malformed, truncated and hostile extraction replies leave the local memory exactly as it was."""

from __future__ import annotations

import copy
import json
import logging
from typing import Any

import pytest

from agent_graph.memory.local_memory import empty_local_memory
from agents.local_memory_extractor import fold_reply

ROW = {"direction": "call cJSON_Print on the parsed tree", "outcome": "Success",
       "source_ref": "v3", "evidence": "30.00% -> 33.50%"}
ITEM = {"type": "Success", "title": "Round-trip printing", "description": "Print the tree.",
        "content": "cJSON_Print walks every node type.", "related_operator": "improve",
        "evidence": {"code_change": "added cJSON_Print", "metrics_delta": "+3.5",
                     "context": "parsers"}}


def fenced(payload: Any) -> str:
    return "```json\n" + json.dumps(payload) + "\n```"


def with_item(**changes: Any) -> str:
    item = {**ITEM, **changes}
    return fenced({"updated_directions": [ROW], "new_memory_item": item})


MALFORMED = {
    "empty": ("", "the reply is empty"),
    "blank": ("  \n\t ", "the reply is empty"),
    "prose only": ("I think the change helped a little.", "no JSON object"),
    "json array fence": ("```json\n[]\n```", "no JSON object"),
    "json null": ("null", "no JSON object"),
    "object only inside a C fence": ("```c\n" + json.dumps({"updated_directions": [ROW]})
                                     + "\n```", "no JSON object"),
    "top-level list of directions": (json.dumps([ROW]), "updated_directions: Field required"),
    "misspelt key": (fenced({"updated_direction": [ROW]}), "updated_directions: Field required"),
    "directions as a string": (fenced({"updated_directions": "call cJSON_Print"}),
                               "updated_directions: Input should be a valid list"),
    "empty directions": (fenced({"updated_directions": []}),
                         "updated_directions: List should have at least 1 item"),
    "direction as a string": (fenced({"updated_directions": ["call cJSON_Print"]}),
                              "updated_directions.0: Input should be a valid dictionary"),
    "direction without text": (fenced({"updated_directions": [{"outcome": "Success"}]}),
                               "updated_directions.0.direction: Field required"),
    "blank direction": (fenced({"updated_directions": [{**ROW, "direction": "   "}]}),
                        "updated_directions.0.direction: String should have at least 1 character"),
    "unknown outcome": (fenced({"updated_directions": [{**ROW, "outcome": "Maybe"}]}),
                        "updated_directions.0.outcome: Value error, outcome must be one of"),
    "source_ref as an object": (fenced({"updated_directions": [{**ROW, "source_ref": {"v": 3}}]}),
                                "updated_directions.0.source_ref: Input should be a valid string"),
    "overlong direction": (fenced({"updated_directions": [{**ROW, "direction": "x" * 301}]}),
                           "updated_directions.0.direction: String should have at most 300"),
    "too many directions": (fenced({"updated_directions": [ROW] * 41}),
                            "updated_directions: List should have at most 40 items"),
    "truncated mid-direction": ('{"updated_directions": [{"direction": "call cJSON_Print", "outc',
                                "updated_directions.0.outcome: Field required"),
    "item as a string": (fenced({"updated_directions": [ROW], "new_memory_item": "printing helps"}),
                         "new_memory_item: Input should be a valid dictionary"),
    "item of unknown type": (with_item(type="Neutral"),
                             "new_memory_item.type: Value error, type must be one of"),
    "item without title": (fenced({"updated_directions": [ROW], "new_memory_item": {
        k: v for k, v in ITEM.items() if k != "title"}}), "new_memory_item.title: Field required"),
    "item with empty content": (with_item(content=""),
                                "new_memory_item.content: String should have at least 1 character"),
    "item evidence as a string": (with_item(evidence="added cJSON_Print"),
                                  "new_memory_item.evidence: Input should be a valid dictionary"),
    "item evidence field as a list": (with_item(evidence={"code_change": ["a", "b"]}),
                                      "new_memory_item.evidence.code_change: Input should be a "
                                      "valid string"),
}


def rich_memory() -> dict[str, Any]:
    mem = empty_local_memory()
    mem["global_status"].update(iteration=2, best_coverage=30.0, best_harness_id="v2")
    mem["attempted_directions"] = [{"direction": "call cJSON_Minify on a copy",
                                    "outcome": "Failed", "source_ref": "v1", "evidence": "-2"}]
    mem["reasoning_bank"] = [{**ITEM, "source_ref": {"harness_id": "v2"}}]
    mem["recorded_version"] = 2
    return mem


def test_there_are_at_least_fifteen_malformed_cases() -> None:
    assert len(MALFORMED) >= 15


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_reply_leaves_memory_unchanged(case: str,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    text, expected = MALFORMED[case]
    mem = rich_memory()
    snapshot = copy.deepcopy(mem)
    out, why = fold_reply(mem, text)
    assert out is mem
    assert mem == snapshot
    assert why.startswith("rejected: extraction reply unusable, local memory unchanged: ")
    assert expected in why
    # The reason is what the memory manager logs: it must stand on its own in a log line.
    logging.getLogger("logicfuzz.memory").warning(why)
    assert expected in caplog.text


def test_a_valid_reply_in_the_same_shape_is_accepted() -> None:
    """The cases above fail for the stated reason, not because the envelope is wrong."""
    out, why = fold_reply(rich_memory(), with_item())
    # the reply's rows, then the failed direction it left out (the tabu list survives it)
    assert out["attempted_directions"] == [ROW, rich_memory()["attempted_directions"][0]]
    assert "1 kept that the reply left out" in why
    assert len(out["reasoning_bank"]) == 2
    assert not why.startswith("rejected")
