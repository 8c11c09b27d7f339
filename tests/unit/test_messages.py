import copy
from collections.abc import Iterator
from typing import Annotated, Any

import pytest
import tiktoken
from langchain_core.messages import (
    AIMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from agent_graph.memory.messages import (
    REPLACE,
    RESET,
    TRUNCATION_MARKER,
    append_and_trim,
    from_langchain,
    merge_agent_messages,
    to_langchain,
    trim_messages_to_limit,
)
from agent_graph.memory.tokens import count_message_tokens, set_encoding


@pytest.fixture(autouse=True)
def byte_tokens() -> Iterator[None]:
    """Exact, machine-independent counts: one token per UTF-8 byte."""
    set_encoding(tiktoken.Encoding(
        name="bytes_only", pat_str=r"[^\s]+|\s+",
        mergeable_ranks={bytes([i]): i for i in range(256)}, special_tokens={},
    ))
    yield
    set_encoding(None)


def sys_(text: str = "You write libFuzzer harnesses.") -> dict[str, Any]:
    return {"role": "system", "content": text}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def asst(text: str, *call_ids: str) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": text}
    if call_ids:
        msg["tool_calls"] = [{"id": c, "name": "build", "args": {"n": i}}
                             for i, c in enumerate(call_ids)]
    return msg


def tool(call_id: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "content": text, "tool_call_id": call_id}


def conversation(last_question: str = "Coverage is 21%. Anything else?") -> list[dict[str, Any]]:
    return [
        sys_(),
        user("Write a harness for cJSON_Parse. " * 4),
        asst("Building two variants.", "c1", "c2"),
        tool("c1", "variant 1: error: undeclared identifier 'cJSON_Parse'"),
        tool("c2", "variant 2: built, 1 warning"),
        asst("Variant 2 builds; I will run it."),
        user("Coverage is 12%. Improve it."),
        asst("Adding cJSON_PrintUnformatted and cJSON_Minify calls.", "c3"),
        tool("c3", "built"),
        user(last_question),
        asst("Try cJSON_ParseWithOpts with require_null_terminated."),
    ]


# --- reducer ---------------------------------------------------------------------------------

def test_merge_appends_per_agent_without_mutating() -> None:
    old = {"enhancer": [user("a")], "prototyper": [user("p")]}
    new = {"enhancer": [asst("b")], "function_analyzer": [user("f")]}
    old_before, new_before = copy.deepcopy(old), copy.deepcopy(new)
    merged = merge_agent_messages(old, new)
    assert merged == {
        "enhancer": [user("a"), asst("b")],
        "prototyper": [user("p")],
        "function_analyzer": [user("f")],
    }
    assert old == old_before and new == new_before
    merged["prototyper"].append(user("x"))
    merged["enhancer"][1]["content"] = "changed"
    assert old == old_before and new == new_before


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (None, None, {}),
        (None, {"a": [user("x")]}, {"a": [user("x")]}),
        ({"a": [user("x")]}, None, {"a": [user("x")]}),
        ({}, {"a": []}, {"a": []}),
    ],
)
def test_merge_none_and_empty_inputs(old: Any, new: Any, expected: Any) -> None:
    assert merge_agent_messages(old, new) == expected


def test_merge_reset_clears_only_that_agent() -> None:
    old = {"enhancer": [user("a"), asst("b")], "prototyper": [user("p")]}
    merged = merge_agent_messages(old, {"enhancer": RESET})
    assert merged == {"prototyper": [user("p")]}
    assert merge_agent_messages(merged, {"enhancer": [user("again")]})["enhancer"] == [
        user("again")]
    assert merge_agent_messages(None, {"ghost": RESET}) == {}


def test_merge_replace_sets_history_wholesale() -> None:
    old = {"enhancer": [sys_(), user("a"), asst("b"), user("c")], "other": [user("o")]}
    merged = merge_agent_messages(old, {"enhancer": {REPLACE: [sys_(), user("c")]}})
    assert merged == {"enhancer": [sys_(), user("c")], "other": [user("o")]}
    assert len(old["enhancer"]) == 4


@pytest.mark.parametrize(
    "update",
    [
        "__clear__",
        {REPLACE: [user("a")], "extra": []},
        {"replace": [user("a")]},
        [{"content": "no role"}],
        [{"role": "robot", "content": "x"}],
        [{"role": "user", "content": None}],
        [{"role": "tool", "content": "result without its call id"}],
        [{"role": "user", "content": "x", "tool_calls": []}],
        [{"role": "assistant", "content": "", "tool_calls": [{"name": "f"}]}],
        42,
    ],
)
def test_merge_rejects_malformed_updates(update: Any) -> None:
    with pytest.raises(ValueError, match=r"agent_messages|message|tool"):
        merge_agent_messages({}, {"enhancer": update})


