"""Hostile model replies through every parse entry point: documented results or errors only."""

from __future__ import annotations

import json

import pytest

from agents.crash_analyzer import CrashTriage
from agents.function_analyzer import FunctionAnalysis, FunctionAnalyzer
from agents.parsing import (
    MAX_JSON_DEPTH,
    MAX_REPLY_CHARS,
    ReplyLimitError,
    ReplyParseError,
    extract_code,
    extract_json,
    parse_reply,
)
from agents.prototyper import Prototyper
from benchkit.security.hostile_replies import (
    ENTRY_POINTS,
    GOOD_CODE_REPLY,
    GOOD_JSON,
    HARNESS,
    MEM_ITEM,
    REPLIES,
    check,
    run_agent,
)
from long_term_memory.experience.parsing import parse_memory_items
from long_term_memory.reply_text import nesting_depth, strip_reasoning

BOMB = '{"archetype": ' + "[" * 1000 + "]" * 1000 + "}"  # 2 KB
BIG_INT = '{"archetype": ' + "9" * 4301 + "}"


def test_the_corpus_is_as_large_as_promised() -> None:
    assert len(REPLIES) >= 80
    assert len({name for name, _ in REPLIES}) == len(REPLIES)
    assert len(ENTRY_POINTS) >= 14


@pytest.mark.parametrize("entry", ENTRY_POINTS, ids=lambda e: e.name)
def test_every_reply_gets_a_documented_result_or_error(entry) -> None:  # noqa: ANN001
    problems = [(name, problem) for name, reply in REPLIES
                if (problem := check(entry, reply)) is not None]
    assert problems == []


@pytest.mark.parametrize(
    "text",
    [
        '<think>{"archetype":"wrong"}</think>{"archetype":"right"}',
        '<thinking>\n{"archetype":"wrong"}\n</thinking>\n```json\n{"archetype":"right"}\n```',
        '<Reasoning>{"archetype":"wrong"}</Reasoning> {"archetype":"right"}',
        '{"archetype":"wrong"} hmm</think>\n{"archetype":"right"}',  # opener sat in the prompt
        '<think><think>{"a":1}</think>{"b":2}</think>{"archetype":"right"}',
    ],
)
def test_reasoning_blocks_are_not_the_answer(text: str) -> None:
    assert extract_json(text) == {"archetype": "right"}


def test_code_inside_a_think_block_is_ignored() -> None:
    reply = f"<think>```c\nint broken(\n```</think>\n```c\n{HARNESS}\n```"
    assert extract_code(reply) == HARNESS + "\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<think>cut mid-thought {\"a\": 1}", ""),
        ("  <think>never closed", "  "),
        ('{"a": 1} then <think>unclosed', '{"a": 1} then <think>unclosed'),  # not leading: text
        ("no tags at all", "no tags at all"),
        ("a <think>x</think> b <thinking>y</thinking> c", "a  b  c"),
    ],
)
def test_strip_reasoning(text: str, expected: str) -> None:
    assert strip_reasoning(text) == expected


def test_nesting_depth_counts_brackets_in_strings_and_ignores_stray_closers() -> None:
    assert nesting_depth('{"a": [1, {"b": 2}]}') == 3
    assert nesting_depth('"]]]]" [[[') == 3
    assert nesting_depth("}}}}" + "[" * 10) == 10


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (BOMB, "levels deep"),
        (BIG_INT, "4301 digits"),
        ('{"archetype": "' + "x" * (MAX_REPLY_CHARS + 1) + '"}', "characters, over the limit"),
        ('{"archetype": "' + "y" * 60_000, "too long to repair"),
    ],
    ids=["nesting", "long-int", "size", "repair-size"],
)
def test_a_broken_bound_gets_the_corrective_retry(reply: str, reason: str) -> None:
    result, model = run_agent(FunctionAnalyzer, [reply, GOOD_JSON])
    assert result.output.archetype == "stateless_parser"
    assert len(model.prompts) == 2
    retry = model.prompts[1][-1]
    assert retry.startswith("Your reply could not be used:") and reason in retry


def test_a_code_role_retries_a_bomb_and_keeps_the_good_harness() -> None:
    result, model = run_agent(Prototyper, [BOMB + "\n```c\n" + HARNESS + "\n```", GOOD_CODE_REPLY])
    assert result.code == HARNESS + "\n"
    assert result.output.notes == ["ok"]
    assert len(model.prompts) == 2


def test_two_unusable_replies_end_in_reply_parse_error_naming_the_bound() -> None:
    with pytest.raises(ReplyParseError, match="levels deep"):
        run_agent(FunctionAnalyzer, [BOMB, BOMB])


def test_a_model_with_only_defaults_does_not_swallow_a_bomb() -> None:
    """CrashTriage validates ``{}``; a refused reply must still be refused, not defaulted."""
    with pytest.raises(ReplyLimitError):
        parse_reply(BOMB, CrashTriage)
    assert parse_reply("no JSON at all", CrashTriage).crash_type == "unknown"


def test_nesting_at_the_bound_still_parses() -> None:
    nested = "[" * (MAX_JSON_DEPTH - 1) + "]" * (MAX_JSON_DEPTH - 1)
    out = parse_reply('{"archetype": "x", "n": ' + nested + "}", FunctionAnalysis)
    assert out.archetype == "x"
    with pytest.raises(ReplyLimitError, match=f"{MAX_JSON_DEPTH + 1} levels"):
        extract_json('{"n": ' + "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH + "}")


def test_parsed_values_are_finite_and_writable() -> None:
    data = extract_json('{"archetype": "a\\ud800b", "n": NaN, "m": 1e999, "k": [Infinity]}')
    assert data == {"archetype": "a?b", "n": None, "m": None, "k": [None]}
    json.dumps(data, allow_nan=False).encode("utf-8")
    code = extract_code("```c\n// \udcff\n" + HARNESS + "\n```")
    assert code is not None and code.encode("utf-8")


def test_an_undecodable_reply_is_stored_as_utf8_in_the_history() -> None:
    result, _ = run_agent(Prototyper, ["```c\n// \ud800\n" + HARNESS + "\n```"])
    for message in result.new_messages:
        message["content"].encode("utf-8")


def test_memory_items_are_read_after_the_think_block() -> None:
    decoy = json.dumps([{"title": "Decoy", "description": "From the thinking.", "content": "Wrong lesson."}])
    items = parse_memory_items(f"<think>{decoy}</think>\n{json.dumps([MEM_ITEM])}")
    assert [i.title for i in items] == [MEM_ITEM["title"]]
