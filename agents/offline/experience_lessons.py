"""The lessons a trajectory teaches: what worked, what sank it, what set wins apart from losses.

One function per prompt kind (``experience_success``, ``experience_failure``,
``experience_contrastive``); each returns 1-3 ``{"title", "description", "content"}`` items.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agents.offline.experience_reading import (
    advice,
    api_calls,
    build_errors,
    coverage,
    input_handling,
    item,
    lines,
    target,
)
from agents.offline.prompt_reader import PromptFacts
from agents.parsing import fenced_blocks
from long_term_memory.experience.trajectory_steps import (
    CrashStep,
    DirectionStep,
    FinalCrashStep,
    FixStep,
    RunStep,
    Step,
    StopStep,
    TrajectoryFacts,
    VerdictStep,
    one_line,
    read_trajectories,
)


def _fixes(steps: Sequence[Step], worked: bool) -> list[str]:
    return [one_line(s.content) for s in steps if isinstance(s, FixStep) and s.worked == worked]


def _directions(steps: Sequence[Step], *outcomes: str) -> list[DirectionStep]:
    return [s for s in steps if isinstance(s, DirectionStep) and str(s.outcome).startswith(outcomes)]


def _verdicts(steps: Sequence[Step], feasible: bool) -> list[str]:
    return [one_line(s.line()) for s in steps if isinstance(s, VerdictStep) and s.feasible == feasible]


def _crash_detail(steps: Sequence[Step], default: str) -> str:
    """The first crash step that is not a verdict (what crashed, where)."""
    return next(iter(lines(steps, CrashStep, FinalCrashStep)), default)


def success_items(facts: PromptFacts, trajectory: TrajectoryFacts, code: str) -> list[dict[str, str]]:
    """What made a run work: its call sequence, the fixes that made it build, what raised coverage."""
    proto, name, archetype = target(trajectory, facts.text("Target"))
    steps = trajectory.steps
    calls = api_calls(code, name)
    handling = input_handling(code)
    kind = archetype or "the chosen"
    where = _where(proto, archetype)
    items = [
        item(
            f"{kind} harness: {' -> '.join(calls[:4]) or name}",
            f"{where}.",
            f"A {kind} harness for {name} built, ran and reached {coverage(trajectory.outcome)}% line "
            f"coverage. It calls {', '.join(calls) or name} in that order"
            + (f" and {handling}" if handling else "")
            + ". Start from this call sequence.",
        )
    ]
    fixes = _fixes(steps, True)
    errors = build_errors(steps)
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
    gains = [one_line(d.line()).removeprefix("Success: ") for d in _directions(steps, "Success")]
    real = _verdicts(steps, True)
    if gains:
        items.append(
            item(
                f"Coverage raisers for {name}",
                f"{where}, once a first harness runs.",
                "These changes raised line coverage: " + "; ".join(gains[:4]) + ".",
            )
        )
    elif real:
        crash = _crash_detail(steps, real[0])
        items.append(
            item(
                f"{name} reaches a real library bug",
                f"{where}.",
                f"Fuzzing {name} with {', '.join(calls) or 'this sequence'} found a crash "
                f"judged a real library bug: {crash}. Keep this harness shape.",
            )
        )
    return items[:3]


def failure_items(facts: PromptFacts, trajectory: TrajectoryFacts, code: str) -> list[dict[str, str]]:
    """What sank a failed run: its last build error, a misuse crash, a target never reached."""
    proto, name, archetype = target(trajectory, facts.text("Target"))
    where = _where(proto, archetype)
    steps, measured = trajectory.steps, trajectory.outcome
    outcome = (f"{'SUCCESS' if trajectory.success else 'FAILURE'}: {measured.summary()}" if measured
               else facts.text("Outcome"))
    found = (
        _build_failure(steps, measured is not None and not measured.compiles, name, where),
        _misuse_crash(steps, name, where),
        _never_executed(steps, code, name, where),
    )
    items = [i for i in found if i is not None]
    bad = [one_line(d.line()) for d in _directions(steps, "Failed", "Noise")]
    if bad and len(items) < 3:
        items.append(
            item(
                f"Directions that did not pay off for {name}",
                f"{where}, in coverage optimization.",
                "Did not raise coverage: " + "; ".join(bad[:4]) + ".",
            )
        )
    if not items:
        stop = (lines(steps, StopStep) or ["the iteration budget ran out"])[-1]
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


def _build_failure(steps: Sequence[Step], never_built: bool, name: str, where: str) -> dict[str, str] | None:
    errors = build_errors(steps)
    if not never_built or not errors:
        return None
    failed = _fixes(steps, False)
    last = errors[-1]
    return item(
        f"Build failure on {name}: {last.split(';')[0][:70]}",
        f"{where}, when writing the harness.",
        f"The harness never compiled; the last error was: {last}. Instead: {advice(last)}."
        + (f" Fixes that did not help: {'; '.join(dict.fromkeys(failed))[:400]}." if failed else ""),
    )


def _misuse_crash(steps: Sequence[Step], name: str, where: str) -> dict[str, str] | None:
    misuse = _verdicts(steps, False)
    if not misuse:
        return None
    detail = _crash_detail(steps, misuse[0])
    return item(
        f"Harness misuse crash with {name}",
        f"{where}, when the harness crashes in its own code.",
        f"A crash was judged a harness bug, not a library bug: {detail}. Free only what the "
        f"harness allocates, check every return value of {name} before using it, and respect "
        "the API's preconditions on sizes and NULL.",
    )


def _never_executed(steps: Sequence[Step], code: str, name: str, where: str) -> dict[str, str] | None:
    if not any(isinstance(r, RunStep) and not r.crashed and str(r.target_hits) == "0" for r in steps):
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
    steps: list[Step]
    cov: float


def contrastive_items(facts: PromptFacts) -> list[dict[str, str]]:
    """What the successful trajectories share that the failed ones lack, and why those failed."""
    section = facts.sections.get("Trajectories", "")
    trajectories = read_trajectories(section)
    first = trajectories[0] if trajectories else TrajectoryFacts()
    proto, name, archetype = target(first, facts.text("Target"))
    where = _where(proto, archetype)
    runs = _runs(section, trajectories, name)
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


def _runs(section: str, trajectories: list[TrajectoryFacts], name: str) -> list[_Run]:
    """One :class:`_Run` per trajectory block, with the harness that follows it."""
    codes = [body for lang, body in fenced_blocks(section) if lang == "c"]
    return [_Run(t.success, set(api_calls(codes[i] if i < len(codes) else "", name)), t.steps,
                 float(coverage(t.outcome)) if t.outcome else 0.0)
            for i, t in enumerate(trajectories)]


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
    errors = [fails[-1] for r in losses if (fails := build_errors(r.steps))]
    misuse = [c for r in losses for c in _verdicts(r.steps, False)]
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
