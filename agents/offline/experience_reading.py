"""Reading an experience prompt: the target, the calls a harness makes, the trajectory's steps.

The pieces the offline experience skill builds its lessons from (see
:mod:`agents.offline.experience_lessons`), and the advice it gives for a compiler error.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel

from agent_graph.memory.code_memory_c import C_KEYWORDS
from agents.offline.libc import LIBC
from fuzzkit.vocabulary import libc_released_by
from long_term_memory.experience.models import Outcome
from long_term_memory.experience.trajectory_steps import BuildStep, Step, TrajectoryFacts, one_line

_CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")
# The C library's memory functions <stdlib.h> declares (`malloc`, `free`...).
_STDLIB_MEMORY = sorted(n for n in {*libc_released_by(), *libc_released_by().values()}
                        if LIBC[n] == "<stdlib.h>")
NOT_API = frozenset(LIBC) | C_KEYWORDS | {"LLVMFuzzerTestOneInput"}  # never a library call
ERROR_ADVICE = (
    (re.compile(r"undeclared identifier '(mem\w+|str\w+)'"), "include <string.h> for {0}"),
    (re.compile(rf"undeclared identifier '({'|'.join(_STDLIB_MEMORY)})'"), "include <stdlib.h> for {0}"),
    (
        re.compile(r"(?:undeclared identifier|implicit declaration of function) '(\w+)'"),
        "{0} is not declared by the included headers: check its exact name in the Library API or "
        "include the header that declares it",
    ),
    (re.compile(r"unknown type name '(\w+)'"), "include the header that declares {0}"),
    (
        re.compile(r"too (?:few|many) arguments to function call"),
        "pass exactly the parameters of the prototype in the Library API",
    ),
    (
        re.compile(r"incompatible (?:pointer|integer)[^']*'([^']+)'"),
        "match the argument types of the prototype (cast or take the address as {0} needs)",
    ),
    (
        re.compile(r"no member named '(\w+)'"),
        "the struct is opaque: use the library's accessor functions instead of ->{0}",
    ),
    (re.compile(r"undefined reference to `?(\w+)"), "{0} is not in the built library: do not call it"),
)



def target(trajectory: TrajectoryFacts, text: str) -> tuple[str, str, str]:
    """(target prototype, target function name, archetype) from a trajectory's facts.

    ``text`` (the Target section) stands in for the prototype when the facts name no target.
    """
    return (trajectory.target or text[:120], trajectory.function or "the target", trajectory.archetype)


def api_calls(code: str, target: str) -> list[str]:
    """Library calls of a harness, in order of first use (libc and keywords left out)."""
    prefix = re.match(r"[A-Za-z]+", target)
    calls = [c for c in dict.fromkeys(_CALL.findall(code)) if c not in NOT_API]
    if prefix and any(c.startswith(prefix.group(0)) for c in calls):
        calls = [c for c in calls if c.startswith(prefix.group(0))]
    return calls[:8]


def input_handling(code: str) -> str:
    """How the harness turns fuzz bytes into arguments, as far as the code shows."""
    notes = []
    terminated = re.search(r"\[\s*size\s*\]\s*=\s*(?:'\\0'|0)\s*;", code)
    if re.search(r"malloc\(\s*size\s*\+\s*1\s*\)", code) and terminated:
        notes.append("copies the input into a NUL-terminated heap buffer of size+1")
    small = re.search(r"if\s*\(\s*size\s*<\s*(\d+)\s*\)\s*return", code)
    if small:
        notes.append(f"rejects inputs shorter than {small.group(1)} bytes")
    if "fmemopen" in code or "tmpfile" in code or "mkstemp" in code:
        notes.append("hands the input to the library as a file")
    return "; ".join(notes)


def build_errors(steps: Sequence[Step]) -> list[str]:
    """The errors of the failed builds among the trajectory steps, in order."""
    return [one_line(s.errors) for s in steps if isinstance(s, BuildStep) and not s.ok and s.errors]


def lines(steps: Sequence[Step], *kinds: type[BaseModel]) -> list[str]:
    """The lines of the steps of the given kinds, as a prompt shows them."""
    return [one_line(s.line()) for s in steps if isinstance(s, kinds)]


def advice(error: str) -> str:
    """What to do instead, for a compiler or linker error."""
    for pattern, hint in ERROR_ADVICE:
        match = pattern.search(error)
        if match:
            return hint.format(*match.groups())
    return "read the first compiler error and compare the call with its prototype"


def item(title: str, description: str, content: str) -> dict[str, str]:
    """A lesson item, each field cut to its length limit."""
    return {"title": title[:120], "description": description[:400], "content": content[:2000]}


def coverage(outcome: Outcome | None) -> str:
    """The line coverage percentage an outcome reports (``?`` when none)."""
    return f"{outcome.lines_percent:.1f}" if outcome else "?"