class _State(TypedDict, total=False):
    agent_messages: Annotated[dict[str, list[dict[str, Any]]], merge_agent_messages]


def test_reducer_inside_a_checkpointed_langgraph() -> None:
    def first(state: _State) -> dict[str, Any]:
        return {"agent_messages": {"enhancer": [user("u1"), asst("a1")], "other": [user("o")]}}

    def second(state: _State) -> dict[str, Any]:
        return {"agent_messages": {"enhancer": {REPLACE: [user("u2")]}, "other": RESET}}

    def third(state: _State) -> dict[str, Any]:
        return {"agent_messages": {"enhancer": [asst("a2")]}}

    builder = StateGraph(_State)
    for name, fn in (("first", first), ("second", second), ("third", third)):
        builder.add_node(name, fn)
    builder.add_edge(START, "first")
    builder.add_edge("first", "second")
    builder.add_edge("second", "third")
    builder.add_edge("third", END)
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    out = graph.invoke({"agent_messages": {"enhancer": [sys_()]}}, config)
    assert out["agent_messages"] == {"enhancer": [user("u2"), asst("a2")]}
    assert graph.get_state(config).values["agent_messages"] == out["agent_messages"]


# --- trimming --------------------------------------------------------------------------------

def _check_structure(result: list[dict[str, Any]], original: list[dict[str, Any]]) -> None:
    assert result[0] == original[0] and result[0]["role"] == "system"
    rest = result[1:]
    assert rest and rest[0]["role"] != "tool"
    seen_calls: dict[str, int] = {}
    for pos, msg in enumerate(rest):
        for call in msg.get("tool_calls") or []:
            seen_calls[call["id"]] = pos
        if msg["role"] == "tool":
            assert msg["tool_call_id"] in seen_calls, f"orphan tool result in {rest}"
    for call_id in seen_calls:  # a kept call keeps all its results
        assert any(m.get("tool_call_id") == call_id for m in rest)


def test_trim_returns_equal_copy_when_within_budget() -> None:
    msgs = conversation()
    result = trim_messages_to_limit(msgs, max_tokens=count_message_tokens(msgs))
    assert result == msgs
    result[1]["content"] = "changed"
    assert msgs == conversation()


LONG_QUESTION = "Coverage is 21%; the uncovered lines are in parse_string and print_number. " * 8


@pytest.mark.parametrize("last", ["Coverage is 21%. Anything else?", LONG_QUESTION])
@pytest.mark.parametrize("budget", range(75, 1300, 9))
def test_trim_respects_budget_and_keeps_tool_pairs(budget: int, last: str) -> None:
    msgs = conversation(last)
    full = count_message_tokens(msgs)
    floor = count_message_tokens([msgs[0], user(min(last, TRUNCATION_MARKER, key=len))])
    if budget < floor:
        with pytest.raises(ValueError, match="shorten the system prompt"):
            trim_messages_to_limit(msgs, max_tokens=budget)
        return
    result = trim_messages_to_limit(msgs, max_tokens=budget)
    assert msgs == conversation(last)
    assert count_message_tokens(result) <= min(budget, full)
    _check_structure(result, msgs)
    if budget >= count_message_tokens([msgs[0], *msgs[-2:]]):
        assert result[-2:] == msgs[-2:]  # the newest turn is kept whole when it fits
    else:  # else the newest user message (cut if needed), rather than an empty conversation
        newest_user = result[1]
        assert newest_user == msgs[-2] or (
            newest_user["content"].endswith(TRUNCATION_MARKER)
            and last.startswith(newest_user["content"][:-len(TRUNCATION_MARKER)]))
        assert result[2:] in ([], [msgs[-1]])
    untouched = [m for m in result[1:] if TRUNCATION_MARKER not in m["content"]]
    assert all(m in msgs for m in untouched)
    positions = [msgs.index(m) for m in untouched]
    assert positions == sorted(positions)


def test_two_tool_calls_and_two_results_dropped_together() -> None:
    msgs = conversation()
    full = count_message_tokens(msgs)
    # Just below the full size: the first user turn must go, and with it nothing else.
    result = trim_messages_to_limit(msgs, max_tokens=full - 1)
    _check_structure(result, msgs)
    assert [m["role"] for m in result[1:3]] == ["user", "assistant"]
    assert result[1] == msgs[6]  # starts on the next user message, not on "c1"/"c2" results
    assert not any(m.get("tool_call_id") in {"c1", "c2"} for m in result)


