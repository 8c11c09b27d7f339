"""The offline model's experience-extraction skill: a trajectory in, 1–3 specific lessons out.

It reads the same prompt a real model gets (``experience_success``, ``experience_failure``,
``experience_contrastive``): the target line, the measured outcome, the trajectory's tagged
steps (``- [build] v2 failed: error: ...``) and the final harness, and distils what they show:
the archetype and call sequence that worked, the fixes that made it compile, the directions
that raised coverage, the error or harness-misuse crash that sank it. Deterministic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agents.offline.lesson_extract import actionable_items
from agents.offline.prompt_reader import PromptFacts, bullets
from agents.parsing import fenced_blocks

Reply = tuple[dict[str, Any], None]
_CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_LIBC = {
    "malloc",
    "calloc",
    "realloc",
    "free",
    "memcpy",
    "memmove",
    "memset",
    "memcmp",
    "strlen",
    "strcmp",
    "strncmp",
    "strcpy",
    "strncpy",
    "strdup",
    "strndup",
    "sizeof",
    "if",
    "for",
    "while",
    "switch",
    "return",
    "LLVMFuzzerTestOneInput",
    "fopen",
    "fclose",
    "fwrite",
    "fread",
    "fmemopen",
    "tmpfile",
    "snprintf",
    "printf",
    "abort",
    "exit",
    "assert",
    "defined",
}
_SUBSECTION = re.compile(r"^### Trajectory (\d+): (SUCCESS|FAILURE)\s*$", re.M)
_ERROR_ADVICE = (
    (re.compile(r"undeclared identifier '(mem\w+|str\w+)'"), "include <string.h> for {0}"),
    (re.compile(r"undeclared identifier '(malloc|calloc|free|realloc)'"), "include <stdlib.h> for {0}"),
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


def _target(facts: PromptFacts) -> tuple[str, str, str]:
    """(target prototype, target function name, archetype) from the Target section."""
    text = facts.text("Target")
    proto = re.search(r"target (.+?\))", text)
    name = re.search(r"\b(\w+)\s*\(", proto.group(1)) if proto else None
    archetype = re.search(r"archetype (\w+)", text)
    return (
        proto.group(1) if proto else text[:120],
        name.group(1) if name else "the target",
        archetype.group(1) if archetype else "",
    )


def _api_calls(code: str, target: str) -> list[str]:
    """Library calls of a harness, in order of first use (libc and keywords left out)."""
    prefix = re.match(r"[A-Za-z]+", target)
    calls = [c for c in dict.fromkeys(_CALL.findall(code)) if c not in _LIBC]
    if prefix and any(c.startswith(prefix.group(0)) for c in calls):
        calls = [c for c in calls if c.startswith(prefix.group(0))]
    return calls[:8]


def _input_handling(code: str) -> str:
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


def _steps(text: str, tag: str) -> list[str]:
    return [body for t, body in bullets(text) if t == tag]


def _advice(error: str) -> str:
    for pattern, advice in _ERROR_ADVICE:
        match = pattern.search(error)
        if match:
            return advice.format(*match.groups())
    return "read the first compiler error and compare the call with its prototype"


def _item(title: str, description: str, content: str) -> dict[str, str]:
    return {"title": title[:120], "description": description[:400], "content": content[:2000]}


def _coverage(outcome: str) -> str:
    found = re.search(r"line coverage: ([\d.]+)%", outcome)
    return found.group(1) if found else "?"


def _success_items(facts: PromptFacts, trajectory: str, code: str) -> list[dict[str, str]]:
    proto, name, archetype = _target(facts)
    calls = _api_calls(code, name)
    handling = _input_handling(code)
    kind = archetype or "the chosen"
    where = f"Targets like {proto}" + (f" (archetype {archetype})" if archetype else "")
    items = [
        _item(
            f"{kind} harness: {' -> '.join(calls[:4]) or name}",
            f"{where}.",
            f"A {kind} harness for {name} built, ran and reached {_coverage(facts.text('Outcome'))}% line "
            f"coverage. It calls {', '.join(calls) or name} in that order"
            + (f" and {handling}" if handling else "")
            + ". Start from this call sequence.",
        )
    ]
    fixes = [f.removesuffix(" (worked)") for f in _steps(trajectory, "fix") if f.endswith("(worked)")]
    errors = [b.split(": ", 1)[1] for b in _steps(trajectory, "build") if "failed: " in b]
    if fixes:
        items.append(
            _item(
                f"Compile fixes needed for {name}",
                f"{where}, when the first draft does not build.",
                "These fixes made the harness build: "
                + "; ".join(dict.fromkeys(fixes))
                + (f". Errors they fixed: {'; '.join(dict.fromkeys(errors))[:500]}" if errors else "")
                + ".",
            )
        )
    gains = [d.removeprefix("Success: ") for d in _steps(trajectory, "direction") if d.startswith("Success")]
    real = [c for c in _steps(trajectory, "crash") if "real library bug" in c]
    if gains:
        items.append(
            _item(
                f"Coverage raisers for {name}",
                f"{where}, once a first harness runs.",
                "These changes raised line coverage: " + "; ".join(gains[:4]) + ".",
            )
        )
    elif real:
        crash = next((c for c in _steps(trajectory, "crash") if "verdict" not in c), real[0])
        items.append(
            _item(
                f"{name} reaches a real library bug",
                f"{where}.",
                f"Fuzzing {name} with {', '.join(calls) or 'this sequence'} found a crash "
                f"judged a real library bug: {crash}. Keep this harness shape.",
            )
        )
    return items[:3]


def _failure_items(facts: PromptFacts, trajectory: str, code: str) -> list[dict[str, str]]:
    proto, name, archetype = _target(facts)
    where = f"Targets like {proto}" + (f" (archetype {archetype})" if archetype else "")
    outcome = facts.text("Outcome")
    items: list[dict[str, str]] = []
    errors = [b.split(": ", 1)[1] for b in _steps(trajectory, "build") if "failed: " in b]
    if "compiles: no" in outcome and errors:
        failed = [
            f.removesuffix(" (did not fix the build)")
            for f in _steps(trajectory, "fix")
            if f.endswith("(did not fix the build)")
        ]
        last = errors[-1]
        items.append(
            _item(
                f"Build failure on {name}: {last.split(';')[0][:70]}",
                f"{where}, when writing the harness.",
                f"The harness never compiled; the last error was: {last}. Instead: {_advice(last)}."
                + (f" Fixes that did not help: {'; '.join(dict.fromkeys(failed))[:400]}." if failed else ""),
            )
        )
    misuse = [c for c in _steps(trajectory, "crash") if "harness misuse" in c]
    if misuse:
        detail = next((c for c in _steps(trajectory, "crash") if "verdict" not in c), misuse[0])
        items.append(
            _item(
                f"Harness misuse crash with {name}",
                f"{where}, when the harness crashes in its own code.",
                f"A crash was judged a harness bug, not a library bug: {detail}. Free only what the "
                f"harness allocates, check every return value of {name} before using it, and respect "
                "the API's preconditions on sizes and NULL.",
            )
        )
    if any("target hit 0x" in r for r in _steps(trajectory, "run")):
        calls = _api_calls(code, name)
        items.append(
            _item(
                f"{name} was never executed",
                f"{where}.",
                f"The harness ran but coverage shows 0 calls of {name}"
                + (f" (it called {', '.join(calls)})" if calls else "")
                + f". Call {name} unconditionally on every input, before any early return.",
            )
        )
    bad = [d for d in _steps(trajectory, "direction") if d.startswith(("Failed", "Noise"))]
    if bad and len(items) < 3:
        items.append(
            _item(
                f"Directions that did not pay off for {name}",
                f"{where}, in coverage optimization.",
                "Did not raise coverage: " + "; ".join(bad[:4]) + ".",
            )
        )
    if not items:
        stop = (_steps(trajectory, "stop") or ["the iteration budget ran out"])[-1]
        items.append(
            _item(
                f"No usable harness for {name}",
                f"{where}.",
                f"The run stopped ({stop}) with {outcome}. Try a different archetype "
                "or a smaller call sequence that reaches the target first.",
            )
        )
    return items[:3]


@dataclass
class _Run:
    ok: bool
    calls: set[str]
    body: str
    cov: float


def _contrastive_items(facts: PromptFacts) -> list[dict[str, str]]:
    proto, name, archetype = _target(facts)
    where = f"Targets like {proto}" + (f" (archetype {archetype})" if archetype else "")
    text = facts.sections.get("Trajectories", "")
    marks = list(_SUBSECTION.finditer(text))
    runs: list[_Run] = []
    for i, mark in enumerate(marks):
        body = text[mark.end() : marks[i + 1].start() if i + 1 < len(marks) else len(text)]
        code = next((b for lang, b in fenced_blocks(body) if lang == "c"), "")
        cov = re.search(r"line coverage: ([\d.]+)%", body)
        runs.append(
            _Run(
                mark.group(2) == "SUCCESS",
                set(_api_calls(code, name)),
                body,
                float(cov.group(1)) if cov else 0.0,
            )
        )
    wins, losses = [r for r in runs if r.ok], [r for r in runs if not r.ok]
    items = []
    if wins:
        common = set.intersection(*(r.calls for r in wins))
        lost_calls: set[str] = set().union(*(r.calls for r in losses))
        missing = sorted(common - lost_calls) if losses else []
        best = max(wins, key=lambda r: r.cov)
        extra = sorted(best.calls - common)
        items.append(
            _item(
                f"Consistent pattern behind {name} successes",
                f"{where}.",
                f"All {len(wins)} successful attempts call {', '.join(sorted(common)) or name}"
                + (f"; the failed ones never call {', '.join(missing)}" if missing else "")
                + f". The best reached {best.cov:.1f}% line coverage"
                + (f" with the extra calls {', '.join(extra)}" if extra else "")
                + ".",
            )
        )
    if losses:
        # The error each failed attempt ended on (its last failed build), not its first.
        errors = [fails[-1] for r in losses
                  if (fails := [b.split(": ", 1)[1] for b in _steps(r.body, "build") if "failed: " in b])]
        misuse = [c for r in losses for c in _steps(r.body, "crash") if "harness misuse" in c]
        cause = (
            f"the build failed ({errors[0]}); {_advice(errors[0])}"
            if errors
            else f"a harness-misuse crash ({misuse[0]})"
            if misuse
            else "no running harness was reached"
        )
        items.append(
            _item(
                f"Shared cause of {name} failures",
                f"{where}.",
                f"{len(losses)} of {len(runs)} attempts failed; the common cause: {cause}.",
            )
        )
    return items or [
        _item(
            f"No comparable trajectories for {name}",
            f"{where}.",
            f"The {len(runs)} trajectories carried no steps to compare; keep the "
            "simplest sequence that calls the target on every input.",
        )
    ]


def distil(facts: PromptFacts) -> Reply:
    """Lessons for the roles in :data:`ROLES`, as ``{"memory_items": [...]}``."""
    if facts.role == "experience_contrastive":
        return {"memory_items": _contrastive_items(facts)}, None
    trajectory = facts.text("Trajectory")
    code = facts.code("Final harness")
    make = _success_items if facts.role == "experience_success" else _failure_items
    items: list[dict[str, Any]] = list(make(facts, trajectory, code))
    # The repairs the run made, as actions the next target of the family gets applied.
    actionable = actionable_items(_target(facts)[0], trajectory, code)
    return {"memory_items": [*items[:1], *actionable, *items[1:]][:3]}, None


ROLES = ("experience_success", "experience_failure", "experience_contrastive")
_SHOWN = re.compile(r"^### \[(MEM-[0-9a-fA-F]{8})\] (.*)$", re.M)


@dataclass
class ShownLesson:
    """One item of a prompt's ``## Relevant experience`` section."""

    item_id: str
    title: str
    text: str

    def sentences(self) -> list[str]:
        """The lesson's body as guidance sentences (the synthesis engine reads these)."""
        body = "\n".join(line for line in self.text.splitlines() if not line.startswith("- "))
        return [s.strip() for s in re.split(r"(?<=[.;])\s+|\n", body) if len(s.strip()) > 8]


def shown_lessons(facts: PromptFacts) -> list[ShownLesson]:
    """The experience items a prototyper or enhancer prompt shows, in order."""
    text = facts.sections.get("Relevant experience", "")
    marks = list(_SHOWN.finditer(text))
    return [ShownLesson(m.group(1), m.group(2).strip(),
                        text[m.end(): marks[i + 1].start() if i + 1 < len(marks) else len(text)].strip())
            for i, m in enumerate(marks)]


def applicable(facts: PromptFacts, names: set[str]) -> list[ShownLesson]:
    """Shown lessons that name one of ``names`` (the target, the API calls of the draft).

    The offline prototyper and enhancer cite these ids in their notes ("applied [MEM-...]"),
    which is how the Gatekeeper learns an item was used.
    """
    return [lesson for lesson in shown_lessons(facts)
            if names & set(re.findall(r"\b[A-Za-z_][A-Za-z0-9_]*\b", lesson.title + " " + lesson.text))]
