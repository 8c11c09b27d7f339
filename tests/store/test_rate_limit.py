"""One rate limit across workers, and a 429 that waits instead of failing the target."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agent_graph.context import Context
from agents.function_analyzer import FunctionAnalyzer
from agents.llm import get_chat_model, model_name
from agents.rate_limit import RateLimit, retry_after
from prompts import placeholders
from tests.fake_openai import FakeOpenAI, Reply, json_reply

ROOT = Path(__file__).resolve().parents[2]
KEY_ENV = "LOGICFUZZ_TEST_FAKE_KEY"
ANALYSIS = {"archetype": "stateless_parser", "confidence": "HIGH", "reasoning": "parses a string",
            "constraints": [], "related_functions": []}


class FakeTime:
    """A clock that moves only when someone sleeps; it remembers every sleep."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now, self.slept = start, []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 6))
        self.now += seconds


def test_requests_and_tokens_per_minute_with_a_fake_clock(tmp_path: Path) -> None:
    t = FakeTime()
    limit = RateLimit(str(tmp_path / "rl.sqlite"), "e1", rpm=2, clock=t.clock, sleep=t.sleep)
    for _ in range(5):
        limit.acquire(10)
    assert t.slept == [60.0, 60.0] and limit.granted == [1000.0] * 2 + [1060.0] * 2 + [1120.0]
    t2 = FakeTime()
    tokens = RateLimit(str(tmp_path / "rl.sqlite"), "e2", tpm=100, clock=t2.clock, sleep=t2.sleep)
    for _ in range(3):
        tokens.acquire(60)  # one call of 60 tokens per minute fits, two do not
    assert t2.slept == [60.0, 60.0]
    tokens.pause(7.5)  # a 429: the next call waits it out first
    tokens.acquire(1)
    assert t2.slept[-1] == 7.5


WORKER = r"""
import json, sys
from agents.rate_limit import RateLimit
limit = RateLimit(sys.argv[1], "shared-endpoint", rpm=4, window_s=1.0)
for _ in range(4):
    limit.acquire(5)
print(json.dumps(limit.granted))
"""


@pytest.mark.parametrize("where", ["sqlite", "postgresql"])
def test_two_processes_share_one_budget(where: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    store = request.getfixturevalue("pg_url") if where == "postgresql" else str(tmp_path / "rl.sqlite")
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, store], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    windows: Counter[float] = Counter()
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err[-2000:]
        windows.update(json.loads(out))
    # 8 calls against 4 per window: never more than 4 in one window, so at least two windows
    assert sum(windows.values()) == 8 and max(windows.values()) <= 4 and len(windows) >= 2


def test_retry_after_is_read_from_either_header() -> None:
    class Response:
        status_code = 429

        def __init__(self, headers: dict[str, str]) -> None:
            self.headers = headers

    class Limited(Exception):
        def __init__(self, headers: dict[str, str]) -> None:
            self.response = Response(headers)

    assert retry_after(Limited({"retry-after": "3"})) == 3.0
    assert retry_after(Limited({"retry-after-ms": "250"})) == 0.25
    assert retry_after(Limited({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}),
                       now=1445412480.0) == 10.0
    assert retry_after(Limited({"retry-after": "soon"})) == 5.0
    assert retry_after(Limited({"retry-after": "99999"})) == 300.0
    assert retry_after(ValueError("no status")) is None


def test_429_with_retry_after_waits_and_the_call_succeeds(pg_url: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-fake")
    limited = Reply(status=429, error="rate limited", headers={"retry-after": "2"})
    with FakeOpenAI([limited, limited, limited, json_reply(ANALYSIS)], lifetime=60) as server:
        ctx = Context(model="openai:fake-model", base_url=server.url, api_key_env=KEY_ENV, max_retries=0,
                      request_timeout=5.0, store=pg_url)
        t = FakeTime(start=time.time())
        rate = RateLimit(pg_url, "fake#openai:fake-model", clock=t.clock, sleep=t.sleep)
        agent = FunctionAnalyzer(get_chat_model(ctx), model=model_name(ctx.model), rate=rate)
        values: dict[str, Any] = {name: f"<{name}>" for name in placeholders("function_analyzer")}
        result = agent.run(values)
        assert result.output.archetype == "stateless_parser"
        assert len(server.requests) == 4
    assert t.slept == [2.0, 2.0, 2.0]  # each 429's Retry-After, waited through the shared store
    with psycopg.connect(pg_url) as db:
        blocked = db.execute("SELECT blocked_until FROM lf_rate_limit WHERE endpoint = %s",
                             ("fake#openai:fake-model",)).fetchone()[0]
    assert blocked == t.now  # every worker would have waited until then too