def test_trim_prefers_starting_on_a_user_message() -> None:
    msgs = conversation()
    tail_from_c3 = msgs[7:]
    budget = count_message_tokens([msgs[0], *tail_from_c3])
    result = trim_messages_to_limit(msgs, max_tokens=budget)
    assert result == [msgs[0], *msgs[9:]]


def test_newest_turn_too_big_keeps_truncated_user_message() -> None:
    msgs = [sys_(), user("old question"), asst("old answer"), user("X" * 5000)]
    result = trim_messages_to_limit(msgs, max_tokens=800)
    assert [m["role"] for m in result] == ["system", "user"]
    assert result[1]["content"].startswith("XXXX")
    assert result[1]["content"].endswith(TRUNCATION_MARKER)
    assert 700 < count_message_tokens(result) <= 800


def test_truncated_user_message_goes_before_kept_reply() -> None:
    msgs = [sys_(), user("Y" * 3000), asst("short reply")]
    result = trim_messages_to_limit(msgs, max_tokens=1000)
    assert [m["role"] for m in result] == ["system", "user", "assistant"]
    assert result[1]["content"].endswith(TRUNCATION_MARKER)
    assert result[2] == msgs[2]
    assert count_message_tokens(result) <= 1000


def test_orphan_tool_results_are_dropped_when_trimming() -> None:
    msgs = [sys_(), tool("gone", "result of a call trimmed earlier"), user("u" * 50), asst("a")]
    result = trim_messages_to_limit(msgs, max_tokens=count_message_tokens(msgs) - 1)
    assert result == [msgs[0], msgs[2], msgs[3]]


@pytest.mark.parametrize(
    ("msgs", "budget"),
    [
        ([sys_("S" * 500), user("hi")], 300),
        ([sys_("S" * 500), asst("no user message at all")], 300),
        # room for the system prompt but not for the marker of a cut user message
        ([sys_(), user("old"), asst("a"), user("Q" * 400)], 90),
    ],
)
def test_budget_below_system_prompt_is_a_clear_error(msgs: Any, budget: int) -> None:
    with pytest.raises(ValueError, match="raise max_tokens or shorten the system prompt"):
        trim_messages_to_limit(msgs, max_tokens=budget)


def test_trim_with_fallback_estimate_respects_budget() -> None:
    set_encoding(None)
    msgs = conversation() * 1
    result = trim_messages_to_limit(msgs, max_tokens=150)
    assert count_message_tokens(result) <= 150
    _check_structure(result, msgs)


# --- append_and_trim -------------------------------------------------------------------------

def test_append_and_trim_within_budget_returns_new_messages() -> None:
    history = conversation()[:7]
    new = conversation()[7:]
    value = append_and_trim(history, new, max_tokens=10_000)
    assert value == new
    merged = merge_agent_messages({"enhancer": history}, {"enhancer": value})
    assert merged["enhancer"] == conversation()


def test_append_and_trim_over_budget_returns_replacement() -> None:
    history = conversation()[:7]
    new = conversation()[7:]
    value = append_and_trim(history, new, max_tokens=300)
    assert isinstance(value, dict) and set(value) == {REPLACE}
    merged = merge_agent_messages({"enhancer": history}, {"enhancer": value})["enhancer"]
    assert count_message_tokens(merged) <= 300
    assert merged[0] == history[0] and merged[-1] == new[-1]
    assert history == conversation()[:7]


# --- LangChain converters --------------------------------------------------------------------

def test_round_trip_through_langchain() -> None:
    msgs = conversation() + [{"role": "user", "content": "named", "name": "supervisor"}]
    lc = to_langchain(msgs)
    assert [type(m) for m in lc[:4]] == [SystemMessage, HumanMessage, AIMessage, ToolMessage]
    assert lc[2].tool_calls[1]["id"] == "c2" and lc[2].tool_calls[1]["args"] == {"n": 1}
    assert lc[3].tool_call_id == "c1"
    assert from_langchain(lc) == msgs


def test_from_langchain_flattens_text_blocks_and_rejects_other_types() -> None:
    ai = AIMessage(content=[{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {}},
                            {"type": "text", "text": "b"}])
    assert from_langchain([ai]) == [{"role": "assistant", "content": "ab"}]
    with pytest.raises(ValueError, match="FunctionMessage"):
        from_langchain([FunctionMessage(content="x", name="f")])
