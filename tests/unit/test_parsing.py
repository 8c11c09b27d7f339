"""Model-output parsing on clean, messy, truncated and hostile replies."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from agents.parsing import ReplyParseError, extract_code, extract_json, parse_reply

HARNESS = '#include "cJSON.h"\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return 0; }'


class Out(BaseModel):
    archetype: str
    constraints: list[str] = Field(default_factory=list)


@pytest.mark.parametrize(
    "text",
    [
        '{"archetype": "round_trip", "constraints": ["a"]}',
        'Sure! Here it is:\n```json\n{"archetype": "round_trip", "constraints": ["a"]}\n```\nBye.',
        '```\n{"archetype": "round_trip", "constraints": ["a"],}\n```',  # trailing comma
        "{'archetype': 'round_trip', 'constraints': ['a']}",  # python quotes
        '{"archetype": "round_trip", "constraints": ["a"',  # truncated
        'The answer {"archetype": "round_trip", "constraints": ["a"]} as asked.',
        '```json\n{"archetype": "round_trip", /* c comment */ "constraints": ["a"]}\n```',
        '```c\nint main(void) { return 0; }\n```\n{"archetype": "round_trip", "constraints": ["a"]}',
    ],
)
def test_messy_json_is_recovered(text: str) -> None:
    out = parse_reply(text, Out)
    assert out.archetype == "round_trip"
    assert out.constraints == ["a"]


@pytest.mark.parametrize("text", ["", "no json here", "```c\nint x;\n```", "[1, 2, 3]", "{}"])
def test_no_object_raises(text: str) -> None:
    with pytest.raises(ReplyParseError):
        extract_json(text)


def test_wrong_schema_raises() -> None:
    with pytest.raises(ReplyParseError, match="does not match Out"):
        parse_reply('{"constraints": "not a list"}', Out)


def test_braces_inside_strings_do_not_confuse_the_scanner() -> None:
    assert extract_json('{"a": "}{", "b": 1} trailing }') == {"a": "}{", "b": 1}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"```c\n{HARNESS}\n```", HARNESS),
        (f"```C\n{HARNESS}\n```", HARNESS),
        (f"```cpp\n{HARNESS}\n```", HARNESS),
        (f"```\n{HARNESS}\n```", HARNESS),
        (f'```json\n{{"notes": []}}\n```\n```c\n{HARNESS}', HARNESS),  # unterminated fence
        (f"Here is the code:\n{HARNESS}", HARNESS),  # no fence at all
        (f"```c\nint helper;\n```\n```c\n{HARNESS}\n```", HARNESS),  # the longest block wins
    ],
)
def test_code_extraction(text: str, expected: str) -> None:
    assert extract_code(text) == expected + "\n"


def test_no_code() -> None:
    assert extract_code('{"notes": []}') is None
    assert extract_code("```python\nprint(1)\n```") is None
