"""The offline model's extraction skill and tabu reading, on the prompts a real model receives."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from agent_graph.memory.local_memory import (
    empty_local_memory,
    render_local_memory,
)
from agents.coverage_analyzer import CoverageAnalyzer
from agents.enhancer import Enhancer
from agents.local_memory_extractor import LocalMemoryExtractor, fold_reply
from agents.offline.local_memory import diff_calls, extract, tabu_names
from agents.offline.prompt_reader import read_prompt
from fuzzkit.api import FunctionDecl, Param
from prompts import render

TARGET = FunctionDecl("cJSON_ParseWithLength", "cJSON *",
                      (Param("value", "const char *"), Param("buffer_length", "size_t")), "cJSON.h")
API = [TARGET,
       FunctionDecl("cJSON_Print", "char *", (Param("item", "const cJSON *"),), "cJSON.h"),
       FunctionDecl("cJSON_PrintPreallocated", "cJSON_bool",
                    (Param("item", "cJSON *"), Param("buffer", "char *"), Param("length", "const int"),
                     Param("format", "const cJSON_bool")), "cJSON.h"),
       FunctionDecl("cJSON_Minify", "void", (Param("json", "char *"),), "cJSON.h"),
       FunctionDecl("cJSON_Delete", "void", (Param("item", "cJSON *"),), "cJSON.h")]
BASE = """#include <stdint.h>
#include <stdlib.h>
#include "cJSON.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cJSON *json = cJSON_ParseWithLength((const char *)data, size);
  cJSON_Delete(json);
  return 0;
}
"""
PRINTING = BASE.replace("  cJSON_Delete(json);",
                        "  char *out = cJSON_Print(json);\n  free(out);\n  cJSON_Delete(json);")
PREALLOC = BASE.replace("  cJSON_Delete(json);",
                        "  char buf[8];\n  cJSON_PrintPreallocated(json, buf, 8, 0);\n"
                        "  cJSON_Delete(json);")


def state(memory: dict[str, Any], directions: list[str]) -> dict[str, Any]:
    return {"target": TARGET.to_dict(), "api": [d.to_dict() for d in API], "headers": ["cJSON.h"],
            "analysis": {"archetype": "stateless_parser"}, "local_memory": memory,
            "last_change": {"kind": "improve", "directions": directions, "version": 3},
            "harness_code": BASE, "session_memory": {},
            "run": {"coverage": {"lines": {"covered": 300, "count": 1000, "percent": 30.0}}}}


def run_skill(memory: dict[str, Any], new_code: str, new_cov: float,
              directions: list[str]) -> dict[str, Any]:
    values = LocalMemoryExtractor.variables(
        state(memory, directions), {"version": 2, "code": BASE, "lines_percent": 30.0},
        {"version": 3, "code": new_code, "lines_percent": new_cov}, noise=1.0, iteration=2)
    payload, code = extract(read_prompt(*render("local_memory_extraction", values)))
    assert code is None
    return payload


def memory_with(*rows: tuple[str, str]) -> dict[str, Any]:
    mem = empty_local_memory()
    mem["attempted_directions"] = [{"direction": d, "outcome": o, "source_ref": "v1",
                                    "evidence": "earlier"} for d, o in rows]
    return mem


def test_diff_calls() -> None:
    diff = ("--- a\n+++ b\n+  x = cJSON_Print(j); /* cJSON_Fake( */\n+  free(x);\n"
            '+  puts("cJSON_Minify(");\n-  cJSON_Minify(s);\n   cJSON_Delete(j);\n')
    assert diff_calls(diff) == (["cJSON_Print"], ["cJSON_Minify"])


def test_success_adds_a_direction_and_a_lesson_with_semantic_evidence() -> None:
    payload = run_skill(empty_local_memory(), PRINTING, 34.0, ["call cJSON_Print on the parsed tree"])
    assert payload["updated_directions"] == [{
        "direction": "call cJSON_Print on the parsed tree", "outcome": "Success", "source_ref": "v3",
        "evidence": "line coverage 30.00% -> 34.00%; now calls cJSON_Print"}]
    item = payload["new_memory_item"]
    assert item["type"] == "Success"
    assert item["evidence"]["code_change"] == "now calls cJSON_Print"
    assert item["evidence"]["metrics_delta"] == "line coverage 30.00% -> 34.00%"
    assert item["evidence"]["context"] == "the target is a stateless_parser"
    assert item["related_operator"] == "improve"


def test_same_direction_is_updated_not_duplicated_and_duplicates_merge() -> None:
    mem = memory_with(("print the parsed tree with cJSON_Print", "Noise"),
                      ("derive options from the first input byte", "Success"),
                      ("derive the options from the first byte of the input", "Noise"))
    payload = run_skill(mem, PRINTING, 33.0, ["call cJSON_Print on the parsed tree"])
    assert [(d["direction"], d["outcome"], d["source_ref"]) for d in payload["updated_directions"]] == [
        ("print the parsed tree with cJSON_Print", "Success", "v3"),
        ("derive options from the first input byte", "Noise", "v1")]


def test_noise_records_the_direction_without_a_lesson() -> None:
    payload = run_skill(empty_local_memory(), PRINTING, 30.6, ["call cJSON_Print on the parsed tree"])
    assert [d["outcome"] for d in payload["updated_directions"]] == ["Noise"]
    assert payload["new_memory_item"] is None


def test_failure_records_a_failed_direction_and_an_avoid_lesson() -> None:
    payload = run_skill(empty_local_memory(), PREALLOC, 27.5,
                        ["call cJSON_PrintPreallocated with a fixed buffer"])
    assert [d["outcome"] for d in payload["updated_directions"]] == ["Failed"]
    item = payload["new_memory_item"]
    assert item["type"] == "Failure"
    assert item["title"] == "Avoid: Call cJSON_PrintPreallocated with a fixed buffer"
    assert item["evidence"]["code_change"] == "now calls cJSON_PrintPreallocated"


def test_retrying_a_failed_direction_keeps_it_on_the_tabu_list() -> None:
    mem = memory_with(("call cJSON_PrintPreallocated with a fixed buffer", "Failed"))
    payload = run_skill(mem, PREALLOC, 30.2, ["use cJSON_PrintPreallocated with a fixed buffer"])
    (row,) = payload["updated_directions"]
    assert row["outcome"] == "Failed"
    assert row["direction"] == "call cJSON_PrintPreallocated with a fixed buffer"
    assert row["evidence"].startswith("failed again in v3 (line coverage 30.00% -> 30.20%")
    assert row["evidence"].endswith("before: earlier")
    assert payload["new_memory_item"] is None  # the lesson is already known


def test_stated_nothing_falls_back_to_the_calls_the_diff_adds() -> None:
    payload = run_skill(empty_local_memory(), PRINTING, 34.0, [])
    assert [d["direction"] for d in payload["updated_directions"]] == ["call cJSON_Print"]


def analyzer_facts(memory: dict[str, Any], new_evidence: tuple[str, ...] = ()) -> Any:
    rendered = render_local_memory(memory, new_evidence)
    values = CoverageAnalyzer.variables(state(memory, []), (), "(none)", rendered)
    return read_prompt(*render("coverage_analyzer", values))


def test_offline_reader_honours_the_tabu_rule_in_real_prompts() -> None:
    mem = memory_with(("call cJSON_PrintPreallocated with a fixed buffer", "Failed"),
                      ("call cJSON_Minify on a copy", "Noise"),
                      ("call cJSON_Print on the parsed tree", "Success"))
    names = [d.name for d in API]
    assert tabu_names(analyzer_facts(mem), names) == ["cJSON_PrintPreallocated"]
    cleared = analyzer_facts(mem, ("cJSON_PrintPreallocated needs length >= 5 + output size",))
    assert tabu_names(cleared, names) == []
    unrelated = analyzer_facts(mem, ("cJSON_Minify works in place",))
    assert tabu_names(unrelated, names) == ["cJSON_PrintPreallocated"]
    values = Enhancer.improve_variables(state(mem, []), (), "(none)", render_local_memory(mem))
    facts = read_prompt(*render("enhancer_improve", values))
    assert tabu_names(facts, names) == ["cJSON_PrintPreallocated"]


class OfflineExtractor(BaseChatModel):
    """The offline extraction skill behind the chat-model seam, as the offline model runs it."""

    @property
    def _llm_type(self) -> str:
        return "offline-extractor"

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        system = next(str(m.content) for m in messages if isinstance(m, SystemMessage))
        payload, _ = extract(read_prompt(system, str(messages[-1].content)))
        text = "```json\n" + json.dumps(payload, indent=1) + "\n```\n"
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])


def test_agent_round_trip_updates_the_memory() -> None:
    mem = memory_with(("call cJSON_Minify on a copy", "Failed"))
    values = LocalMemoryExtractor.variables(
        state(mem, ["call cJSON_Print on the parsed tree"]),
        {"version": 2, "code": BASE, "lines_percent": 30.0},
        {"version": 3, "code": PRINTING, "lines_percent": 35.0}, noise=1.0, iteration=2)
    result = LocalMemoryExtractor(OfflineExtractor()).run(values)
    assert [d.outcome for d in result.output.updated_directions] == ["Failed", "Success"]
    out, why = fold_reply(mem, result.reply, source_ref={"harness_id": "v3"})
    assert why == ("directions 1 -> 2 (1 failed); lesson added: Success "
                   "'Call cJSON_Print on the parsed tree'")
    assert out["reasoning_bank"][0]["source_ref"] == {"harness_id": "v3"}
    assert result.new_messages[0]["content"].startswith("ROLE: local_memory_extractor")
