"""parse_memory_items on messy, truncated and hostile model output: never fatal.

Each case either yields 1–3 valid items (the expected titles are checked) or raises
MemoryParseError, which the caller logs and skips; no other exception may escape.
"""

from __future__ import annotations

import json
import random

import pytest

from long_term_memory.experience import MemoryItem, MemoryParseError, parse_memory_items
from long_term_memory.experience.models import MAX_CONTENT, MAX_TITLE

GOOD = {"title": "Copy input", "description": "parsers of C strings",
        "content": "Copy data into malloc(size + 1) and NUL-terminate it before kv_parse."}
ITEMS = json.dumps({"memory_items": [GOOD]})
TWO = json.dumps([GOOD, {**GOOD, "title": "Free the tree", "content": "Call kv_free on every result."}])

# (reply, expected titles or None when the reply must be rejected)
CASES: list[tuple[str, list[str] | None]] = [
    (ITEMS, ["Copy input"]),
    (TWO, ["Copy input", "Free the tree"]),
    (f"```json\n{ITEMS}\n```", ["Copy input"]),
    (f"Sure! Here are the lessons:\n```json\n{TWO}\n```\nHope this helps.", ["Copy input", "Free the tree"]),
    (f"```\n{ITEMS}\n```", ["Copy input"]),
    (f"```JSON\n{ITEMS}", ["Copy input"]),  # unterminated fence
    (ITEMS[:-3], ["Copy input"]),  # truncated mid-object
    (ITEMS[: ITEMS.index("NUL")], ["Copy input"]),  # truncated inside a string
    (ITEMS.replace('"}]}', '",}],}'), ["Copy input"]),  # trailing commas
    (ITEMS.replace('"', "'"), ["Copy input"]),  # single quotes
    ('{memory_items: [{title: "Copy input", description: "d", content: "c long enough"}]}', ["Copy input"]),
    ("// lessons\n" + ITEMS + "\n// end", ["Copy input"]),
    (json.dumps({"items": [GOOD]}), ["Copy input"]),
    (json.dumps({"memories": [GOOD]}), ["Copy input"]),
    (json.dumps({"Memory Items": [GOOD]}), ["Copy input"]),
    (json.dumps({"result": {"memory_items": [GOOD]}}), ["Copy input"]),
    (json.dumps(GOOD), ["Copy input"]),  # a single object
    (json.dumps([[GOOD]]), ["Copy input"]),  # nested list
    (json.dumps(json.dumps({"memory_items": [GOOD]})), ["Copy input"]),  # double-encoded
    (json.dumps([{"name": "Named", "summary": "s", "insight": "use kv_count after parse"}]), ["Named"]),
    (json.dumps([{"Title": "Caps", "Description": "d", "Content": "c is here"}]), ["Caps"]),
    (json.dumps([{"title": "Listy", "description": "d", "content": ["step one", "step two"]}]), ["Listy"]),
    (json.dumps([{"title": "Dicty", "description": "d", "content": {"do": "x", "why": "y"}}]), ["Dicty"]),
    (json.dumps([{"title": 42, "description": True, "content": 3.5}]), ["42"]),
    (json.dumps([{"description": "only a description, long enough"}]), ["only a description, long enough"]),
    (json.dumps([{"title": "No desc", "content": "First sentence. Second sentence."}]), ["No desc"]),
    (json.dumps([{"content": "Content only: call kv_free."}]), ["Content only: call kv_free."]),
    (json.dumps([GOOD, GOOD, GOOD]), ["Copy input"]),  # duplicates collapse
    (json.dumps([{**GOOD, "title": f"T{i}"} for i in range(6)]), ["T0", "T1", "T2"]),  # cut to 3
    (json.dumps([{"title": "", "description": "", "content": ""}, GOOD]), ["Copy input"]),
    (json.dumps([None, 1, "x", GOOD]), ["Copy input"]),
    (json.dumps([{**GOOD, "title": "X" * 500}]), ["X" * (MAX_TITLE - 1) + "…"]),
    (json.dumps([{**GOOD, "content": "word " * 2000}]), [GOOD["title"]]),
    (json.dumps([{**GOOD, "title": "Ctrl\x00\x07 chars"}]), ["Ctrl chars"]),
    ("# Memory Item 1\n## Title Copy input\n## Description C strings\n## Content Copy then parse.\n\n"
     "# Memory Item 2\n## Title Free\n## Description all\n## Content kv_free it.", ["Copy input", "Free"]),
    ("**Title:** Bold title\n**Description:** when parsing\n**Content:** copy first", ["Bold title"]),
    ("Title: Plain\nDescription: d\nContent: multi\nline content", ["Plain"]),
    ("\ufeff" + ITEMS, ["Copy input"]),  # BOM
    (ITEMS + "\n" + json.dumps({"memory_items": [{**GOOD, "title": "Second"}]}), ["Copy input", "Second"]),
    ("<think>weighing options {not json}</think>\n" + ITEMS, ["Copy input"]),
    # rejected
    ("", None),
    ("   \n\t ", None),
    ("I could not find any reusable lesson in this trajectory.", None),
    ("null", None),
    ("42", None),
    ("true", None),
    ("[]", None),
    ("{}", None),
    (json.dumps({"memory_items": []}), None),
    (json.dumps({"error": "rate limited"}), None),
    (json.dumps([{"title": "Only a title"}]), None),
    (json.dumps([{"title": "<name>", "description": "<one sentence>", "content": "<what to do>"}]), None),
    (json.dumps([{"title": "T", "description": "...", "content": "N/A"}]), None),
    ("[" * 5000 + "]" * 5000, None),  # deep nesting
    ("{" * 3000, None),
    ('{"memory_items": [{"title": ', None),
    ("```json\n```", None),
    ("\x00\x01\x02\x03", None),
    ("\udcff broken surrogate", None),
    ("]]]]}}}}", None),
    ('"just a string"', None),
]


