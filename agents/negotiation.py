"""What an OpenAI-compatible endpoint accepts, learned from its errors.

Servers differ: OpenAI takes ``response_format`` of type ``json_schema``; llama.cpp's server,
vLLM and Ollama constrain ``json_object`` by grammar and some answer ``json_schema`` with a
400, a 422 or even a 500 ("Input should be 'text' or 'json_object'"). So a request steps down,
json_schema → json_object → JSON read from the text, on any 4xx/5xx whose body names the
feature; tools likewise. A prompt larger than the server's context window is cut to the window
the error states (``context window of N``, ``maximum context length is N``) and sent once more.
"""

from __future__ import annotations

import json
import re
from typing import Any

# Words an endpoint uses when it refuses a feature (OpenAI, vLLM, Ollama, llama.cpp, LiteLLM).
_FEATURE_WORDS = {
    "structured": ("response_format", "json_schema", "json_object", "structured output", "guided"),
    "tools": ("tool", "function call", "function_call", "functions"),
}
_OVERFLOW = re.compile(
    r"context (?:window|length)|n_ctx|maximum context|too many tokens|prompt is too long"
    r"|exceeds? the (?:model'?s? )?(?:context|max)", re.I)
_WINDOW = re.compile(
    r"(?:context window of|maximum context length is|context length of|n_ctx\W{0,3}"
    r"|context size(?: is)?|max(?:imum)? (?:context|sequence) length(?: is| of)?)\D{0,12}(\d{3,7})",
    re.I)


def status_of(exc: Exception) -> int | None:
    """The HTTP status of a provider error, when it has one."""
    status = getattr(exc, "status_code", None) or getattr(getattr(exc, "response", None),
                                                          "status_code", None)
    return status if isinstance(status, int) else None


def error_text(exc: Exception) -> str:
    """The error's message and body, lower-cased (the body often holds the server's words)."""
    body = getattr(exc, "body", None)
    extra = json.dumps(body, default=str) if body is not None else ""
    return f"{exc} {extra}".lower()


def rejected_feature(exc: Exception, sent: dict[str, Any]) -> str | None:
    """The feature a 4xx/5xx refuses, when it names one that was sent.

    ``structured`` for a refused ``json_schema`` response format, ``json_object`` for a
    refused ``json_object`` one, ``tools`` for tools or tool choice.
    """
    status = status_of(exc)
    if status is None or not 400 <= status < 600:
        return None
    text = error_text(exc)
    response_format = sent.get("response_format")
    if isinstance(response_format, dict) and any(w in text for w in _FEATURE_WORDS["structured"]):
        return "structured" if response_format.get("type") == "json_schema" else "json_object"
    if "tools" in sent and any(w in text for w in _FEATURE_WORDS["tools"]):
        return "tools"
    return None


def without(feature: str, kwargs: dict[str, Any], step_to_object: bool) -> dict[str, Any]:
    """The request options one step down from a refused ``feature``."""
    if feature == "structured" and step_to_object:
        return {**kwargs, "response_format": {"type": "json_object"}}
    dropped = ("response_format",) if feature in ("structured", "json_object") else ("tools", "tool_choice")
    return {k: v for k, v in kwargs.items() if k not in dropped}


def overflow_window(exc: Exception) -> int | None:
    """The server's context window when ``exc`` says the prompt did not fit; 0 if it gave none."""
    status = status_of(exc)
    text = error_text(exc)
    if (status is not None and not 400 <= status < 600) or not _OVERFLOW.search(text):
        return None
    found = _WINDOW.search(text)
    return int(found.group(1)) if found else 0


_SERVER_COUNT = re.compile(r"(\d+) in the messages|requested tokens \((\d+)\)", re.I)


def server_prompt_tokens(exc: Exception) -> int | None:
    """How many tokens the server counted in the prompt, when its error says so."""
    found = _SERVER_COUNT.search(error_text(exc))
    return int(found.group(1) or found.group(2)) if found else None


def fit_budget(window: int, max_output_tokens: int, current_budget: int,
               server_count: int | None = None) -> tuple[int, int]:
    """(prompt token budget in our count, reply tokens) for a server window.

    ``current_budget`` is our count of the prompt that did not fit. The reply gets at most a
    quarter of the window; the prompt what is left, scaled by how the server's tokenizer counts
    against ours (``server_count / current_budget`` when the error gave its count), less a tenth.
    Without a window the budget is halved.
    """
    if window <= 0:
        return max(256, current_budget // 2), max_output_tokens
    reply = max(64, min(max_output_tokens, window // 4))
    ratio = server_count / current_budget if server_count and current_budget else 1.0
    return max(256, int((window - reply) * 0.9 / max(ratio, 1.0))), reply
