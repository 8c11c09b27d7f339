"""A finished target, read from its final graph state: the outcome, the query, the trajectory.

Everything comes from measurements the graph recorded: the state (build, run, coverage,
crash verdict, counters, session memory) and the target's ``events.jsonl`` audit log, plus the
first compiler errors of each failed build from ``v<N>/build.log``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fuzzkit.api import FunctionDecl
from fuzzkit.guidance_facts import Rule, valid_rules
from long_term_memory.experience.config import ExperienceConfig
from long_term_memory.experience.lessons import RELEASE_NAME
from long_term_memory.experience.models import Outcome
from long_term_memory.experience.rules import is_success
from long_term_memory.experience.trajectory_steps import (
    AnalysisStep,
    BuildStep,
    ConstraintStep,
    CrashStep,
    DirectionStep,
    DroppedStep,
    FinalCrashStep,
    FixStep,
    HarnessStep,
    IterationStep,
    MisuseStep,
    RepairStep,
    RevertStep,
    RunStep,
    Step,
    StopStep,
    VerdictStep,
)

__all__ = ["Step", "Trajectory", "outcome_from_state", "released_result", "target_query", "task_id_of",
           "trajectory_from_state"]
_ERROR_LINE = re.compile(r"\berror: .*")


@dataclass
class Trajectory:
    """One attempt at a target, as the extraction prompt shows it."""

    task_id: str
    query: str
    outcome: Outcome
    is_success: bool
    steps: list[Step] = field(default_factory=list)
    harness: str = ""
    target: str = ""  # the target's prototype, without its ';'
    function: str = ""  # the target's name
    archetype: str = ""


def _pct(run: Mapping[str, Any], key: str) -> float:
    return float(((run.get("coverage") or {}).get(key) or {}).get("percent", 0.0) or 0.0)


def task_id_of(state: Mapping[str, Any]) -> str:
    """``<project>/<function>``: one target of one library."""
    function = state.get("function") or (state.get("target") or {}).get("name", "?")
    return f"{state.get('project') or '?'}/{function}"


def target_query(state: Mapping[str, Any], problem: str = "") -> str:
    """What describes the current target for retrieval: project, signature, archetype, constraints."""
    parts = [f"project {state.get('project') or '?'}"]
    if state.get("target"):
        parts.append(f"target {FunctionDecl.from_dict(dict(state['target'])).prototype().rstrip(';')}")
    analysis = state.get("analysis") or {}
    if analysis.get("archetype"):
        parts.append(f"archetype {analysis['archetype']}")
    if analysis.get("constraints"):
        parts.append("constraints: " + "; ".join(str(c) for c in analysis["constraints"][:6]))
    if analysis.get("related_functions"):
        parts.append("related: " + ", ".join(str(f) for f in analysis["related_functions"][:8]))
    if problem:
        parts.append("problem: " + " ".join(problem.split())[:300])
    return "; ".join(parts)


def harness_runs(state: Mapping[str, Any]) -> bool:
    """Whether the target reached a running harness.

    Its result ran cleanly, or it ran, reached the target and crashed where triage judged the
    library at fault: a bug found ends the target with the harness that found it, which runs.
    """
    best = state.get("best") or {}
    run = best.get("run") or state.get("run") or {}
    if run.get("usable"):
        return True
    verdict = state.get("crash_analysis") or {}
    reached = run.get("target_hits") or run.get("seed_target_hits")  # a sample file's crash in it counts
    return bool(run.get("crashed") and reached and verdict.get("feasible")
                and verdict.get("version") == run.get("version"))


def outcome_from_state(
    state: Mapping[str, Any], run_id: str, attempt: int = 0, task_id: str | None = None
) -> Outcome:
    """The measured outcome of a finished target (the same facts ``result_record`` reports)."""
    best = state.get("best") or {}
    run = best.get("run") or state.get("run") or {}
    build = best.get("build") or state.get("build") or {}
    last_run = state.get("run") or {}
    verdict = state.get("crash_analysis") or {}
    counters = state.get("counters") or {}
    usage = state.get("usage") or {}
    crashed = bool(state.get("crash"))
    return Outcome(
        task_id=task_id or task_id_of(state),
        run_id=run_id,
        attempt=attempt,
        compiles=bool(build.get("ok")),
        runs=harness_runs(state),
        crashed=crashed,
        crashed_real=bool(crashed and last_run.get("crashed") and verdict.get("feasible")),
        lines_percent=_pct(run, "lines"),
        branches_percent=_pct(run, "branches"),
        fix_rounds=int(counters.get("fix_rounds_total", 0)),
        # a block dropped from an improvement broke the harness as much as a whole one
        dropped=int(counters.get("dropped_improvements", 0)) + int(counters.get("dropped_blocks", 0)),
        model_calls=sum(int(u.get("calls", 0)) for u in usage.values()),
        iterations=int(counters.get("iterations", 0)),
        harness_versions=int(counters.get("harness_versions", 0)),
        termination_reason=str(state.get("termination_reason") or ""),
    )


def _read_events(work_dir: Path) -> list[dict[str, Any]]:
    path = work_dir / "events.jsonl"
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict):
            out.append(event)
    return out


def _build_errors(work_dir: Path, version: Any, limit: int = 2) -> str:
    log = work_dir / f"v{version}" / "build.log"
    if not log.is_file():
        return ""
    found = _ERROR_LINE.findall(log.read_text(encoding="utf-8", errors="replace"))
    return "; ".join(dict.fromkeys(found))[:400] if found else ""


def _repair_step(event: Mapping[str, Any]) -> Step | None:
    """A leaked result an improvement's block kept and released (``improvement.block_repaired``).

    Listed at the end of the trajectory, where a long one keeps its steps: the extractor makes
    each into a lesson that releases such results up front.
    """
    data = event.get("data") or {}
    function, releaser = data.get("function"), data.get("releaser")
    if event.get("type") != "improvement.block_repaired" or not (function and releaser):
        return None
    return RepairStep(step="repair", version=data.get("version"), next_version=data.get("next_version"),
                      function=function, releaser=releaser, type=str(data.get("type", "?")),
                      field=str(data.get("field") or ""), maker=str(data.get("maker", "?")),
                      holder=str(data.get("holder", "?")))


_RELEASE_VERB = re.compile(RELEASE_NAME, re.I)
_OWNERSHIP_KINDS = ("heap-use-after-free", "double-free")


def _misuse_steps(events: list[dict[str, Any]], work_dir: Path) -> list[Step]:
    """Each result the harness released that its object still owned, from a crash judged misuse.

    A use-after-free or double free of a block allocated inside ``F`` and released first inside
    ``R`` (a releaser, called by the harness) where that version's harness keeps ``F``'s result
    and passes it to ``R``: what ``F`` hands back was not the harness's to release. Listed at the
    end of the trajectory, where a long one keeps its steps: the extractor makes each a lesson.
    """
    out: list[Step] = []
    for i, event in enumerate(events):
        data = event.get("data") or {}
        made, freed, version = data.get("allocated_in"), data.get("freed_first_in"), data.get("version")
        if (event.get("type") != "crash.triaged" or data.get("kind") not in _OWNERSHIP_KINDS
                or not (made and freed and version) or _RELEASE_VERB.search(made)
                or not _RELEASE_VERB.search(freed)):
            continue
        verdict = next((e.get("data") or {} for e in events[i + 1:] if e.get("type") == "crash.verdict"), {})
        path = work_dir / f"v{version}" / "harness.c"
        code = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
        if verdict.get("feasible") is False and released_result(code, made, freed):
            step = MisuseStep(step="misuse", version=version, function=made, releaser=freed,
                              kind=data["kind"])
            if step not in out:
                out.append(step)
    return out


def released_result(code: str, function: str, releaser: str) -> bool:
    """Whether ``code`` passes a variable holding what ``function`` returned to ``releaser``."""
    held = re.findall(rf"\b([A-Za-z_]\w*)\s*=\s*(?:\([^()]*\)\s*)?\b{re.escape(function)}\s*\(", code)
    return any(re.search(rf"\b{re.escape(releaser)}\s*\(\s*(?:\([^()]*\)\s*)?{re.escape(v)}\s*\)", code)
               for v in dict.fromkeys(held))


def _event_step(event: Mapping[str, Any], work_dir: Path) -> Step | None:
    kind, data = event.get("type", ""), event.get("data") or {}
    version = data.get("version")
    if kind == "harness.written":
        return HarnessStep(step="harness", version=version, by=str(data.get("by", "?")),
                           changes=[str(c) for c in data.get("calls") or data.get("fixes")
                                    or data.get("directions") or []],
                           added_calls=[str(c) for c in data.get("added_calls") or []],
                           rules=_rules(data.get("rules")))
    if kind == "build.done":
        ok = bool(data.get("ok"))
        return BuildStep(step="build", version=version, ok=ok,
                         errors="" if ok else _build_errors(work_dir, version))
    if kind == "execution.done":
        lines = data.get("lines") or {}
        pct = lines.get("percent", 0.0) if isinstance(lines, dict) else lines
        return RunStep(step="run", version=version, crashed=bool(data.get("crashed")),
                       target_hits=data.get("target_hits", 0), lines=float(pct or 0))
    if kind == "crash.triaged":
        # A leak's first frame is the function that allocated what leaked (a public one, which
        # a harness could call directly too).
        frames = str(data.get("signature") or "").partition("@")[2].split("<")
        maker = frames[0] if data.get("kind") == "leak" and len(frames) > 2 else ""
        return CrashStep(step="crash", kind=str(data.get("kind") or ""),
                         location=str(data.get("location") or ""), entry=str(data.get("entry") or ""),
                         allocated_in=maker if maker != data.get("entry") else "")
    if kind == "crash.verdict":
        verdict = data.get("verdict")
        return VerdictStep(step="verdict", verdict=None if verdict is None else str(verdict),
                           feasible=bool(data.get("feasible")))
    return _loop_step(kind, data)


def _loop_step(kind: str, data: Mapping[str, Any]) -> Step | None:
    version = data.get("version")
    if kind == "iteration.measured":
        return IterationStep(step="iteration", iteration=data.get("iteration"), outcome=data.get("outcome"),
                             lines=data.get("lines"), delta=data.get("delta"))
    if kind == "improvement.block_dropped":
        return DroppedStep(step="dropped", version=version, direction=str(data.get("direction", "")),
                           next_version=data.get("next_version"))
    if kind == "iteration.reverted":
        reason = str(data.get("reason", ""))
        return RevertStep(step="revert", version=version, reason=reason,
                          run_failed=reason.startswith(_NOT_CLEAN))
    if kind == "guard.fired":
        reason = str(data.get("reason", ""))
        return StopStep(step="stop", reason=reason, guard=str(data.get("guard")), fired=True,
                        gave_up=_gave_up(reason))
    return None


# How the memory manager and the router word what the extractor needs as a flag: said once here.
_NOT_CLEAN = "did not run cleanly"
_HARNESS_CRASH, _GAVE_UP = "crash caused by the harness", "gave up"
_MISUSE_DROP = "crashed the harness (harness misuse)"


def _rules(data: Any) -> list[Rule]:
    """The rules an event or a memory entry logged, without their sentences (the step shows those).

    An older event logged only their count; an entry that fits no :class:`Rule` is left out.
    """
    return [r.model_copy(update={"text": ""}) for r in valid_rules(data)]


def _gave_up(reason: str) -> bool:
    """Whether a stop reason says the repairs of a crash the harness caused ran out."""
    at = reason.find(_HARNESS_CRASH)
    return at >= 0 and _GAVE_UP in reason[at:]


def _memory_steps(state: Mapping[str, Any]) -> list[Step]:
    """The build fixes of session memory and the directions of local memory."""
    steps: list[Step] = []
    memory = state.get("session_memory") or {}
    for fix in memory.get("known_fixes") or []:
        steps.append(FixStep(step="fix", content=str(fix.get("content", "")),
                             worked=bool(fix.get("success")), rules=_rules(fix.get("rules"))))
    for direction in (state.get("local_memory") or {}).get("attempted_directions") or []:
        evidence = str(direction.get("evidence", ""))
        outcome, text = direction.get("outcome"), direction.get("direction")
        steps.append(DirectionStep(
            step="direction", outcome=None if outcome is None else str(outcome),
            direction=None if text is None else str(text), evidence=evidence,
            misuse_crash=outcome == "Failed"
            and (evidence == _MISUSE_DROP or f"({_MISUSE_DROP})" in evidence),
            calls=[str(c) for c in direction.get("calls") or []]))
    return steps


def trajectory_from_state(
    state: Mapping[str, Any],
    config: ExperienceConfig,
    run_id: str,
    attempt: int = 0,
    events: list[dict[str, Any]] | None = None,
) -> Trajectory:
    """The trajectory of a finished target; ``events`` default to its ``events.jsonl``."""
    work_dir = Path(str(state.get("work_dir") or "."))
    outcome = outcome_from_state(state, run_id, attempt)
    steps: list[Step] = []
    analysis = state.get("analysis") or {}
    if analysis.get("archetype"):
        steps.append(AnalysisStep(step="analysis", archetype=str(analysis["archetype"]),
                                  confidence=str(analysis.get("confidence", "?"))))
    for constraint in (analysis.get("constraints") or [])[:4]:
        steps.append(ConstraintStep(step="constraint", text=str(constraint)))
    events = events if events is not None else _read_events(work_dir)
    steps += [step for step in (_event_step(event, work_dir) for event in events) if step]
    steps += _memory_steps(state)
    steps += [step for step in map(_repair_step, events) if step]
    steps += _misuse_steps(events, work_dir)
    crash = state.get("crash") or {}
    if crash:
        summary = crash.get("summary") or crash.get("signature")
        steps.append(FinalCrashStep(step="final_crash", kind=str(crash.get("kind", "?")),
                                    summary=None if summary is None else str(summary)))
    if outcome.termination_reason:
        steps.append(StopStep(step="stop", reason=outcome.termination_reason,
                              gave_up=_gave_up(outcome.termination_reason)))
    best = state.get("best") or {}
    target = FunctionDecl.from_dict(dict(state["target"])) if state.get("target") else None
    return Trajectory(
        task_id=outcome.task_id,
        query=target_query(state),
        outcome=outcome,
        is_success=is_success(outcome, config),
        steps=steps,
        harness=str(best.get("code") or state.get("harness_code") or ""),
        target=target.prototype().rstrip(";") if target else "",
        function=target.name if target else "",
        archetype=str(analysis.get("archetype") or ""),
    )
