"""Structured outputs and tool calls through ``openai:``, and their degradation to plain prompts.

Real HTTP to :mod:`tests.fake_openai` through langchain-openai; the fake server plays endpoints
that support the features and endpoints that refuse them with a 400, as vLLM, Ollama or an old
llama.cpp server do.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from agent_graph.context import Context
from agent_graph.memory.code_memory import update_code_memory
from agent_graph.registry import NodeSpec, agent_tools, default_registry
from agents.base import Agent
from agents.coverage_analyzer import CoverageAdvice, CoverageAnalyzer
from agents.function_analyzer import FunctionAnalysis, FunctionAnalyzer
from agents.llm import features_for, forget_rejections, get_chat_model, model_name
from agents.prototyper import Prototyper
from agents.tools import run_tool, tool_spec, tools_for
from prompts import placeholders
from tests.fake_openai import FakeOpenAI, Reply, Request, error, json_reply, text, tool_call

KEY_ENV = "LOGICFUZZ_TEST_FAKE_KEY"
ANALYSIS = {"archetype": "stateless_parser", "confidence": "HIGH", "reasoning": "parses a string",
            "constraints": ["NUL-terminated"], "related_functions": ["cJSON_Delete"]}
ADVICE = {"summary": "the printer is never reached",
          "strategies": [{"strategy": "print what was parsed", "target_functions": ["cJSON_Print"],
                          "expected_gain": "HIGH"}]}
HARNESS = """#include <stdint.h>
#include <stddef.h>
#include "cJSON.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cJSON *json = cJSON_ParseWithLength((const char *)data, size);
  cJSON_Delete(json);
  return 0;
}
"""


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv(KEY_ENV, "sk-fake-0123456789abcdef")
    forget_rejections()
    yield
    forget_rejections()


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(lifetime=30, max_requests=30) as fake:
        yield fake


def serving(respond: Any) -> FakeOpenAI:
    return FakeOpenAI(respond, lifetime=30, max_requests=30)


def ctx_for(fake: FakeOpenAI, **kw: Any) -> Context:
    return Context(**{"model": "openai:fake-model", "base_url": fake.url, "api_key_env": KEY_ENV,
                      "max_retries": 0, "request_timeout": 5.0, **kw})


def state() -> dict[str, Any]:
    memory = update_code_memory({}, "harness.c", HARNESS, {"cJSON_ParseWithLength", "cJSON_Delete"})
    return {"harness_code": HARNESS, "code_memory": memory}


def make(cls: type[Agent[Any]], ctx: Context, tools: list[str] | tuple[str, ...] = ()) -> Agent[Any]:
    features = features_for(ctx)
    return cls(get_chat_model(ctx), model=model_name(ctx.model), features=features,
               tools=tools_for(tools, state()) if features.use("tools") else [], max_tool_rounds=2)


def variables(name: str) -> dict[str, str]:
    values = {p: f"<{p}>" for p in placeholders(name)}
    values["target_prototype"] = "cJSON * cJSON_Parse(const char * value);"
    return values


def test_a_json_role_asks_for_its_schema(server: FakeOpenAI) -> None:
    server.add(json_reply(ANALYSIS))
    result = make(FunctionAnalyzer, ctx_for(server)).run(variables("function_analyzer"))
    fmt = server.requests[0].body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "FunctionAnalysis"
    assert fmt["json_schema"]["schema"]["properties"].keys() == FunctionAnalysis.model_json_schema()[
        "properties"].keys()
    assert result.structured and result.output.archetype == "stateless_parser"


def test_a_code_role_keeps_json_in_text(server: FakeOpenAI) -> None:
    server.add(text('{"notes": ["first harness"]}\n```c\n' + HARNESS + "```"))
    result = make(Prototyper, ctx_for(server)).run(variables("prototyper"))
    assert "response_format" not in server.requests[0].body
    assert not result.structured and result.code is not None and "LLVMFuzzerTestOneInput" in result.code


def kinds(server: FakeOpenAI) -> list[str]:
    """The response format type of each request ('' when none was sent)."""
    return [(r.body.get("response_format") or {}).get("type", "") for r in server.requests]


def test_a_refused_schema_steps_down_to_json_object_and_is_remembered_per_endpoint() -> None:
    def respond(request: Request) -> Reply:
        kind = (request.body.get("response_format") or {}).get("type")
        if kind == "json_schema":  # what llama.cpp's server answers: a 500 naming the field
            return error(500, "1 validation error: response_format.type: Input should be 'text' or "
                              "'json_object'")
        return json_reply(ANALYSIS)

    with serving(respond) as server:
        ctx = replace(ctx_for(server), max_retries=0)
        first = make(FunctionAnalyzer, ctx).run(variables("function_analyzer"))
        assert kinds(server) == ["json_schema", "json_object"]
        assert first.degraded and first.degraded[0]["feature"] == "structured"
        assert first.output.archetype == "stateless_parser" and first.usage["calls"] == 1
        # Later agents at the same endpoint do not ask again ...
        make(FunctionAnalyzer, ctx).run(variables("function_analyzer"))
        assert kinds(server)[2] == "json_object"
        # ... while another endpoint (or model) still gets the feature.
        other = features_for(Context(model="openai:other-model", base_url=server.url, api_key_env=KEY_ENV))
        assert other.use("structured") and not features_for(ctx).use("structured")


def test_a_server_without_any_response_format_gets_json_in_text() -> None:
    def respond(request: Request) -> Reply:
        if "response_format" in request.body:
            return error(400, "response_format is not supported by this server")
        return json_reply(ANALYSIS)

    with serving(respond) as server:
        result = make(FunctionAnalyzer, ctx_for(server)).run(variables("function_analyzer"))
        assert kinds(server) == ["json_schema", "json_object", ""]
        assert [d["feature"] for d in result.degraded] == ["structured", "json_object"]
        assert result.output.archetype == "stateless_parser"


def test_a_prompt_over_the_servers_window_is_cut_to_it_and_sent_once_more() -> None:
    def respond(request: Request) -> Reply:
        size = sum(len(str(m.get("content") or "")) for m in request.body["messages"])
        if size > 3000:
            return error(400, f"Requested tokens ({size // 3}) exceed context window of 600")
        return json_reply(ANALYSIS)

    with serving(respond) as server:
        ctx = replace(ctx_for(server), structured_output=False)
        values = variables("function_analyzer")
        big = {**values, next(iter(values)): "int x;\n" * 3000}
        result = make(FunctionAnalyzer, ctx).run(big)
        assert len(server.requests) == 2 and server.requests[1].body["max_completion_tokens"] == 150
        assert result.degraded[0]["feature"] == "context_window"
        assert result.output.archetype == "stateless_parser"


def test_an_error_that_names_no_feature_is_not_degraded(server: FakeOpenAI) -> None:
    server.add(error(400, "the prompt is malformed"))
    with pytest.raises(Exception, match="malformed"):
        make(FunctionAnalyzer, ctx_for(server)).run(variables("function_analyzer"))
    assert features_for(ctx_for(server)).use("structured")


def test_a_tool_call_is_answered_from_the_code_memory(server: FakeOpenAI) -> None:
    server.add(tool_call("read_code_mem", {"file_paths": ["harness.c"]}, "call_1"), json_reply(ADVICE))
    result = make(CoverageAnalyzer, ctx_for(server), ("read_code_mem", "read_file")).run(
        variables("coverage_analyzer"))
    first, second = server.requests
    names = [t["function"]["name"] for t in first.body["tools"]]
    assert names == ["read_code_mem", "read_file"] and "response_format" in first.body
    tool_msg = next(m for m in second.messages if m["role"] == "tool")
    assert tool_msg["tool_call_id"] == "call_1"
    answer = json.loads(tool_msg["content"])["results"][0]
    assert answer["status"] == "found" and "cJSON_ParseWithLength" in answer["summary_content"]
    assert isinstance(result.output, CoverageAdvice) and result.usage["calls"] == 2
    assert result.tool_calls == [{"name": "read_code_mem", "args": {"file_paths": ["harness.c"]},
                                  "answer_chars": len(tool_msg["content"])}]
    # The history keeps the call and its result as a pair, in order.
    roles = [m["role"] for m in result.new_messages]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]
    assert result.new_messages[2]["tool_calls"][0]["id"] == "call_1"


def test_read_file_redirects_to_the_entry_unless_full(server: FakeOpenAI) -> None:
    server.add(tool_call("read_file", {"file_path": "harness.c"}, "c1"),
               tool_call("read_file", {"file_path": "harness.c", "full": True}, "c2"),
               json_reply(ADVICE))
    analyst = make(CoverageAnalyzer, ctx_for(server), ("read_code_mem", "read_file"))
    analyst.run(variables("coverage_analyzer"))
    answers = [json.loads(m["content"]) for m in server.requests[2].messages if m["role"] == "tool"]
    assert answers[0]["optimization"] == "redirected_to_read_code_mem"
    assert answers[1]["status"] == "full_content" and answers[1]["content"] == HARNESS


def test_tool_rounds_are_capped_then_the_model_must_answer() -> None:
    def respond(request: Request) -> Reply:
        if request.body.get("tool_choice") == "none":
            return json_reply(ADVICE)
        return tool_call("read_code_mem", {}, f"call_{len(request.messages)}")

    with serving(respond) as server:
        analyst = make(CoverageAnalyzer, ctx_for(server), ("read_code_mem",))
        result = analyst.run(variables("coverage_analyzer"))
        assert [r.body.get("tool_choice") for r in server.requests] == [None, None, "none"]
        assert len(result.tool_calls) == 2 and result.output.summary.startswith("the printer")


def test_a_server_that_ignores_tool_choice_none_cannot_loop() -> None:
    def respond(request: Request) -> Reply:
        return Reply(content=json.dumps(ADVICE),
                     tool_calls=[{"id": f"c{len(request.messages)}", "name": "read_code_mem", "args": {}}])

    with serving(respond) as server:
        analyst = make(CoverageAnalyzer, ctx_for(server), ("read_code_mem",))
        result = analyst.run(variables("coverage_analyzer"))
        assert len(server.requests) == 3  # two tool rounds, then the forced answer is taken as text
        assert server.requests[-1].body["tool_choice"] == "none"
        assert len(result.tool_calls) == 2 and result.output.strategies[0].expected_gain == "HIGH"


def test_a_bad_tool_call_gets_an_error_answer_not_an_exception(server: FakeOpenAI) -> None:
    server.add(tool_call("rm_rf", {"path": "/"}, "bad"), json_reply(ADVICE))
    make(CoverageAnalyzer, ctx_for(server), ("read_code_mem",)).run(variables("coverage_analyzer"))
    answer = json.loads(next(m for m in server.requests[1].messages if m["role"] == "tool")["content"])
    assert answer == {"error": "no tool 'rm_rf'", "available": ["read_code_mem"]}


def test_refused_tools_are_dropped_and_the_reply_still_parses() -> None:
    def respond(request: Request) -> Reply:
        if "tools" in request.body:
            return error(400, '"auto" tool choice requires --enable-auto-tool-choice to be set')
        return json_reply(ADVICE)

    with serving(respond) as server:
        ctx = ctx_for(server)
        result = make(CoverageAnalyzer, ctx, ("read_code_mem",)).run(variables("coverage_analyzer"))
        assert [("tools" in r.body) for r in server.requests] == [True, False]
        assert result.degraded[0]["feature"] == "tools"
        assert result.output.strategies[0].target_functions == ["cJSON_Print"]
        assert not features_for(ctx).use("tools") and features_for(ctx).use("structured")


def test_context_switches_and_the_offline_model_send_nothing_native(server: FakeOpenAI) -> None:
    server.add(json_reply(ANALYSIS))
    ctx = ctx_for(server, native_tools=False, structured_output=False)
    make(FunctionAnalyzer, ctx, ("search_knowledge",)).run(variables("function_analyzer"))
    assert not {"tools", "response_format"} & server.requests[0].body.keys()
    offline = features_for(Context(model="offline"))
    assert not offline.use("tools") and not offline.use("structured")


def test_tool_specs_are_strict() -> None:
    specs = {t.name: tool_spec(t)["function"] for t in tools_for(["read_code_mem", "read_file",
                                                                   "search_knowledge"], state())}
    for fn in specs.values():
        params = fn["parameters"]
        assert fn["strict"] is True and params["additionalProperties"] is False
        assert sorted(params["required"]) == sorted(params["properties"])
        assert "default" not in json.dumps(params)
    paths = specs["read_code_mem"]["parameters"]["properties"]["file_paths"]
    assert {"type": "null"} in paths["anyOf"]
    assert specs["read_file"]["parameters"]["properties"]["file_path"] == {
        "type": "string", "description": "Path of the file, as listed in the code memory."}


def test_null_optional_arguments_take_their_defaults() -> None:
    tools = {t.name: t for t in tools_for(["read_code_mem", "read_file"], state())}
    everything = json.loads(run_tool(tools, "read_code_mem", {"file_paths": None}))
    assert [r["file_path"] for r in everything["results"]] == ["harness.c"]
    assert json.loads(run_tool(tools, "read_file", {"file_path": "harness.c", "full": None}))["status"] == (
        "summary_found")
    bad = json.loads(run_tool(tools, "read_file", {}))
    assert "file_path" in bad["error"]


def test_registry_declares_tools_per_agent() -> None:
    table = agent_tools(default_registry())
    assert table["prototyper"] == ("search_knowledge", "read_code_mem", "read_file")
    assert "read_code_mem" in table["enhancer"] and "read_code_mem" in table["coverage_analyzer"]
    assert "memory_manager" not in table
    with pytest.raises(ValueError, match="unknown tools \\['shell'\\]"):
        NodeSpec("toy", lambda s: {}, tools=("shell",))
