"""The lessons a trajectory teaches: what worked, what sank it, what set wins apart from losses.

One function per prompt kind (``experience_success``, ``experience_failure``,
``experience_contrastive``); each returns 1-3 ``{"title", "description", "content"}`` items.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agents.offline.experience_reading import (
    advice,
    api_calls,
    build_errors,
    coverage,
    input_handling,
    item,
    steps,
    target,
)
from agents.offline.prompt_reader import PromptFacts
from agents.parsing import fenced_blocks

_SUBSECTION = re.compile(r"^### Trajectory (\d+): (SUCCESS|FAILURE)\s*$", re.M)


def success_items(facts: PromptFacts, trajectory: str, code: str) -> list[dict[str, str]]:
    """What made a run work: its call sequence, the fixes that made it build, what raised coverage."""
    proto, name, archetype = target(facts)
    calls = api_calls(code, name)
    handling = input_handling(code)
    kind = archetype or "the chosen"
    where = _where(proto, archetype)
    items = [
        item(
            f"{kind} harness: {' -> '.join(calls[:4]) or name}",
            f"{where}.",
            f"A {kind} harness for {name} built, ran and reached {coverage(facts.text('Outcome'))}% line "
            f"coverage. It calls {', '.join(calls) or name} in that order"
            + (f" and {handling}" if handling else "")
            + ". Start from this call sequence.",
        )
    ]
    fixes = [f.removesuffix(" (worked)") for f in steps(trajectory, "fix") if f.endswith("(worked)")]
    errors = build_errors(trajectory)
    if fixes:
        items.append(
            item(
                f"Compile fixes needed for {name}",
                f"{where}, when the first draft does not build.",
                "These fixes made the harness build: "
                + "; ".join(dict.fromkeys(fixes))
                + (f". Errors they fixed: {'; '.join(dict.fromkeys(errors))[:500]}" if errors else "")
                + ".",
            )
        )
    gains = [d.removeprefix("Success: ") for d in steps(trajectory, "direction") if d.startswith("Success")]
    real = [c for c in steps(trajectory, "crash") if "real library bug" in c]
    if gains:
        items.append(
            item(
                f"Coverage raisers for {name}",
                f"{where}, once a first harness runs.",
                "These changes raised line coverage: " + "; ".join(gains[:4]) + ".",
            )
        )
    elif real:
        crash = next((c for c in steps(trajectory, "crash") if "verdict" not in c), real[0])
        items.append(
            item(
                f"{name} reaches a real library bug",
                f"{where}.",
                f"Fuzzing {name} with {', '.join(calls) or 'this sequence'} found a crash "
                f"judged a real library bug: {crash}. Keep this harness shape.",
            )
        )
    return items[:3]


def failure_items(facts: PromptFacts, trajectory: str, code: str) -> list[dict[str, str]]:
    """What sank a failed run: its last build error, a misuse crash, a target never reached."""
    proto, name, archetype = target(facts)
    where = _where(proto, archetype)
    outcome = facts.text("Outcome")
    found = (
        _build_failure(trajectory, outcome, name, where),
        _misuse_crash(trajectory, name, where),
        _never_executed(trajectory, code, name, where),
    )
    items = [i for i in found if i is not None]
    bad = [d for d in steps(trajectory, "direction") if d.startswith(("Failed", "Noise"))]
    if bad and len(items) < 3:
        items.append(
            item(
                f"Directions that did not pay off for {name}",
                f"{where}, in coverage optimization.",
                "Did not raise coverage: " + "; ".join(bad[:4]) + ".",
            )
        )
    if not items:
        stop = (steps(trajectory, "stop") or ["the iteration budget ran out"])[-1]
        items.append(
            item(
                f"No usable harness for {name}",
                f"{where}.",
                f"The run stopped ({stop}) with {outcome}. Try a different archetype "
                "or a smaller call sequence that reaches the target first.",
            )
        )
    return items[:3]


def _where(proto: str, archetype: str) -> str:
    return f"Targets like {proto}" + (f" (archetype {archetype})" if archetype else "")


def _build_failure(trajectory: str, outcome: str, name: str, where: str) -> dict[str, str] | None:
    errors = build_errors(trajectory)
    if "compiles: no" not in outcome or not errors:
        return None
    failed = [
        f.removesuffix(" (did not fix the build)")
        for f in steps(trajectory, "fix")
        if f.endswith("(did not fix the build)")
    ]
    last = errors[-1]
    return item(
        f"Build failure on {name}: {last.split(';')[0][:70]}",
        f"{where}, when writing the harness.",
        f"The harness never compiled; the last error was: {last}. Instead: {advice(last)}."
        + (f" Fixes that did not help: {'; '.join(dict.fromkeys(failed))[:400]}." if failed else ""),
    )


def _misuse_crash(trajectory: str, name: str, where: str) -> dict[str, str] | None:
    misuse = [c for c in steps(trajectory, "crash") if "harness misuse" in c]
    if not misuse:
        return None
    detail = next((c for c in steps(trajectory, "crash") if "verdict" not in c), misuse[0])
    return item(
        f"Harness misuse crash with {name}",
        f"{where}, when the harness crashes in its own code.",
        f"A crash was judged a harness bug, not a library bug: {detail}. Free only what the "
        f"harness allocates, check every return value of {name} before using it, and respect "
        "the API's preconditions on sizes and NULL.",
    )


def _never_executed(trajectory: str, code: str, name: str, where: str) -> dict[str, str] | None:
    if not any("target hit 0x" in r for r in steps(trajectory, "run")):
        return None
    calls = api_calls(code, name)
    return item(
        f"{name} was never executed",
        f"{where}.",
        f"The harness ran but coverage shows 0 calls of {name}"
        + (f" (it called {', '.join(calls)})" if calls else "")
        + f". Call {name} unconditionally on every input, before any early return.",
    )


@dataclass
class _Run:
    ok: bool
    calls: set[str]
    body: str
    cov: float


def contrastive_items(facts: PromptFacts) -> list[dict[str, str]]:
    """What the successful trajectories share that the failed ones lack, and why those failed."""
    proto, name, archetype = target(facts)
    where = _where(proto, archetype)
    runs = _runs(facts.sections.get("Trajectories", ""), name)
    wins, losses = [r for r in runs if r.ok], [r for r in runs if not r.ok]
    items = []
    if wins:
        items.append(_win_pattern(wins, losses, name, where))
    if losses:
        items.append(_loss_cause(losses, len(runs), name, where))
    return items or [
        item(
            f"No comparable trajectories for {name}",
            f"{where}.",
            f"The {len(runs)} trajectories carried no steps to compare; keep the "
            "simplest sequence that calls the target on every input.",
        )
    ]


def _runs(text: str, name: str) -> list[_Run]:
    """One :class:`_Run` per ``### Trajectory N: SUCCESS|FAILURE`` subsection."""
    marks = list(_SUBSECTION.finditer(text))
    runs: list[_Run] = []
    for i, mark in enumerate(marks):
        body = text[mark.end() : marks[i + 1].start() if i + 1 < len(marks) else len(text)]
        code = next((b for lang, b in fenced_blocks(body) if lang == "c"), "")
        cov = re.search(r"line coverage: ([\d.]+)%", body)
        runs.append(
            _Run(
                mark.group(2) == "SUCCESS",
                set(api_calls(code, name)),
                body,
                float(cov.group(1)) if cov else 0.0,
            )
        )
    return runs


