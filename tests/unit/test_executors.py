"""Choosing an executor: bad choices and a missing or unreachable Ray stop in one line (InputError)."""

from __future__ import annotations

import socket
import sys

import pytest

from agent_graph.event_stream import emit, streaming_to
from fuzzkit.inputs import InputError
from logicfuzz.executor_open import open_executor
from logicfuzz.executor_ray import check_reachable, preflight


def test_unknown_executor_and_ray_address_without_ray_are_refused() -> None:
    with pytest.raises(InputError, match="--executor 'nope' is not one of local, ray"):
        open_executor("nope", 1)
    with pytest.raises(InputError, match="--ray-address needs --executor ray"):
        open_executor("local", 1, "127.0.0.1:6379")


def test_missing_ray_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # what an environment without Ray gives
    with pytest.raises(InputError, match=r"needs Ray: pip install -e '\.\[ray\]'"):
        preflight("")


def test_ray_address_must_answer() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        check_reachable(f"127.0.0.1:{port}")
        check_reachable(f"ray://127.0.0.1:{port}")
    with pytest.raises(InputError, match=f"cannot reach the Ray cluster at 127.0.0.1:{port}"):
        check_reachable(f"127.0.0.1:{port}", timeout=2)
    with pytest.raises(InputError, match="is not host:port"):
        check_reachable("just-a-host")
    check_reachable("auto")  # Ray finds the cluster itself


def test_events_reach_the_listener_only_inside_the_block() -> None:
    seen: list[str] = []
    emit("before")
    with streaming_to(seen.append):
        emit("build.done")
        with streaming_to(lambda step: 1 / 0):  # a broken listener does not stop the run
            emit("execution.done")
    emit("after")
    assert seen == ["build.done", "execution.done"]
