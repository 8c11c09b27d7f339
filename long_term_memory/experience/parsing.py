"""Parsing the extraction model's reply into 1–3 memory items, whatever shape it arrives in.

Models answer with a JSON array, an object wrapping the array, fenced or not, with prose around
it, truncated, with trailing commas or single quotes, with fields renamed, or in ReasoningBank's
Markdown layout (``# Memory Item 1`` / ``## Title`` ...), after ``<think>`` blocks.
:func:`parse_memory_items` accepts all of that (json-repair does the repairing) and raises
:class:`MemoryParseError` — and only that — when nothing usable is left; the caller logs it and
skips the write.
"""

from __future__ import annotations

import json
import re
from typing import Any

import json_repair
from pydantic import ValidationError

from long_term_memory.experience.models import (
    MAX_CONTENT,
    MAX_DESCRIPTION,
    MAX_ITEMS,
    MAX_TITLE,
    MemoryItem,
)
from long_term_memory.reply_text import (
    MAX_JSON_DEPTH,
    MAX_REPAIR_CHARS,
    MAX_REPLY_CHARS,
    nesting_depth,
    strip_reasoning,
)

_FENCE = re.compile(r"```([A-Za-z0-9_+-]*)[ \t]*\n?(.*?)(?:```|\Z)", re.S)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_PLACEHOLDER = re.compile(r"^\s*(<[^<>]*>|\.\.\.|…|tbd|todo|n/?a|none|null)\s*$", re.I)
_WRAPPERS = (
    "memory_items",
    "memoryitems",
    "items",
    "memories",
    "memory",
    "lessons",
    "strategies",
    "results",
    "data",
    "output",
)
_ALIASES = {
    "title": ("title", "name", "heading", "strategy", "lesson_title"),
    "description": ("description", "summary", "desc", "applicability", "when", "when_to_use", "applies_to"),
    "content": (
        "content",
        "details",
        "detail",
        "insight",
        "body",
        "text",
        "lesson",
        "steps",
        "advice",
        "strategy_content",
    ),
}
_MD_ITEM = re.compile(r"^#{1,3}\s*memory\s*item\b[^\n]*$", re.I | re.M)
_MD_FIELD = re.compile(
    r"^(?:#{1,4}\s*|\*\*|-\s*)?(title|description|content)\s*(?:\*\*)?\s*:?\s*"
    r"(?:\*\*)?\s*(.*)$",
    re.I,
)


class MemoryParseError(ValueError):
    """The reply holds no usable memory item; the extraction is skipped, the run goes on."""


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return str(value)
    if isinstance(value, list):
        return "\n".join(f"- {_text(v)}" if len(value) > 1 else _text(v) for v in value if v)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _clean(value: Any, limit: int) -> str:
    text = _CONTROL.sub("", _text(value)).strip()
    if _PLACEHOLDER.match(text):
        return ""
    if len(text) > limit:
        cut = text[: limit - 1]
        text = (cut.rsplit(" ", 1)[0] if " " in cut[-40:] else cut).rstrip() + "…"
    return text


def _field(raw: dict[str, Any], name: str) -> Any:
    lowered = {str(k).strip().lower().replace(" ", "_"): v for k, v in raw.items()}
    for alias in _ALIASES[name]:
        if lowered.get(alias) not in (None, "", []):
            return lowered[alias]
    return None


def _first_sentence(text: str, limit: int) -> str:
    sentence = re.split(r"(?<=[.!?])\s|\n", text.strip(), maxsplit=1)[0]
    return _clean(sentence, limit)


def _item(raw: Any) -> MemoryItem | None:
    if not isinstance(raw, dict):
        return None
    title = _clean(_field(raw, "title"), MAX_TITLE)
    description = _clean(_field(raw, "description"), MAX_DESCRIPTION)
    content = _clean(_field(raw, "content"), MAX_CONTENT)
    if not content:
        content = description
    if not content:
        return None
    description = description or _first_sentence(content, MAX_DESCRIPTION)
    title = title or _first_sentence(" ".join(description.split()[:10]), MAX_TITLE)
    lowered = {str(k).strip().lower().replace(" ", "_"): v for k, v in raw.items()}
    structured: dict[str, Any] = {
        key: lowered[key] for key in ("scope", "failure", "action") if lowered.get(key)}
    if "failure" not in structured and lowered.get("failure_signature"):
        structured["failure"] = lowered["failure_signature"]
    try:
        return MemoryItem(title=title, description=description, content=content, **structured)
    except ValidationError:
        try:  # a malformed structured part never costs the lesson's text
            return MemoryItem(title=title, description=description, content=content)
        except ValidationError:
            return None


