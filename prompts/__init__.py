"""Prompt templates: one reviewable text file per role, rendered by :func:`render`.

A template has a ``[system]`` part and a ``[user]`` part. Placeholders are ``{{name}}``; the
caller passes an explicit dict of values (never the whole state). A placeholder without a value,
or a value without a placeholder, is an error: prompts and code cannot drift apart silently.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

TEMPLATE_DIR = Path(__file__).parent
_PLACEHOLDER = re.compile(r"\{\{([a-z_][a-z0-9_]*)\}\}")


class PromptError(KeyError):
    """A template and its variables do not match."""


@lru_cache(maxsize=64)
def load_template(name: str) -> tuple[str, str]:
    """The ``(system, user)`` parts of ``prompts/<name>.txt``."""
    path = TEMPLATE_DIR / f"{name}.txt"
    if not path.is_file():
        raise PromptError(f"no prompt template {path.name} in {TEMPLATE_DIR}")
    text = path.read_text(encoding="utf-8")
    match = re.match(r"\s*\[system\]\n(.*?)\n\[user\]\n(.*)\Z", text, re.S)
    if not match:
        raise PromptError(f"{path.name} must have a [system] part and then a [user] part")
    return match.group(1).strip(), match.group(2).strip()


def placeholders(name: str) -> set[str]:
    """The placeholder names a template uses."""
    system, user = load_template(name)
    return set(_PLACEHOLDER.findall(system)) | set(_PLACEHOLDER.findall(user))


def render(name: str, variables: dict[str, str]) -> tuple[str, str]:
    """Fill a template; values are inserted verbatim (C braces need no escaping)."""
    wanted = placeholders(name)
    missing = wanted - variables.keys()
    extra = variables.keys() - wanted
    if missing or extra:
        raise PromptError(
            f"prompt {name}: missing values for {sorted(missing)}, unused values {sorted(extra)}"
        )

    def fill(text: str) -> str:
        return _PLACEHOLDER.sub(lambda m: str(variables[m.group(1)]), text)

    system, user = load_template(name)
    # Blank sections (an empty memory block) should not leave runs of empty lines behind.
    tidy = lambda s: re.sub(r"\n{3,}", "\n\n", fill(s)).strip()  # noqa: E731
    return tidy(system), tidy(user)