def _win_pattern(wins: list[_Run], losses: list[_Run], name: str, where: str) -> dict[str, str]:
    common = set.intersection(*(r.calls for r in wins))
    lost_calls: set[str] = set().union(*(r.calls for r in losses))
    missing = sorted(common - lost_calls) if losses else []
    best = max(wins, key=lambda r: r.cov)
    extra = sorted(best.calls - common)
    return item(
        f"Consistent pattern behind {name} successes",
        f"{where}.",
        f"All {len(wins)} successful attempts call {', '.join(sorted(common)) or name}"
        + (f"; the failed ones never call {', '.join(missing)}" if missing else "")
        + f". The best reached {best.cov:.1f}% line coverage"
        + (f" with the extra calls {', '.join(extra)}" if extra else "")
        + ".",
    )


def _loss_cause(losses: list[_Run], total: int, name: str, where: str) -> dict[str, str]:
    # The error each failed attempt ended on (its last failed build), not its first.
    errors = [fails[-1] for r in losses if (fails := build_errors(r.body))]
    misuse = [c for r in losses for c in steps(r.body, "crash") if "harness misuse" in c]
    cause = (
        f"the build failed ({errors[0]}); {advice(errors[0])}"
        if errors
        else f"a harness-misuse crash ({misuse[0]})"
        if misuse
        else "no running harness was reached"
    )
    return item(
        f"Shared cause of {name} failures",
        f"{where}.",
        f"{len(losses)} of {total} attempts failed; the common cause: {cause}.",
    )
