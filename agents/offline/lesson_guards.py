"""Lessons about the input a library call cannot take, and the item shape every lesson shares.

A call that fails on the empty input (an assertion on the length, a read of a first byte that is
not there) is kept, and the harness returns early on zero bytes: the fixer does that after a crash
whose reproducer is empty, and states it as a ``min_size`` rule of 1 byte. When the next run then
ran, the lesson says so up front for the next harness of the library that calls the function:
``guard_empty_input(F)``. Rules are read as data (:class:`fuzzkit.guidance_facts.Rule`), never the
fix's sentence.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fuzzkit.guidance_facts import Rule
from long_term_memory.experience.trajectory_steps import CrashStep, HarnessStep, RunStep, Step, is_token


def through(step: Step) -> tuple[str, str] | None:
    """``(kind, function)`` of a triaged crash that came through a library call (None otherwise)."""
    if isinstance(step, CrashStep) and step.entry and is_token(step.kind):
        return step.kind, step.entry
    return None


def fixed_by(step: Step, kind: str) -> list[Rule]:
    """The rules of ``kind`` a fix round (``enhancer.fix``) states, in order."""
    if not (isinstance(step, HarnessStep) and step.by == "enhancer.fix" and step.version is not None):
        return []
    return [rule for rule in step.rules if rule.kind == kind]


def item(title: str, description: str, content: str, scope: dict[str, str], failure: str,
         action: str) -> dict[str, Any]:
    """One actionable item: what it applies to, the failure it prevents, the change to make."""
    return {"title": title[:120], "description": description[:400], "content": content[:2000],
            "scope": {k: v for k, v in scope.items() if v}, "failure": failure, "action": action}


def empty_input_items(steps: Sequence[Step]) -> list[dict[str, Any]]:
    """``guard_empty_input(F)`` for each call that crashed on the empty input and, guarded, ran.

    The fixer's guard counts only when the next run of the harness did not crash: the fuzzer runs
    the empty input first, so a call that fails on every input crashes there too.
    """
    found: list[str] = []
    crash = pending = ""
    for step in steps:
        if crashed := through(step):
            crash = crashed[1]
        elif any(rule.size == 1 for rule in fixed_by(step, "min_size")) and crash:
            pending = crash
        elif isinstance(step, RunStep) and pending:
            found += [] if step.crashed else [pending]
            pending = ""
    return [item(
        f"{function} fails on the empty input: return early on it",
        f"Harnesses of the library that call {function}.",
        f"A harness called {function}; the fuzz run crashed inside it on the empty input (zero "
        f"bytes), which the library does not check for. Returning early on the empty input kept "
        f"the call: a harness that calls {function} returns before any call when size is 0.",
        {"name": function}, f"empty-input@{function}", f"guard_empty_input({function})",
    ) for function in dict.fromkeys(found)]
