"""Releasing what a call left in a field of the object it was given: one statement, two users.

The field repair (:mod:`agents.improvement_blocks.fields`) and the offline engine's ``release_field`` lesson
(:mod:`agents.offline.lesson_apply`) insert the same release right after the same kind of call,
``if (obj != NULL && obj->doc != NULL) { doc_free(obj->doc); obj->doc = NULL; }``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence


def held_argument(line: str, names: Sequence[str], position: int) -> str:
    """The variable a call statement on ``line`` of one of ``names`` passes at ``position``, or ``""``.

    A cast before it is dropped; anything but a plain identifier (``&x``, ``a->b``) gives ``""``.
    """
    if not names:
        return ""
    call = re.search(rf"\b(?:{'|'.join(map(re.escape, names))})\s*\((.*)\)\s*;", line)
    args = _top_level(call.group(1)) if call else []
    arg = re.sub(r"^\s*\([^()]*\)\s*", "", args[position]).strip() if position < len(args) else ""
    return arg if re.fullmatch(r"[A-Za-z_]\w*", arg) else ""


def release_line(line: str, arg: str, field: str, releaser: str, why: str = "") -> str:
    """The release of ``arg->field`` with ``releaser``, indented as ``line`` (the call), with a newline."""
    indent = re.match(r"[ \t]*", line).group(0)  # type: ignore[union-attr]
    held = f"{arg}->{field}"
    note = f" {why}" if why else ""
    return f"{indent}if ({arg} != NULL && {held} != NULL) {{ {releaser}({held}); {held} = NULL; }}{note}\n"


def _top_level(text: str) -> list[str]:
    """``text`` split at the commas outside parentheses."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    return [*out, text[start:]] if text.strip() else []
