"""Model reply text before any parsing: reasoning blocks removed, size and nesting measured.

Shared by the agents' reply parsing and the experience extraction's parsing (both read model
text, and the memory layer sits below the agents). Every function here is linear in the text,
so a hostile reply costs one pass however it is built.
"""

from __future__ import annotations

import re

MAX_REPLY_CHARS = 200_000
"""A reply longer than this is refused before parsing (a whole harness is a few thousand)."""

MAX_REPAIR_CHARS = 50_000
"""Invalid JSON longer than this is not handed to json-repair (pure Python, its cost grows fast)."""

MAX_JSON_DEPTH = 64
"""Brackets nested deeper than this are refused before ``json`` or json-repair recurse."""

REASONING_TAGS = ("think", "thinking", "reasoning", "reflection", "thought")
"""Tags in which reasoning models wrap their thoughts; what is inside them is not the answer."""

_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_TAG = re.compile(r"<(/?)(" + "|".join(REASONING_TAGS) + r")\s*>", re.I)


def strip_reasoning(text: str) -> str:
    """``text`` without its reasoning blocks (``<think>…</think>`` and the tags above).

    A closed block is removed. A closing tag without its opener (chat templates that put the
    opener in the prompt) removes everything before it. An opener that is never closed removes
    the rest of the reply when nothing but whitespace comes before it (a reply cut mid-thought);
    elsewhere it is left as text.
    """
    if "<" not in text:
        return text
    kept: list[str] = []
    pos = 0
    opener: re.Match[str] | None = None
    for tag in _TAG.finditer(text):
        closing, name = tag.group(1) == "/", tag.group(2).lower()
        if opener is None and not closing:
            kept.append(text[pos : tag.start()])
            opener = tag
        elif opener is not None and closing and name == opener.group(2).lower():
            opener, pos = None, tag.end()
        elif opener is None and closing:
            kept, pos = [], tag.end()
    if opener is None:
        kept.append(text[pos:])
    elif "".join(kept).strip():
        kept.append(text[opener.start() :])
    return "".join(kept)


def nesting_depth(text: str) -> int:
    """The deepest run of unclosed ``{``/``[`` in ``text``, strings included.

    Counting brackets inside strings too keeps the bound safe whatever json-repair later
    decides a string is; the count never goes below zero, so stray closers hide nothing.
    """
    depth = deepest = 0
    for ch in _NOT_BRACKET.sub("", text):
        if ch in "{[":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "}]" and depth:
            depth -= 1
    return deepest


def encodable(text: str) -> str:
    """``text`` with lone surrogates (undecodable bytes) replaced, so it can be written as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text
