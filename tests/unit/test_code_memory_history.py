"""Message-history optimization: old turns become the code memory, tool pairs stay whole."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import tiktoken

from agent_graph.memory.code_memory import compress_history, render_code_memory, update_code_memory
from agent_graph.memory.messages import merge_agent_messages, to_langchain, validate_message
from agent_graph.memory.tokens import count_message_tokens, set_encoding

HARNESS = """#include <stdint.h>
#include "cJSON.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cJSON *json = cJSON_ParseWithLength((const char *)data, size);
  char *out = cJSON_Print(json);
  cJSON_free(out);
  cJSON_Delete(json);
  return 0;
}
"""
BIG = "```c\n" + HARNESS * 6 + "```"


@pytest.fixture(autouse=True)
def byte_tokens() -> Iterator[None]:
    set_encoding(tiktoken.Encoding(
        name="bytes_only", pat_str=r"[^\s]+|\s+",
        mergeable_ranks={bytes([i]): i for i in range(256)}, special_tokens={},
    ))
    yield
    set_encoding(None)


def memory() -> dict[str, Any]:
    return update_code_memory({}, "harness.c", HARNESS,
                              {"cJSON_ParseWithLength", "cJSON_Print", "cJSON_free", "cJSON_Delete"})


def sys_() -> dict[str, Any]:
    return {"role": "system", "content": "ROLE: enhancer"}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def asst(text: str, *ids: str) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": text}
    if ids:
        msg["tool_calls"] = [{"id": i, "name": "read_file", "args": {"file_path": "harness.c"}}
                             for i in ids]
    return msg


def tool(call_id: str, text: str = "ok") -> dict[str, Any]:
    return {"role": "tool", "content": text, "tool_call_id": call_id}


def conversation() -> list[dict[str, Any]]:
    return [sys_(), user("improve v1\n" + BIG), asst("v2\n" + BIG), user("improve v2\n" + BIG),
            asst("reading", "c1", "c2"), tool("c1", BIG), tool("c2", "summary"),
            asst("v3\n" + BIG), user("improve v3")]


def assert_tool_pairs_intact(messages: list[dict[str, Any]]) -> None:
    open_calls: set[str] = set()
    for msg in messages:
        validate_message(msg)
        if msg["role"] == "assistant":
            open_calls = {c["id"] for c in msg.get("tool_calls") or []}
        elif msg["role"] == "tool":
            assert msg["tool_call_id"] in open_calls, msg
            open_calls.discard(msg["tool_call_id"])
    to_langchain(messages)


def test_under_threshold_the_same_list_comes_back() -> None:
    history = conversation()
    assert compress_history(history, memory(), threshold_tokens=10**6) is history


@pytest.mark.parametrize("keep_last", [3, 4])
def test_cut_inside_a_tool_exchange_keeps_the_call_with_both_results(keep_last: int) -> None:
    history = conversation()
    out = compress_history(history, memory(), keep_last=keep_last, threshold_tokens=2000)
    # The last 3 or 4 messages start at a tool result: the tail is extended back to the
    # assistant message holding both calls, so it keeps 5 messages.
    assert out[0] == sys_()
    assert out[2:] == history[4:]
    assert [m["role"] for m in out] == ["system", "user", "assistant", "tool", "tool", "assistant",
                                        "user"]
    summary = out[1]["content"]
    assert summary.startswith(render_code_memory(memory()))
    assert summary.endswith("(LogicFuzz replaced the 3 earliest messages of this conversation, "
                            f"{count_message_tokens(history[1:4])} tokens, by the code memory above; "
                            "use read_file with full=true when you need a file's whole text.)")
    assert_tool_pairs_intact(out)
    assert count_message_tokens(out) < 0.6 * count_message_tokens(history)
    assert history == conversation()  # the input is not changed


def test_cut_at_a_plain_turn_keeps_exactly_the_last_n() -> None:
    history = conversation()
    out = compress_history(history, memory(), keep_last=2, threshold_tokens=2000)
    assert out[2:] == history[-2:]
    assert len(out) == 4
    assert_tool_pairs_intact(out)


def test_keep_nothing_leaves_system_and_summary() -> None:
    out = compress_history(conversation(), memory(), keep_last=0, threshold_tokens=2000)
    assert [m["role"] for m in out] == ["system", "user"]
    assert "replaced the 8 earliest messages" in out[1]["content"]


def test_nothing_old_to_drop_returns_the_same_list() -> None:
    history = [sys_(), asst("calling", "c1", "c2"), tool("c1", BIG), tool("c2", BIG)]
    assert compress_history(history, memory(), keep_last=1, threshold_tokens=10) is history


def test_result_is_a_valid_replace_update_for_the_reducer() -> None:
    history = conversation()
    out = compress_history(history, memory(), keep_last=4, threshold_tokens=2000)
    merged = merge_agent_messages({"enhancer": history}, {"enhancer": {"__replace__": out}})
    assert merged["enhancer"] == out


def test_without_summary_old_turns_are_only_dropped() -> None:
    history = conversation()
    with_summary = compress_history(history, memory(), keep_last=2, threshold_tokens=2000)
    dropped = compress_history(history, memory(), keep_last=2, threshold_tokens=2000, summary=False)
    assert dropped[0] == with_summary[0] and dropped[2:] == with_summary[2:] == history[-2:]
    assert "cJSON_ParseWithLength" in with_summary[1]["content"]  # the code memory
    assert "cJSON_ParseWithLength" not in dropped[1]["content"]
    assert dropped[1]["content"].startswith("(LogicFuzz dropped the 6 earliest messages")
