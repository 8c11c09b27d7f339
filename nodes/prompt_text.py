"""What a build or run log may put into a prompt: redacted, then capped.

Compiler errors and sanitizer reports quote whatever the harness made them quote: a
``#error`` line of a megabyte, a file it ``#include``d, text it printed before crashing.
They reach the enhancer's and the crash analyzer's prompts, the run's events and the
experience bank, so they pass through :func:`for_prompt` where they enter the state.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from long_term_memory.experience.redaction import redact

MAX_LOG_CHARS = 8000
MAX_FIELD_CHARS = 2000


def for_prompt(text: str, limit: int = MAX_LOG_CHARS) -> str:
    """``text`` with secrets replaced, then cut to ``limit`` characters (head and tail kept)."""
    clean = redact(text).text
    if len(clean) <= limit:
        return clean
    marker = f"\n[... {len(clean) - limit} characters cut ...]\n"
    keep = max(0, limit - len(marker))
    head = keep * 2 // 3
    return clean[:head] + marker + clean[len(clean) - (keep - head) :]


def crash_for_prompt(crash: Mapping[str, Any]) -> dict[str, Any]:
    """A parsed sanitizer report with every text field passed through :func:`for_prompt`."""
    out: dict[str, Any] = {}
    for key, value in crash.items():
        if isinstance(value, str):
            out[key] = for_prompt(value, MAX_FIELD_CHARS)
        elif key == "frames" and isinstance(value, list):
            out[key] = [
                {k: for_prompt(v, MAX_FIELD_CHARS) if isinstance(v, str) else v for k, v in frame.items()}
                if isinstance(frame, dict) else frame
                for frame in value
            ]  # fmt: skip
        else:
            out[key] = value
    return out
