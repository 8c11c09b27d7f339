"""The ``openai:`` path through the model seam, against a scripted server on 127.0.0.1.

Every test talks real HTTP to :mod:`tests.fake_openai` through ``get_chat_model(Context(...))``
and the agents' own call/parse/retry code; nothing in langchain-openai is patched. Retries and
timeouts are kept small so the whole file runs in a few seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import tool
from pydantic import BaseModel

from agent_graph.context import Context
from agent_graph.memory.messages import to_langchain
from agents.base import ModelCallError
from agents.function_analyzer import FunctionAnalysis, FunctionAnalyzer
from agents.llm import ModelConfigError, get_chat_model, model_name
from agents.parsing import ReplyParseError
from prompts import placeholders
from tests.fake_openai import (
    FakeOpenAI,
    Reply,
    by_role,
    error,
    hang,
    json_reply,
    malformed,
    role_key,
    text,
    tool_call,
)

KEY_ENV = "LOGICFUZZ_TEST_FAKE_KEY"
KEY = "sk-fake-0123456789abcdef"
ANALYSIS = {"archetype": "stateless_parser", "confidence": "HIGH",
            "reasoning": "parses one NUL-terminated string", "constraints": ["NUL-terminated"],
            "related_functions": ["cJSON_Delete"]}


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_ENV, KEY)
    return KEY


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(lifetime=30, max_requests=20) as fake:
        yield fake


def ctx_for(fake: FakeOpenAI, **kw: Any) -> Context:
    settings: dict[str, Any] = {"model": "openai:fake-model", "base_url": fake.url, "api_key_env": KEY_ENV,
                                "max_retries": 0, "request_timeout": 5.0}
    return Context(**{**settings, **kw})


def analyzer(ctx: Context, debug_log: Path | None = None) -> FunctionAnalyzer:
    return FunctionAnalyzer(get_chat_model(ctx), model=model_name(ctx.model), debug_log=debug_log)


def analyzer_vars() -> dict[str, str]:
    values = {name: f"<{name}>" for name in placeholders("function_analyzer")}
    values["target_prototype"] = "cJSON * cJSON_Parse(const char * value);"
    return values


def test_invoke_sends_the_context_settings(server: FakeOpenAI, key: str) -> None:
    server.add(text("hello from the fake"))
    ctx = ctx_for(server, temperature=0.3, max_output_tokens=321)
    reply = get_chat_model(ctx).invoke("say hello")
    assert reply.content == "hello from the fake"
    (req,) = server.requests
    assert req.path == "/v1/chat/completions"
    assert req.body["model"] == "fake-model" and req.body["temperature"] == 0.3
    assert 321 in (req.body.get("max_completion_tokens"), req.body.get("max_tokens"))
    assert req.headers["authorization"] == f"Bearer {key}"
    assert req.messages == [{"role": "user", "content": "say hello"}]


def test_usage_is_read_from_the_response(server: FakeOpenAI, key: str) -> None:
    server.add(json_reply(ANALYSIS, usage={"prompt_tokens": 1234, "completion_tokens": 56}))
    result = analyzer(ctx_for(server)).run(analyzer_vars())
    assert result.output.archetype == "stateless_parser"
    # The server's numbers, not the local estimate (the prompt is far shorter than 1234 tokens).
    assert result.usage == {"calls": 1, "prompt_tokens": 1234, "completion_tokens": 56}
    sent = server.requests[0].messages
    assert [m["role"] for m in sent] == ["system", "user"]
    assert sent[0]["content"].startswith("ROLE: function_analyzer")
    assert "cJSON * cJSON_Parse(const char * value);" in sent[1]["content"]


def test_usage_is_estimated_when_the_server_sends_none(server: FakeOpenAI, key: str) -> None:
    server.add(Reply(content=json.dumps(ANALYSIS), omit_usage=True))
    result = analyzer(ctx_for(server)).run(analyzer_vars())
    assert "usage" not in server.requests[0].body
    # A local server that reports nothing still gets a count (the local token estimate).
    assert result.usage["calls"] == 1 and result.usage["prompt_tokens"] > 100
    assert 0 < result.usage["completion_tokens"] < 100


def test_429_and_500_are_retried_with_backoff(server: FakeOpenAI, key: str) -> None:
    server.add(error(429, "slow down"), error(500, "boom"), json_reply(ANALYSIS))
    result = analyzer(ctx_for(server, max_retries=2)).run(analyzer_vars())
    assert result.output.archetype == "stateless_parser"
    assert len(server.requests) == 3
    first, second, third = (r.received_at for r in server.requests)
    # Exponential backoff: about 0.5 s then 1 s, each reduced by at most 25 % jitter.
    assert second - first >= 0.35 and third - second >= 0.7
    assert server.requests[2].body == server.requests[0].body  # the same request, resent


def test_retry_after_header_is_honoured(server: FakeOpenAI, key: str) -> None:
    server.add(error(429, "rate limited", retry_after_ms=1200), text("ok"))
    assert get_chat_model(ctx_for(server, max_retries=1)).invoke("x").content == "ok"
    first, second = (r.received_at for r in server.requests)
    assert second - first >= 1.15  # the server's 1.2 s; the default first backoff is at most 0.5 s


def test_clear_error_after_the_last_retry(server: FakeOpenAI, key: str) -> None:
    server.add(*[error(503, "upstream overloaded", retry_after_ms=10)] * 3)
    with pytest.raises(ModelCallError) as info:
        analyzer(ctx_for(server, max_retries=2)).run(analyzer_vars())
    assert len(server.requests) == 3
    message = str(info.value)
    assert message.startswith("function_analyzer: model call failed")
    assert "503" in message and "upstream overloaded" in message
    assert key not in message


def test_a_hung_request_times_out_and_fails_clearly(server: FakeOpenAI, key: str) -> None:
    server.add(hang(10), hang(10))
    started = time.monotonic()
    with pytest.raises(ModelCallError, match="(?i)timed out"):
        analyzer(ctx_for(server, request_timeout=0.5, max_retries=1)).run(analyzer_vars())
    assert time.monotonic() - started < 5
    assert len(server.requests) == 2  # the timeout was retried once, then given up


def test_a_timeout_is_retried_into_success(server: FakeOpenAI, key: str) -> None:
    server.add(hang(10), json_reply(ANALYSIS))
    result = analyzer(ctx_for(server, request_timeout=0.5, max_retries=1)).run(analyzer_vars())
    assert result.output.archetype == "stateless_parser" and len(server.requests) == 2


def test_a_malformed_response_body_is_a_model_call_error(server: FakeOpenAI, key: str) -> None:
    server.add(malformed())
    with pytest.raises(ModelCallError, match="^function_analyzer: model call failed"):
        analyzer(ctx_for(server)).run(analyzer_vars())


def test_truncated_json_is_repaired_without_another_call(server: FakeOpenAI, key: str) -> None:
    server.add(text('Here you go:\n{"archetype": "stateless_parser", "confidence": "HIGH", '
                    '"constraints": ["input must be NUL-termin'))
    result = analyzer(ctx_for(server)).run(analyzer_vars())
    assert result.output.archetype == "stateless_parser" and result.output.confidence == "HIGH"
    assert result.usage["calls"] == 1


def test_unusable_reply_is_recovered_by_the_corrective_retry(server: FakeOpenAI, key: str) -> None:
    server.add(text("It is a parser, I think.", usage={"prompt_tokens": 100, "completion_tokens": 7}),
               json_reply(ANALYSIS, usage={"prompt_tokens": 150, "completion_tokens": 40}))
    result = analyzer(ctx_for(server)).run(analyzer_vars())
    assert result.output.archetype == "stateless_parser"
    assert result.usage == {"calls": 2, "prompt_tokens": 250, "completion_tokens": 47}
    retry = server.requests[1].messages
    assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"]
    assert retry[2]["content"] == "It is a parser, I think."
    assert retry[3]["content"].startswith("Your reply could not be used")
    assert [m["role"] for m in result.new_messages] == ["system", "user", "assistant", "user", "assistant"]


def test_two_unusable_replies_raise_a_parse_error(server: FakeOpenAI, key: str) -> None:
    server.add(text("no idea"), text("still no idea"))
    with pytest.raises(ReplyParseError, match="function_analyzer: no usable reply"):
        analyzer(ctx_for(server)).run(analyzer_vars())
    assert len(server.requests) == 2


def test_streaming_reassembles_the_reply(server: FakeOpenAI, key: str) -> None:
    content = '{"archetype": "stateless_parser"}'
    server.add(text(content))
    pieces = [str(chunk.content) for chunk in get_chat_model(ctx_for(server)).stream("go")]
    assert "".join(pieces) == content and len([p for p in pieces if p]) > 2
    assert server.requests[0].body["stream"] is True


@tool
def search_knowledge(query: str) -> str:
    """Search the long-term knowledge for an archetype or pitfall."""
    return f"results for {query}"


def test_tool_call_round_trip_through_our_messages(server: FakeOpenAI, key: str) -> None:
    server.add(tool_call("search_knowledge", {"query": "stateless parser"}, "call_1"),
               json_reply(ANALYSIS))
    model = get_chat_model(ctx_for(server)).bind_tools([search_knowledge])
    first = model.invoke("classify cJSON_Parse")
    assert first.tool_calls[0]["name"] == "search_knowledge"
    assert first.tool_calls[0]["args"] == {"query": "stateless parser"}
    tools = server.requests[0].body["tools"]
    assert tools[0]["function"]["name"] == "search_knowledge"
    # The state keeps plain-dict messages; they must convert back to what the API accepts.
    history = [
        {"role": "user", "content": "classify cJSON_Parse"},
        {"role": "assistant", "content": "", "tool_calls": [dict(first.tool_calls[0])]},
        {"role": "tool", "content": search_knowledge.invoke(first.tool_calls[0]["args"]),
         "tool_call_id": "call_1"},
    ]
    model.invoke(to_langchain(history))
    sent = server.requests[1].messages
    assert sent[1]["tool_calls"][0]["id"] == "call_1"
    assert sent[1]["tool_calls"][0]["function"]["name"] == "search_knowledge"
    assert sent[2] == {"role": "tool", "content": "results for stateless parser", "tool_call_id": "call_1"}


@pytest.mark.parametrize("method", ["json_schema", "function_calling", "json_mode"])
def test_structured_output_methods(server: FakeOpenAI, key: str, method: str) -> None:
    if method == "function_calling":
        server.add(tool_call("FunctionAnalysis", ANALYSIS))
    else:
        server.add(json_reply(ANALYSIS))
    model = get_chat_model(ctx_for(server)).with_structured_output(FunctionAnalysis, method=method)
    out = model.invoke("classify cJSON_Parse; answer in JSON")
    assert isinstance(out, BaseModel) and out.archetype == "stateless_parser"  # type: ignore[attr-defined]
    body = server.requests[0].body
    expected = {"json_schema": "json_schema", "json_mode": "json_object"}.get(method)
    if expected:
        assert body["response_format"]["type"] == expected
    else:
        assert body["tools"][0]["function"]["name"] == "FunctionAnalysis"


def test_the_key_is_never_logged_or_shown(server: FakeOpenAI, key: str, tmp_path: Path) -> None:
    server.add(json_reply(ANALYSIS))
    ctx = ctx_for(server, debug=True)
    log = tmp_path / "debug.jsonl"
    analyzer(ctx, debug_log=log).run(analyzer_vars())
    record = json.loads(log.read_text())
    assert record["agent"] == "function_analyzer" and record["usage"]["calls"] == 1
    assert key not in log.read_text()
    assert key not in repr(get_chat_model(ctx)) and key not in repr(ctx)


def test_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LOGICFUZZ_TEST_NO_SUCH_KEY", raising=False)
    ctx = Context(model="openai:fake-model", base_url="http://127.0.0.1:9/v1",
                  api_key_env="LOGICFUZZ_TEST_NO_SUCH_KEY")
    with pytest.raises(ModelConfigError, match="LOGICFUZZ_TEST_NO_SUCH_KEY") as info:
        get_chat_model(ctx)
    assert "--model offline" in str(info.value)


def test_the_graph_imports_without_a_key(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env["LOGICFUZZ_MODEL"] = "openai:gpt-4o-mini"  # the default Studio would use
    code = ("import agent_graph.graph as g; from agent_graph.context import Context; "
            "print(type(g.graph).__name__, Context().model)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["CompiledStateGraph", "openai:gpt-4o-mini"]


def test_the_server_answers_clearly_when_its_script_runs_out(server: FakeOpenAI, key: str) -> None:
    with pytest.raises(ModelCallError, match="no scripted reply left"):
        analyzer(ctx_for(server, max_retries=2)).run(analyzer_vars())
    assert len(server.requests) == 1  # a 400 is not retried


def test_role_script_answers_each_agent_from_its_queue(key: str) -> None:
    script = {"function_analyzer": [json_reply(ANALYSIS)], "enhancer:fix": [text("fixed")]}
    with FakeOpenAI(by_role(script), lifetime=30) as fake:
        result = analyzer(ctx_for(fake)).run(analyzer_vars())
        assert result.output.archetype == "stateless_parser"
        model = get_chat_model(ctx_for(fake))
        reply = model.invoke([("system", "ROLE: enhancer"), ("user", "MODE: fix\nthe build failed")])
        assert reply.content == "fixed"
        with pytest.raises(Exception, match="no scripted reply left for enhancer:improve"):
            model.invoke([("system", "ROLE: enhancer"), ("user", "MODE: improve")])
    assert [role_key(r) for r in fake.requests] == ["function_analyzer", "enhancer:fix", "enhancer:improve"]


def test_the_server_stops_by_itself() -> None:
    fake = FakeOpenAI([], lifetime=0.3).start()
    url = fake.url
    assert fake.wait_stopped(3)
    with pytest.raises(OSError):  # refused or reset: nothing serves the port any more
        urllib.request.urlopen(url.replace("/v1", "/v1/chat/completions"), data=b"{}", timeout=2)
