"""Enhancer node: repair a failing harness, or improve a running one's coverage."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from agent_graph.context import Context
from agent_graph.memory.code_memory_c import called_names
from agent_graph.memory.local_memory import render_local_memory
from agent_graph.memory.session_memory import add_fix_results
from agent_graph.state import FuzzState, counter
from agents.crash_analyzer import report_text, stack_text
from agents.enhancer import Enhancer
from agents.prototyper import Prototyper
from agents.sections import ELSEWHERE_HEADING, next_calls
from long_term_memory.retrieval import get_retriever
from nodes.agent_call import call_agent, can_fall_back, memory_reads_for
from nodes.common import ctx_of, log_event
from nodes.experience import inject, newly_cited, note_used
from nodes.improvement_blocks import reapply_field_releases, reapply_releases
from nodes.lesson_checks import problem_class
from nodes.prototyper import pitfall_lines


def directions_text(state: FuzzState) -> str:
    """The local memory as the enhancer and coverage analyzer see it (compact Markdown)."""
    return render_local_memory(state.get("local_memory"))


def uncovered_text(state: FuzzState, limit: int = 25) -> str:
    """The functions to call next, with their prototypes.

    Those on the target's result that the harness does not call yet come first, then the
    uncovered public functions.
    """
    uncovered = set((state.get("run") or {}).get("uncovered_functions") or [])
    called = set(called_names(state.get("harness_code") or ""))
    product, rest = next_calls(state, uncovered, called, limit)
    elsewhere = sibling_calls(state)
    fresh, shared = [d for d in rest if d.name not in elsewhere], [d for d in rest if d.name in elsewhere]
    parts = []
    if product:
        parts += ["Not yet called on what the target produced (the library may call them itself):",
                  *(f"- {d.prototype()}" for d in product)]
    if fresh and product:
        parts.append("Never reached:")
    parts += [f"- {d.prototype()}" for d in fresh]
    if shared:
        parts += [ELSEWHERE_HEADING, *(f"- {d.prototype()}" for d in shared)]
    return "\n".join(parts) or "(none)"


def sibling_calls(state: FuzzState) -> set[str]:
    """What the harnesses of the run's other targets call (the last version each one built).

    The run is measured by what its harnesses cover together: a function another target's
    harness already calls is worth less here than one nobody calls.
    """
    if not state.get("work_dir"):
        return set()
    own = Path(state["work_dir"]).resolve()
    found: set[str] = set()
    for path in sorted(own.parent.glob("*/harness.c")):
        if path.parent.resolve() != own:
            found.update(called_names(path.read_text(errors="replace")))
    return found


def problem_of(state: FuzzState) -> tuple[str, str, str]:
    """What went wrong with the current version: (problem, compile errors, crash triage)."""
    build = state.get("build") or {}
    if not build.get("ok"):
        return "the harness does not compile", build.get("errors", ""), ""
    run = state.get("run") or {}
    if run.get("crashed"):
        triage = state.get("crash_analysis") or {}
        text = report_text(state.get("crash") or {}) + "\n" + "\n".join(
            f"{k}: {triage.get(k, '')}" for k in ("root_cause", "verdict", "fix_hint"))
        text += "\nstack:\n" + stack_text(state.get("crash") or {}, limit=8)
        return "the harness crashes by misusing the API (not a library bug)", "", text
    return run.get("problem") or "the harness does not exercise the target", "", ""


def needs_fix(state: FuzzState) -> bool:
    """True when the current version failed to build, crashed by misuse, or missed the target."""
    build, run = state.get("build") or {}, state.get("run") or {}
    if build.get("version") != state.get("harness_version") or not build.get("ok"):
        return True
    return run.get("version") == state.get("harness_version") and not run.get("usable")


def fresh_draft(state: FuzzState, runtime: Runtime[Context], experience: str,
                reason: str) -> tuple[Any, dict[str, Any]]:
    """A new first draft by the fallback model, from the prototyper's own prompt."""
    archetype = (state.get("analysis") or {}).get("archetype", "stateless_parser")
    bundle = get_retriever(state["long_term_retriever"]).get_archetype_bundle(archetype)
    variables = Prototyper.variables(state, memory_reads_for("prototyper"), archetype,
                                     bundle.archetype.text, bundle.skeleton,
                                     pitfall_lines(bundle.pitfalls), experience)
    return call_agent(Prototyper, state, runtime, variables, fall_back=reason)


