"""Pure parsing of model replies: a JSON object and, for harness roles, one C code block.

Real models wrap JSON in prose or fences, truncate it, add trailing commas, or answer with the
code only; these functions take all of that and either return data or raise ReplyParseError.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

import json_repair
from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```([A-Za-z0-9_+-]*)[ \t]*\n(.*?)(?:```|\Z)", re.S)
_C_LANGS = {"c", "cpp", "c++", "h", "cc"}


class ReplyParseError(ValueError):
    """The reply holds no usable JSON object or code."""


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """``(language, body)`` of each fenced block; an unterminated last fence runs to the end."""
    return [(m.group(1).lower(), m.group(2)) for m in _FENCE.finditer(text)]


def extract_code(text: str) -> str | None:
    """The harness: the longest C-like fenced block, else an unfenced reply that defines it."""
    blocks = [body for lang, body in fenced_blocks(text) if lang in _C_LANGS]
    if not blocks:
        blocks = [body for lang, body in fenced_blocks(text)
                  if not lang and "LLVMFuzzerTestOneInput" in body]
    if blocks:
        return max(blocks, key=len).strip() + "\n"
    if "LLVMFuzzerTestOneInput" in text and "{" in text:
        start = text.find("#include")
        return (text[start:] if start >= 0 else text).strip() + "\n"
    return None


def _first_object_span(text: str) -> str | None:
    start = text.find("{")
    if start < 0:
        return None
    depth, in_str, esc = 0, False, False
    for i in range(start, len(text)):
        ch = text[i]
        if in_str:
            esc = ch == "\\" and not esc
            if ch == '"' and not esc:
                in_str = False
            continue
        if ch == '"':
            in_str = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return text[start:]  # truncated: let json-repair close it


def extract_json(text: str) -> dict[str, Any]:
    """The reply's JSON object: a ```json fence first, then the first ``{...}`` outside code."""
    candidates = [body for lang, body in fenced_blocks(text) if lang in ("json", "")]
    prose = _FENCE.sub(" ", text)
    candidates.append(prose)
    for candidate in candidates:
        span = _first_object_span(candidate)
        if span is None:
            continue
        try:
            value = json.loads(span)
        except json.JSONDecodeError:
            value = json_repair.loads(span)
        if isinstance(value, dict) and value:
            return value
    raise ReplyParseError("the reply contains no JSON object")


def parse_reply(text: str, model: type[T]) -> T:
    """Validate the reply's JSON against ``model``; models give defaults for optional fields."""
    try:
        data = extract_json(text)
    except ReplyParseError:
        data = {}
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ReplyParseError(f"the reply's JSON does not match {model.__name__}: {exc}") from exc
