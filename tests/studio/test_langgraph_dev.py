"""`langgraph dev` loads the graph offline; its REST API shows every node and runs a target."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.studio, pytest.mark.toolchain]

REPO = Path(__file__).resolve().parents[2]
NODES = {"prepare", "supervisor", "function_analyzer", "prototyper", "build", "execution", "enhancer",
         "crash_analyzer", "crash_feasibility_analyzer", "coverage_analyzer", "memory_manager"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def call(base: str, method: str, path: str, body: Any = None, timeout: float = 30) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read() or b"null")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("studio") / "server.log"
    env = {**os.environ, "LANGSMITH_TRACING": "false", "LANGGRAPH_CLI_NO_ANALYTICS": "1",
           "LANGGRAPH_NO_VERSION_CHECK": "1"}
    env.pop("OPENAI_API_KEY", None)  # the graph must load without any key
    cli = Path(sys.executable).with_name("langgraph")
    with log.open("w") as out:
        proc = subprocess.Popen(
            [str(cli), "dev", "--port", str(port), "--host", "127.0.0.1", "--no-browser",
             "--no-reload"], cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                call(base, "GET", "/ok", timeout=2)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"langgraph dev did not start:\n{log.read_text()[-3000:]}")
                time.sleep(0.5)
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def assistant(base: str) -> str:
    found = call(base, "POST", "/assistants/search", {"graph_id": "logicfuzz", "limit": 5})
    assert found, "no assistant for graph id logicfuzz"
    return str(found[0]["assistant_id"])


def test_graph_has_every_node_and_an_input_schema(server: str) -> None:
    aid = assistant(server)
    graph = call(server, "GET", f"/assistants/{aid}/graph")
    names = {n["id"] for n in graph["nodes"]}
    assert NODES <= names
    edges = {(e["source"], e["target"]) for e in graph["edges"]}
    assert ("supervisor", "enhancer") in edges and ("build", "supervisor") in edges
    schemas = call(server, "GET", f"/assistants/{aid}/schemas")
    props = schemas["input_schema"]["properties"]
    assert {"benchmark", "function", "target", "library"} <= set(props)
    assert "fuzz_seconds" in json.dumps(schemas.get("context_schema") or schemas.get("config_schema"))


def test_run_on_a_prepared_state_completes(server: str, kv_benchmark: Path, tmp_path: Path) -> None:
    aid = assistant(server)
    thread = call(server, "POST", "/threads", {})
    body = {
        "assistant_id": aid,
        "input": {"benchmark": str(kv_benchmark), "function": "kv_parse", "work_dir": str(tmp_path)},
        "context": {"model": "offline", "fuzz_seconds": 2, "max_iterations": 0},
    }
    result = call(server, "POST", f"/threads/{thread['thread_id']}/runs/wait", body, timeout=300)
    assert result.get("termination_reason") == "iteration budget 0 used", result
    assert result["best"]["run"]["usable"] is True
    assert result["best"]["lines_percent"] > 0