def test_corpus_is_large_enough() -> None:
    assert len(CASES) >= 50
    assert sum(expected is None for _, expected in CASES) >= 15


@pytest.mark.parametrize(("reply", "expected"), CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_malformed_outputs_are_never_fatal(reply: str, expected: list[str] | None) -> None:
    if expected is None:
        with pytest.raises(MemoryParseError):
            parse_memory_items(reply)
        return
    items = parse_memory_items(reply)
    assert [i.title for i in items] == expected
    for i in items:
        assert isinstance(i, MemoryItem) and i.title and i.description and i.content
        assert len(i.content) <= MAX_CONTENT and "\x00" not in i.text()


def test_non_text_replies_raise_the_specific_error() -> None:
    for value in (None, 3, b"bytes", ["list"]):
        with pytest.raises(MemoryParseError):
            parse_memory_items(value)


def test_random_mutations_are_never_fatal() -> None:
    rng = random.Random(20261121)
    seeds = [ITEMS, TWO, f"```json\n{TWO}\n```", CASES[35][0]]
    alphabet = '{}[]",:\'`\\ \n#*abcXYZ0123456789\x00é'
    recovered = 0
    for _ in range(1500):
        text = list(rng.choice(seeds))
        for _ in range(rng.randint(1, 12)):
            op, pos = rng.random(), rng.randrange(len(text) + 1)
            if op < 0.4 and text:
                del text[min(pos, len(text) - 1)]
            elif op < 0.8:
                text.insert(pos, rng.choice(alphabet))
            else:
                text = text[:pos]
        try:
            items = parse_memory_items("".join(text))
        except MemoryParseError:
            continue
        recovered += 1
        assert 1 <= len(items) <= 3 and all(i.content for i in items)
    assert recovered > 500  # most light damage is repaired, not just survived
