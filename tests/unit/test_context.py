"""Context precedence: what a caller (or Studio) sends wins; env vars fill only what was not sent."""

from __future__ import annotations

import pickle
from dataclasses import replace

import pytest

from agent_graph.context import Context


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGICFUZZ_FUZZ_SECONDS", "7")
    monkeypatch.setenv("LOGICFUZZ_MEMORY_MODE", "baseline")


def test_a_sent_value_wins_even_when_it_equals_the_default(env: None) -> None:
    assert Context(fuzz_seconds=60).fuzz_seconds == 60  # 60 is the default
    assert Context.from_mapping({"fuzz_seconds": 60}).fuzz_seconds == 60  # what Studio sends
    assert Context(memory_mode="").memory_mode == ""  # "" sent: the memory config file decides


def test_env_fills_what_was_not_sent(env: None) -> None:
    ctx = Context(model="offline")
    assert (ctx.fuzz_seconds, ctx.memory_mode) == (7, "baseline")


def test_copies_keep_their_values_and_do_not_reread_the_env(env: None,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = Context(fuzz_seconds=60)
    monkeypatch.setenv("LOGICFUZZ_FUZZ_SECONDS", "9")
    assert replace(ctx, model="offline").fuzz_seconds == 60
    assert pickle.loads(pickle.dumps(ctx)).fuzz_seconds == 60
    assert "_sent" not in vars(ctx)  # not a field: never shown to Studio or stored in results


def test_a_bad_env_value_is_named() -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LOGICFUZZ_MEMORY_MODE", "sometimes")
        with pytest.raises(ValueError, match="memory_mode 'sometimes'"):
            Context()
