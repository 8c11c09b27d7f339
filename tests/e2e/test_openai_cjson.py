"""End to end through ``openai:`` against a local OpenAI-compatible server, on real cJSON.

The server answers each request with what the offline model would say to that exact prompt,
so the whole graph runs for real (builds, fuzzing, coverage) while every request crosses HTTP.
One early 500 proves the retry path inside a real run. Like a model with native features, it
answers the first request of the improving roles with a ``read_code_mem`` tool call, and JSON
roles are asked for their schema.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from agent_graph.context import Context
from agent_graph.memory.session_memory import HEADERS
from agent_graph.registry import default_registry, memory_reads
from agents.offline.model import OfflineChatModel
from logicfuzz.runner import RunOptions, run_benchmark
from tests.fake_openai import FakeOpenAI, Reply, Request, error, role_key, tool_call

pytestmark = [pytest.mark.e2e, pytest.mark.toolchain]

REPO = Path(__file__).resolve().parents[2]


def offline_responder() -> tuple[list[str], object]:
    offline = OfflineChatModel()
    failed_once: list[str] = []

    def respond(request: Request) -> Reply:
        if not failed_once:
            failed_once.append(role_key(request))
            return error(500, "transient")
        msgs = request.messages
        if (role_key(request).split(":")[0] in ("enhancer", "coverage_analyzer") and "tools" in request.body
                and not any(m["role"] == "tool" for m in msgs)):
            return tool_call("read_code_mem", {"file_paths": ["harness.c"]}, f"call_{len(msgs)}")
        system = next(m["content"] for m in msgs if m["role"] == "system")
        user = [m["content"] for m in msgs if m["role"] == "user"][-1]
        reply = offline.invoke([SystemMessage(system), HumanMessage(user)])
        return Reply(content=str(reply.content))

    return failed_once, respond


def test_whole_graph_through_openai_on_cjson(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    failed_once, respond = offline_responder()
    with FakeOpenAI(respond, lifetime=600, max_requests=200) as server:
        monkeypatch.setenv("LF_TEST_KEY", "sk-test-not-a-real-key-1234567890")
        ctx = Context(model="openai:fake-model", base_url=server.url, api_key_env="LF_TEST_KEY",
                      fuzz_seconds=3, max_iterations=1)
        summary = run_benchmark(RunOptions(REPO / "benchmarks" / "cjson.yaml", ["cJSON_Parse"],
                                           tmp_path / "run", ctx, jobs=1))
        requests = list(server.requests)
    record = summary["results"][0]
    assert failed_once and record.get("error") is None, record
    assert record["compiles"] and record["runs"] and record["coverage"]["lines"]["percent"] > 0

    # Every agent of the run talked to the server; the retried request came again.
    roles = [role_key(r) for r in requests]
    assert roles[0] == roles[1]
    assert {"function_analyzer", "prototyper", "coverage_analyzer", "enhancer:improve",
            "local_memory_extractor"} <= set(roles)
    assert record["model_calls"] == len(requests) - 1
    auth = [{k.lower(): v for k, v in r.headers.items()}.get("authorization") for r in requests]
    assert set(auth) == {"Bearer sk-test-not-a-real-key-1234567890"}

    # Memory sections are present and filtered per agent.
    reads = memory_reads(default_registry())
    for req in requests[1:]:
        agent = role_key(req).split(":")[0]
        if agent not in reads:
            continue
        user = [m["content"] for m in req.messages if m["role"] == "user"][-1]
        present = {c for c, h in HEADERS.items() if h in user}
        assert present <= set(reads[agent]), (agent, present)
    improve = next(r for r in requests if role_key(r) == "enhancer:improve")
    assert "### Archetype" in improve.text() and "## Current harness" in improve.text()

    # Visited nodes, from the audit log; and the key is never written anywhere.
    target = tmp_path / "run" / "cjson" / "cJSON_Parse"
    events = [json.loads(line)["type"] for line in (target / "events.jsonl").read_text().splitlines()]
    steps = [e for e in events if not e.startswith("model.")]
    assert steps[:3] == ["target.prepared", "analysis.done", "harness.written"]
    calls = [json.loads(line)["data"] for line in (target / "events.jsonl").read_text().splitlines()
             if json.loads(line)["type"] == "model.call"]
    assert sum(c["calls"] for c in calls) == record["model_calls"]

    # Tool calls were answered from the code memory, and JSON roles got their schema.
    tool_answers = [m["content"] for r in requests for m in r.messages if m["role"] == "tool"]
    assert tool_answers and all('"status": "found"' in a and "cJSON_Parse" in a for a in tool_answers)
    assert events.count("model.tool_call") >= 2
    assert "tools" in improve.body and "response_format" not in improve.body
    analysis = next(r for r in requests if role_key(r) == "function_analyzer")
    assert analysis.body["response_format"]["json_schema"]["name"] == "FunctionAnalysis"
    assert "iteration.baseline" in events and "run.finalized" in events
    assert events[-1] == "memory.experience.applied"  # the lifecycle judges the final result
    for path in (tmp_path / "run").rglob("*"):
        if path.is_file() and path.stat().st_size < 50_000_000:
            assert b"sk-test-not-a-real-key" not in path.read_bytes(), path
