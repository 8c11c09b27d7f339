"""Comments that mark parts of a generated harness, shared by whoever writes and reads them.

Each block an improvement adds opens with ``/* LF improve: <its direction> */``: the offline
engine writes it, the improve prompt asks a model for it, and a crash's line in the harness then
names the direction that caused it (:func:`agents.improvement_blocks.block_at`). A guard against
the empty input goes after ``/* @LF:GUARD */`` where the skeleton has one.
"""

from __future__ import annotations

import re

from fuzzkit.guidance_facts import Rule
from fuzzkit.input_flow import EMPTY_GUARD

IMPROVE_MARK = "LF improve:"


_ENTRY = re.compile(r"LLVMFuzzerTestOneInput\s*\([^)]*\)\s*\{")


def guard_empty_input(code: str, rules: list[Rule] | None = None) -> tuple[str, str | None]:
    """The harness returning early on an empty input, and a sentence saying so.

    For a crash whose reproducer is empty: the library's precondition (an assertion on a
    zero length, say) is not what the fuzzer should spend its time on. ``None`` when the
    harness already has such a guard or no entry point to put it in. ``rules`` gets the guard
    as data too (``min_size`` 1).
    """
    if EMPTY_GUARD.search(code):
        return code, None
    marker = code.find("/* @LF:GUARD */")
    if marker >= 0:
        at = code.index("\n", marker) + 1
    else:
        entry = _ENTRY.search(code)
        if entry is None:
            return code, None
        at = entry.end()
        at = code.index("\n", at) + 1 if "\n" in code[at:] else at
    guard = "  if (size == 0) return 0; /* LF fix: the library fails on an empty input */\n"
    how = "return early on an empty input (the crash input is empty)"
    if rules is not None:
        rules.append(Rule(kind="min_size", size=1, text=how))
    return code[:at] + guard + code[at:], how
