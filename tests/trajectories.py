"""Trajectory steps for the experience tests, and extraction prompts rendered from them.

The steps are the models the trajectory builder writes (one per event it reads); a prompt is
built by the real ``build_extraction_prompt`` and ``prompts.render``, so the offline extractor
reads exactly what it reads in a run: the lines and the ``trajectory`` facts block beside them.
"""

from __future__ import annotations

from typing import Any

from agents.offline.prompt_reader import PromptFacts, read_prompt
from fuzzkit.api import FunctionDecl
from fuzzkit.guidance_facts import Rule
from long_term_memory.experience.extraction import build_extraction_prompt
from long_term_memory.experience.models import Outcome
from long_term_memory.experience.trajectory import Trajectory
from long_term_memory.experience.trajectory_steps import (
    AnalysisStep,
    BuildStep,
    CrashStep,
    DirectionStep,
    DroppedStep,
    FinalCrashStep,
    FixStep,
    HarnessStep,
    MisuseStep,
    RepairStep,
    RevertStep,
    RunStep,
    Step,
    StopStep,
    VerdictStep,
)
from prompts import render


def analysis(archetype: str) -> AnalysisStep:
    return AnalysisStep(step="analysis", archetype=archetype, confidence="HIGH")


def harness(version: int, by: str, *changes: str, added: tuple[str, ...] = (),
            rules: tuple[Rule, ...] = ()) -> HarnessStep:
    """A version written; ``rules``: what its changes ask as data (what the extractor reads)."""
    return HarnessStep(step="harness", version=version, by=by, changes=list(changes), added_calls=list(added),
                       rules=list(rules))


def build(version: int, errors: str | None = None) -> BuildStep:
    """A build that worked, or failed with ``errors``."""
    return BuildStep(step="build", version=version, ok=errors is None, errors=errors or "")


def run(version: int, hits: int = 0, lines: float = 0.0, crashed: bool = False) -> RunStep:
    return RunStep(step="run", version=version, crashed=crashed, target_hits=hits, lines=lines)


def crash(kind: str, entry: str = "", location: str = "library", allocated_in: str = "") -> CrashStep:
    return CrashStep(step="crash", kind=kind, location=location, entry=entry, allocated_in=allocated_in)


def verdict(feasible: bool = False) -> VerdictStep:
    return VerdictStep(step="verdict", verdict="library_bug" if feasible else "harness_misuse",
                       feasible=feasible)


def final_crash(kind: str, summary: str) -> FinalCrashStep:
    return FinalCrashStep(step="final_crash", kind=kind, summary=summary)


def reverted(version: int, reason: str = "did not run cleanly") -> RevertStep:
    return RevertStep(step="revert", version=version, reason=reason,
                      run_failed=reason.startswith("did not run cleanly"))


def dropped(version: int, direction: str, next_version: int) -> DroppedStep:
    return DroppedStep(step="dropped", version=version, direction=direction, next_version=next_version)


def stop(reason: str, gave_up: bool = False) -> StopStep:
    return StopStep(step="stop", reason=reason, gave_up=gave_up)


def fix(content: str, worked: bool = True) -> FixStep:
    return FixStep(step="fix", content=content, worked=worked)


def direction(outcome: str, text: str, evidence: str = "", misuse_crash: bool = False,
              calls: tuple[str, ...] = ()) -> DirectionStep:
    return DirectionStep(step="direction", outcome=outcome, direction=text, evidence=evidence,
                         misuse_crash=misuse_crash, calls=list(calls))


def repair(version: int, function: str, releaser: str, **data: Any) -> RepairStep:
    """A leaked result released (``type=``), or what a call left in a field (``field=``, ``maker=``...)."""
    return RepairStep(step="repair", version=version, next_version=version + 1, function=function,
                      releaser=releaser, **data)


def misuse(version: int, function: str, releaser: str, kind: str = "heap-use-after-free") -> MisuseStep:
    return MisuseStep(step="misuse", version=version, function=function, releaser=releaser, kind=kind)


def trajectory(target: FunctionDecl, steps: list[Step], code: str = "", success: bool = False,
               archetype: str = "", **outcome: Any) -> Trajectory:
    """A finished target's trajectory as the builder makes it (``outcome``: :class:`Outcome` fields)."""
    measured = {"compiles": True, "runs": success, **outcome}
    prototype = target.prototype().rstrip(";")
    query = f"project {target.name.split('_')[0]}; target {prototype}" + (
        f"; archetype {archetype}" if archetype else "")
    return Trajectory(f"p/{target.name}", query, Outcome(task_id=f"p/{target.name}", **measured), success,
                      steps, code, prototype, target.name, archetype)


def extraction_prompt(t: Trajectory, max_chars: int = 6000) -> PromptFacts:
    """The success or failure prompt of ``t``, rendered and read as the offline model reads it."""
    template, variables = build_extraction_prompt("success" if t.is_success else "failure", [t], max_chars)
    return read_prompt(*render(template, variables))
