"""The floor under weak models, through ``openai:`` against a local server, on the kv library.

A model that answers every step with prose (no JSON, no C block) or a server that is down: with
the default fallback the offline engine does each failed step from the same prompt and the
target runs as it does offline; with ``--no-fallback`` every target ends as a recorded outcome
with its reason, never a crash.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from agent_graph.context import Context
from agents.llm import forget_rejections
from logicfuzz.cli import main
from logicfuzz.runner import RunOptions, run_benchmark
from tests.fake_openai import FakeOpenAI, Reply, Request

pytestmark = [pytest.mark.e2e, pytest.mark.toolchain]
KEY = "LF_TEST_FALLBACK_KEY"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY, "sk-test-not-a-real-key-1234567890")
    forget_rejections()


def prose(_request: Request) -> Reply:
    return Reply(content="I am a small model. Fuzzing is a testing technique that feeds inputs.")


def ctx(url: str, **kw: object) -> Context:
    return Context(**{"model": "openai:weak", "base_url": url, "api_key_env": KEY, "fuzz_seconds": 2,
                      "max_iterations": 1, "max_retries": 0, "request_timeout": 5.0,
                      "memory_mode": "baseline", **kw})


def test_a_weak_model_gets_the_offline_floor(kv_benchmark: Path, tmp_path: Path) -> None:
    with FakeOpenAI(prose, lifetime=300, max_requests=200) as server:
        summary = run_benchmark(RunOptions(kv_benchmark, ["kv_parse"], tmp_path / "weak",
                                           ctx(server.url), jobs=1))
        asked = len(server.requests)
    offline = run_benchmark(RunOptions(kv_benchmark, ["kv_parse"], tmp_path / "offline",
                                       Context(model="offline", fuzz_seconds=2, max_iterations=1,
                                               memory_mode="baseline"), jobs=1))
    weak, floor = summary["results"][0], offline["results"][0]
    assert weak.get("error") is None and weak["runs"] and floor["runs"]
    # Every step the model could not do was done by the offline engine, and said so.
    assert weak["fallbacks"]["function_analyzer"] == 1 and weak["fallbacks"]["prototyper"] == 1
    assert asked >= 2 * sum(weak["fallbacks"].values())  # the model was asked (and retried) first
    events = (tmp_path / "weak" / "kv" / "kv_parse" / "events.jsonl").read_text().splitlines()
    reasons = [json.loads(e)["data"]["reason"] for e in events if '"model.fallback"' in e]
    assert reasons and all("ReplyParseError" in r for r in reasons)
    assert weak["coverage"]["lines"]["percent"] == pytest.approx(floor["coverage"]["lines"]["percent"],
                                                                  abs=5.0)


def test_without_fallback_a_weak_model_is_a_recorded_outcome(kv_benchmark: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOpenAI(prose, lifetime=300, max_requests=200) as server:
        code = main(["run", str(kv_benchmark), "--model", "openai:weak", "--base-url", server.url,
                     "--api-key-env", KEY, "--no-fallback", "--fuzz-seconds", "2", "--max-iterations",
                     "1", "--out", str(tmp_path / "run"), "--jobs", "1", "--memory-mode", "baseline",
                     "--quiet", "--json"])
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    summary = json.loads(out.out)
    assert code == 1 and all("no usable reply" in r["error"] for r in summary["results"])
    assert all((tmp_path / "run" / "kv" / r["function"] / "error.json").is_file()
               for r in summary["results"])


def test_a_server_that_is_down_falls_back_once_per_run_not_once_per_call(kv_benchmark: Path,
                                                                         tmp_path: Path) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    summary = run_benchmark(RunOptions(kv_benchmark, ["kv_parse"], tmp_path / "down", ctx(url), jobs=1))
    record = summary["results"][0]
    assert record.get("error") is None and record["runs"]
    events = (tmp_path / "down" / "kv" / "kv_parse" / "events.jsonl").read_text().splitlines()
    reasons = [json.loads(e)["data"]["reason"] for e in events if '"model.fallback"' in e]
    assert "Connection" in reasons[0]
    assert all("failed earlier in this run" in r for r in reasons[1:]) and len(reasons) >= 3