def _repair(state: FuzzState, runtime: Runtime[Context], reads: Any,
            version: int) -> tuple[Any, dict[str, Any], dict[str, Any], bool]:
    """One fix round: the reply, the agent's update, the change record, and whether it changed nothing."""
    archetype = (state.get("analysis") or {}).get("archetype", "stateless_parser")
    pitfalls = get_retriever(state["long_term_retriever"]).get_pitfalls_for_archetype(archetype)
    problem, errors, triage = problem_of(state)
    best = (state.get("best") or {}).get("code", "")
    rounds = int(state.get("fix_rounds") or 0)
    built = bool((state.get("build") or {}).get("ok"))
    weak = (f"the harness has not built after {rounds} fix rounds"
            if not built and rounds >= ctx_of(runtime).fallback_after_fix_rounds else "")
    ctx = ctx_of(runtime)
    fresh = bool(weak) and rounds == ctx.fallback_after_fix_rounds and can_fall_back(ctx)
    # A repair sees the lessons about its own class of failure; a fresh first draft sees them all.
    experience, extras = inject(state, ctx_of(runtime), f"{problem}\n{errors}",
                                "" if fresh else problem_class(state))
    variables = Enhancer.fix_variables(state, reads, problem, errors, triage, best,
                                       pitfall_lines(pitfalls), experience)
    if fresh:
        # The model's harness never built: the floor is the fallback engine's own first draft
        # (its later fix rounds repair that draft, as it would on its own).
        result, update = fresh_draft(state, runtime, experience, weak)
        fixes, unresolved, rules = [f"a fresh draft by the fallback model: {weak}"], [], []
        dropped = 0
    else:
        result, update = call_agent(Enhancer, state, runtime, variables, "enhancer_fix", fall_back=weak)
        fixes, unresolved = result.output.fixes, result.output.unresolved
        rules = [r.model_dump(exclude_defaults=True) for r in result.output.rules]
        dropped = result.output.rules_dropped
    # A repair that leaves the harness as it was: building and measuring it again can only
    # repeat the last result, so the version stays, with its build and run, and the router
    # ends the repairs (or asks again, for a harness that does not build).
    unchanged = result.code.strip() == (state.get("harness_code") or "").strip()
    log_event(state, "harness.unchanged" if unchanged else "harness.written",
              version=state.get("harness_version") if unchanged else version, by="enhancer.fix",
              fixes=fixes, unresolved=unresolved, rules=rules, rules_kept=len(rules), rules_dropped=dropped)
    previous = state.get("last_change") or {}
    if previous.get("kind") == "improve":
        # Fixing an improvement: the direction being tried is still the improvement's.
        change = {**previous, "fixes": [*previous.get("fixes", []), *fixes]}
    else:
        change = {"kind": "fix", "from_version": state.get("harness_version"), "fixes": fixes}
    update.update(note_used(state, result.reply, extras, result.deterministic))
    update["counters"] = {**update["counters"], "fix_rounds_total": 1}
    update.update(fix_rounds=rounds + 1, pending_fixes=fixes, pending_rules=rules)
    if unchanged:
        # The same code gets the same build: what it claimed to fix is judged by the last one.
        update.update(session_memory=add_fix_results(state.get("session_memory"), fixes, built, rules),
                      pending_fixes=[], pending_rules=[])
    return result, update, change, unchanged


def enhancer_node(state: FuzzState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Produce the next harness version; fixes count toward the fix-round guard."""
    reads = memory_reads_for("enhancer")
    version = counter(state, "harness_versions") + 1
    if needs_fix(state):
        result, update, change, unchanged = _repair(state, runtime, reads, version)
        code = result.code
        if unchanged:
            return {**update, "last_change": {**change, "unchanged": True,
                                              "version": state.get("harness_version")}}
    else:
        uncovered = uncovered_text(state)  # reads the sibling harnesses: once per round
        experience, extras = inject(state, ctx_of(runtime), "improve coverage: " + uncovered)
        variables = Enhancer.improve_variables(state, reads, uncovered, directions_text(state), experience)
        result, update = call_agent(Enhancer, state, runtime, variables, "enhancer_improve")
        log_event(state, "harness.written", version=version, by="enhancer.improve",
                  directions=result.output.directions, added_calls=result.output.added_calls,
                  rules=[r.model_dump(exclude_defaults=True) for r in result.output.rules])
        code, again = reapply_releases(result.code, state) if result.code else (result.code, [])
        code, fields = reapply_field_releases(code, state) if code else (code, [])
        again = sorted({*again, *fields})
        if again:  # a repair this run found, for a call the improvement added again
            log_event(state, "improvement.releases_reapplied", version=version, functions=again)
        update.update(note_used(state, result.reply, extras, result.deterministic))
        # What this reply newly cited: if the improvement is dropped, that citation goes with it.
        change = {"kind": "improve", "from_version": state.get("harness_version"),
                  "directions": result.output.directions, "added_calls": result.output.added_calls,
                  "cited": newly_cited(state, update)}
        update.update(pending_fixes=[], pending_rules=[])
    update["counters"] = {**update["counters"], "harness_versions": 1}
    return {**update, "harness_code": code, "harness_version": version,
            "last_change": {**change, "version": version}}
