"""Pure parsing of model replies: a JSON object and, for harness roles, one C code block.

Real models wrap JSON in prose or fences, truncate it, add trailing commas, think aloud in
``<think>`` blocks, or answer with the code only; these functions take all of that and either
return data or raise ReplyParseError. Hostile replies are bounded before any parser sees them:
at most ``MAX_REPLY_CHARS`` characters, brackets nested at most ``MAX_JSON_DEPTH`` deep,
numbers of at most ``MAX_NUMBER_DIGITS`` digits, and json-repair (pure Python) only on
candidates up to ``MAX_REPAIR_CHARS``; what breaks a bound raises :class:`ReplyLimitError`,
whose message tells the model what to send instead (the corrective retry quotes it).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, TypeVar

import json_repair
from pydantic import BaseModel, ValidationError

from long_term_memory.reply_text import (
    MAX_JSON_DEPTH,
    MAX_REPAIR_CHARS,
    MAX_REPLY_CHARS,
    encodable,
    nesting_depth,
    strip_reasoning,
)

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```([A-Za-z0-9_+-]*)[ \t]*\n(.*?)(?:```|\Z)", re.S)
_C_LANGS = {"c", "cpp", "c++", "h", "cc"}

MAX_NUMBER_DIGITS = 100
"""A JSON integer with more digits is refused (Python refuses 4,300 with a bare ValueError)."""

MAX_ERROR_CHARS = 600
RETRY_NOTE = "Your reply could not be used"  # how a retry turn starts (agents.base)
"""A parse error quoted back to the model is cut to this length."""

__all__ = [
    "MAX_ERROR_CHARS", "MAX_JSON_DEPTH", "MAX_NUMBER_DIGITS", "MAX_REPAIR_CHARS", "MAX_REPLY_CHARS",
    "ReplyLimitError", "ReplyParseError", "extract_code", "extract_json", "fenced_blocks",
    "parse_reply", "strip_reasoning",
]


class ReplyParseError(ValueError):
    """The reply holds no usable JSON object or code."""


class ReplyLimitError(ReplyParseError):
    """The reply breaks a parsing bound (size, nesting, number length); asking again is the fix."""


def _bounded(text: str) -> str:
    """The reply without reasoning blocks, once it is known to be within the size bound."""
    if not isinstance(text, str):
        raise ReplyParseError(f"the reply is {type(text).__name__}, not text")
    if len(text) > MAX_REPLY_CHARS:
        raise ReplyLimitError(
            f"the reply is {len(text)} characters, over the limit of {MAX_REPLY_CHARS}; "
            "send only what the task asks for")
    return strip_reasoning(text)


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """``(language, body)`` of each fenced block; an unterminated last fence runs to the end."""
    return [(m.group(1).lower(), m.group(2)) for m in _FENCE.finditer(text)]


def extract_code(text: str) -> str | None:
    """The harness: the longest C-like fenced block, else an unfenced reply that defines it.

    Reasoning blocks are ignored; undecodable characters become U+FFFD.

    Raises:
        ReplyLimitError: the reply is over ``MAX_REPLY_CHARS``.
    """
    text = _bounded(text)
    blocks = [body for lang, body in fenced_blocks(text) if lang in _C_LANGS]
    if not blocks:
        blocks = [body for lang, body in fenced_blocks(text)
                  if not lang and "LLVMFuzzerTestOneInput" in body]
    if blocks:
        return encodable(max(blocks, key=len).strip()) + "\n"
    if "LLVMFuzzerTestOneInput" in text and "{" in text:
        start = text.find("#include")
        return encodable((text[start:] if start >= 0 else text).strip()) + "\n"
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


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_NUMBER_DIGITS:
        raise ReplyLimitError(
            f"the reply's JSON has a number of {len(digits)} digits, over the limit of "
            f"{MAX_NUMBER_DIGITS}; write long values as strings")
    return int(digits)


def _no_constant(name: str) -> None:
    """``NaN`` and ``Infinity`` are not JSON; they read as null (a required field then says so)."""
    return None


def _clean(value: Any) -> Any:
    """Parsed JSON made safe to store: finite floats, encodable strings (its depth is already bounded)."""
    if isinstance(value, str):
        return encodable(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {encodable(str(k)): _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _load(span: str) -> Any:
    """One candidate span as JSON (repaired when needed); ``None`` when nothing can be read.

    Raises:
        ReplyLimitError: the span nests too deep, holds a too-long number, or is invalid JSON
            too long to repair.
    """
    depth = nesting_depth(span)
    if depth > MAX_JSON_DEPTH:
        raise ReplyLimitError(
            f"the reply's JSON nests {depth} levels deep, over the limit of {MAX_JSON_DEPTH}; "
            "send the flat object the task describes")
    try:
        return json.loads(span, parse_int=_bounded_int, parse_constant=_no_constant)
    except json.JSONDecodeError:
        pass
    except RecursionError as exc:  # unreachable below the depth bound; kept as a second fence
        raise ReplyLimitError("the reply's JSON nests too deep; send a flat object") from exc
    if len(span) > MAX_REPAIR_CHARS:
        raise ReplyLimitError(
            f"the reply's JSON is invalid and {len(span)} characters long, too long to repair "
            f"(limit {MAX_REPAIR_CHARS}); send one valid, shorter JSON object")
    try:
        return json_repair.loads(span)
    except (ValueError, RecursionError, TypeError, IndexError, KeyError, AttributeError):
        return None  # json-repair gave up: this candidate holds no object


def extract_json(text: str) -> dict[str, Any]:
    """The reply's JSON object: a ```json fence first, then the first ``{...}`` outside code.

    Reasoning blocks (``<think>…</think>`` and similar) are ignored. Non-finite numbers read as
    ``None``; undecodable characters become U+FFFD.

    Raises:
        ReplyLimitError: the reply or its JSON breaks a bound (size, depth, number length).
        ReplyParseError: the reply contains no JSON object.
    """
    text = _bounded(text)
    candidates = [body for lang, body in fenced_blocks(text) if lang in ("json", "")]
    prose = _FENCE.sub(" ", text)
    candidates.append(prose)
    refused: ReplyLimitError | None = None
    for candidate in candidates:
        span = _first_object_span(candidate)
        if span is None:
            continue
        try:
            value = _load(span)
        except ReplyLimitError as exc:
            refused = refused or exc
            continue
        if isinstance(value, dict) and value:
            return _clean(value)
    if refused is not None:
        raise refused
    raise ReplyParseError("the reply contains no JSON object")


def parse_reply(text: str, model: type[T]) -> T:
    """Validate the reply's JSON against ``model``; models give defaults for optional fields.

    A reply without any JSON object validates as ``{}`` (roles that answer with code alone).

    Raises:
        ReplyLimitError: the reply breaks a parsing bound.
        ReplyParseError: the JSON does not match ``model``.
    """
    try:
        data = extract_json(text)
    except ReplyLimitError:
        raise
    except ReplyParseError:
        data = {}
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        detail = str(exc)[:MAX_ERROR_CHARS]
        raise ReplyParseError(f"the reply's JSON does not match {model.__name__}: {detail}") from exc
    except (ValueError, RecursionError, TypeError) as exc:  # a validator that failed otherwise
        raise ReplyParseError(
            f"the reply's JSON does not match {model.__name__}: {type(exc).__name__}: "
            f"{str(exc)[:MAX_ERROR_CHARS]}") from exc