def _unwrap(value: Any, depth: int = 0) -> list[Any]:
    """The list of item-like dicts inside a parsed value."""
    if depth > 4:
        return []
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("[", "{"):
            return _unwrap(_loads(stripped), depth + 1)
        return []
    if isinstance(value, list):
        out: list[Any] = []
        for element in value:
            out.extend(
                [element]
                if isinstance(element, dict) and _looks_like_item(element)
                else _unwrap(element, depth + 1)
            )
        return out
    if isinstance(value, dict):
        if _looks_like_item(value):
            return [value]
        lowered = {str(k).strip().lower().replace(" ", "_"): v for k, v in value.items()}
        for key in _WRAPPERS:
            if key in lowered:
                return _unwrap(lowered[key], depth + 1)
        if len(value) == 1:
            return _unwrap(next(iter(value.values())), depth + 1)
    return []


def _looks_like_item(value: dict[str, Any]) -> bool:
    return any(_field(value, name) is not None for name in ("title", "content", "description"))


def _json_sequence(text: str) -> list[Any]:
    """Complete JSON values one after another (some models send one object per item)."""
    decoder, pos = json.JSONDecoder(), 0
    values: list[Any] = []
    text = text.strip()
    while pos < len(text) and len(values) < 8:
        try:
            value, pos = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError):
            return []
        values.append(value)
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
    return values


def _loads(text: str) -> Any:
    if nesting_depth(text) > MAX_JSON_DEPTH:
        return None  # a bracket bomb: no parser recurses into it
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    values = _json_sequence(text)
    if len(values) > 1:
        return values
    if len(text) > MAX_REPAIR_CHARS:
        return None  # too long to repair; the Markdown layout may still hold items
    try:
        return json_repair.loads(text)
    except (ValueError, RecursionError, TypeError, IndexError, KeyError, AttributeError):
        return None


def _json_candidates(text: str) -> list[str]:
    fenced = [body for lang, body in _FENCE.findall(text) if lang.lower() in ("json", "", "jsonc")]
    out = [*fenced, text]
    for opener in ("[", "{"):
        start = text.find(opener)
        if start > 0:
            out.append(text[start:])
    return out


def _markdown_items(text: str) -> list[dict[str, str]]:
    """ReasoningBank's layout: ``# Memory Item i`` blocks with Title/Description/Content."""
    blocks = _MD_ITEM.split(text)[1:] if _MD_ITEM.search(text) else [text]
    items = []
    for block in blocks:
        fields: dict[str, list[str]] = {}
        current = ""
        for line in block.splitlines():
            match = _MD_FIELD.match(line.strip())
            if match:
                current = match.group(1).lower()
                fields[current] = [match.group(2)] if match.group(2) else []
            elif current:
                fields[current].append(line)
        item = {k: "\n".join(v).strip() for k, v in fields.items()}
        if item.get("content") or item.get("description"):
            items.append(item)
    return items


def parse_memory_items(text: Any) -> list[MemoryItem]:
    """The 1–3 memory items in a model reply (more are cut to the first three).

    Raises:
        MemoryParseError: no item with usable content could be recovered; the message says why.
    """
    if not isinstance(text, str):
        raise MemoryParseError(f"the reply is {type(text).__name__}, not text")
    text = strip_reasoning(text[:MAX_REPLY_CHARS])
    if not text.strip():
        raise MemoryParseError("the reply is empty")
    raws: list[Any] = []
    for candidate in _json_candidates(text):
        raws = _unwrap(_loads(candidate))
        if any(_item(r) for r in raws):
            break
    if not any(_item(r) for r in raws):
        raws = list(_markdown_items(text))
    items: list[MemoryItem] = []
    seen: set[str] = set()
    for raw in raws:
        item = _item(raw)
        if item is not None and item.content_hash() not in seen:
            seen.add(item.content_hash())
            items.append(item)
    if not items:
        snippet = " ".join(text.split())[:80]
        raise MemoryParseError(f"no memory item with a title and content in the reply ({snippet!r})")
    return items[:MAX_ITEMS]
