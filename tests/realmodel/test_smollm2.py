"""The whole graph against a real OpenAI-compatible server: llama.cpp serving SmolLM2-135M.

A real server behaves unlike the scripted fake: llama.cpp answers ``json_schema`` with a 500
naming ``response_format``, constrains ``json_object`` by grammar, and a 135M model writes
JSON that often misses the schema and C that rarely builds. The run must step down, fall back
to the offline engine where the model's step is unusable, and end every target with a result.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_graph.memory.session_memory import HEADERS
from agent_graph.registry import default_registry, memory_reads
from agents.llm import forget_rejections
from agents.local_model import LocalModelServer
from logicfuzz.cli import main

pytestmark = [pytest.mark.realmodel, pytest.mark.toolchain, pytest.mark.e2e]
REPO = Path(__file__).resolve().parents[2]
KEY = "LF_TEST_LOCAL_KEY"


def run(server: LocalModelServer, out: Path, functions: str, *extra: str) -> int:
    # Short replies and no optimization iterations: a 135M model on 2 cores answers at a few
    # tokens per second, and what is tested here is the path, not the model's skill.
    forget_rejections()
    argv = ["run", str(REPO / "benchmarks" / "cjson.yaml"), "--functions", functions,
            "--model", f"openai:{server.alias}", "--base-url", server.url, "--api-key-env", KEY,
            "--fuzz-seconds", "3", "--max-iterations", "0", "--out", str(out), "--jobs", "1",
            "--memory-mode", "baseline", "--debug", "--quiet", "--json", *extra]
    return main(argv)


def test_whole_graph_on_cjson_with_smollm2(smollm2: LocalModelServer, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(KEY, "no-key-needed")
    monkeypatch.setenv("LOGICFUZZ_MAX_OUTPUT_TOKENS", "256")
    code = run(smollm2, tmp_path / "run", "cJSON_Parse,cJSON_Minify")
    out = capsys.readouterr()
    assert code == 0 and "Traceback" not in out.out + out.err, out.err[-2000:]
    summary = json.loads(out.out)
    for record in summary["results"]:
        target = tmp_path / "run" / "cjson" / record["function"]
        assert (target / "result.json").is_file() and record.get("error") is None
        assert record["runs"], record  # the offline floor: never below the offline engine
    # The step-down happened against the real server, and was logged.
    events = [json.loads(line) for f in (tmp_path / "run").rglob("events.jsonl")
              for line in f.read_text().splitlines()]
    refused = [e["data"]["feature"] for e in events if e["type"] == "model.feature_unsupported"]
    assert "structured" in refused
    log = smollm2.log_path.read_text(errors="replace")
    assert '"POST /v1/chat/completions HTTP/1.1" 500' in log
    assert '"POST /v1/chat/completions HTTP/1.1" 200' in log, (
        f"no completion was answered; server exit status {smollm2.returncode} (-4: a build for another CPU)")
    # The model was really asked: each role's prompt carries only the memory it reads.
    reads = memory_reads(default_registry())
    calls = [json.loads(line) for f in (tmp_path / "run").rglob("debug.jsonl")
             for line in f.read_text().splitlines()]
    assert {c["agent"] for c in calls} >= {"function_analyzer", "prototyper"}
    for call in calls:
        if call["agent"] not in reads:
            continue
        user = [m["content"] for m in call["prompt"] if m["role"] == "user"][-1]
        present = {c for c, h in HEADERS.items() if h in user}
        assert present <= set(reads[call["agent"]]), (call["agent"], present)


def test_without_fallback_every_failure_is_a_recorded_outcome(smollm2: LocalModelServer, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(KEY, "no-key-needed")
    monkeypatch.setenv("LOGICFUZZ_MAX_OUTPUT_TOKENS", "256")
    code = run(smollm2, tmp_path / "alone", "cJSON_Minify", "--no-fallback")
    out = capsys.readouterr()
    assert code in (0, 1) and "Traceback" not in out.out + out.err, out.err[-2000:]
    for record in json.loads(out.out)["results"]:
        target = tmp_path / "alone" / "cjson" / record["function"]
        if record.get("error"):
            assert (target / "error.json").is_file() and record["error"].strip()
        else:
            assert (target / "result.json").is_file() and record["termination_reason"]
