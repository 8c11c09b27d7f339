"""Experience memory in the graph: retrieval + Gatekeeper before a prompt, lifecycle at the end.

Before the prototyper's and enhancer's prompts: search the task's bank (self-excluded), let the
Gatekeeper choose what to inject, render it with ids the model can cite. "Used" is judged on
the measured harness: an actionable item whose change is in it, or a plain item a reply cited.
When the run ends:
evaluate the measured outcome (Hit / Validation records), extract lessons from the trajectory
when the Gatekeeper allows a Candidate, and apply it all to the bank, audited in
``run.events.jsonl`` in the run directory. The mode decides what happens: baseline neither
reads nor writes, retrieve-only reads and never writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from agent_graph.context import Context
from agent_graph.state import FuzzState
from agents.base import ModelCallError
from agents.experience_extractor import ExperienceExtractor
from agents.llm import get_chat_model, model_name
from agents.parsing import ReplyParseError
from fuzzkit.api import FunctionDecl
from long_term_memory.experience import (
    EventLog,
    ExperienceBank,
    ExperienceConfig,
    Gatekeeper,
    InjectItem,
    Match,
    MemoryParseError,
    build_extraction_prompt,
    detect_used,
    extraction_kind,
    memories_used,
    mode_allows_retrieval,
    mode_allows_writes,
    outcome_from_state,
    parse_memory_items,
    render_experience,
    target_query,
    task_id_of,
    trajectory_from_state,
)
from long_term_memory.experience.catalog import BankPaths
from long_term_memory.experience.contrast import contrast_items, with_contrast
from long_term_memory.experience.lesson_effects import changed_ids, used_items
from long_term_memory.experience.lessons import callees_in
from long_term_memory.experience.lifecycle_health import check_files
from long_term_memory.experience.matts import refinement_extraction_prompt
from long_term_memory.experience.stores import shared_bank, uses_store
from long_term_memory.shared_store import connect
from nodes.agent_call import call_agent
from nodes.common import ctx_of, log_event, work_dir
from nodes.lesson_checks import lesson_evidence
from nodes.lesson_failures import broke_build


@lru_cache(maxsize=8)
def _config(path: str, mode: str, model: str, store: str = "") -> ExperienceConfig:
    base = ExperienceConfig.load(Path(path) if path else None)
    overrides = {k: v for k, v in (("mode", mode), ("embedding__model", model),
                                   ("bank__store", store)) if v}
    return base.with_overrides(**overrides) if overrides else base


def config_of(ctx: Context) -> ExperienceConfig:
    """The experience config of a run.

    Precedence: a value the caller set in the context (a CLI flag, Studio's configuration),
    else the memory config file, else the shipped default. A file set to ``retrieve-only``
    therefore never writes unless the caller asks for another mode.
    """
    return _config(ctx.memory_config, ctx.memory_mode, ctx.embedding_model, ctx.store)


def mode_of(ctx: Context) -> str:
    """The run's effective experience-memory mode (see :func:`config_of`)."""
    return config_of(ctx).mode


def extraction_sampling(cfg: ExperienceConfig) -> dict[str, Any]:
    """The context fields an extraction call takes from the memory config file."""
    return {"temperature": cfg.extraction.temperature, "max_output_tokens": cfg.extraction.max_tokens}


def run_dir(state: FuzzState) -> Path:
    """The run directory (by default ``<run>/<project>/<function>`` is a target's work dir)."""
    return Path(state["run_dir"]) if state.get("run_dir") else work_dir(state).parent.parent


def events_of(state: FuzzState) -> EventLog:
    """The run's memory audit log."""
    return EventLog(run_dir(state) / "run.events.jsonl")


def preflight_bank(ctx: Context) -> None:
    """Refuse a run, before any target, whose bank has a damaged file no writer could heal.

    Raises:
        BankFileError: one line naming the file, and ``logicfuzz memory repair`` as the hint.
    """
    mode = mode_of(ctx)
    if not mode_allows_retrieval(mode) and not mode_allows_writes(mode):
        return
    cfg = config_of(ctx)
    if uses_store(cfg):  # a bad or unreachable database stops the run here, in one line
        connect(cfg.bank.store).close()
        return
    check_files(BankPaths(cfg.bank_directory(), cfg.bank.task), read_only=not mode_allows_writes(mode))


def _bank(ctx: Context) -> ExperienceBank:
    return shared_bank(config_of(ctx), read_only=not mode_allows_writes(mode_of(ctx)))


def inject(state: FuzzState, ctx: Context, problem: str = "",
           failure: str = "") -> tuple[str, dict[str, Any]]:
    """The ``## Relevant experience`` section for a prompt and the state it leaves behind.

    ``failure``: the class of the failure a repair is for; lessons about another class are left out.
    """
    if not mode_allows_retrieval(mode_of(ctx)):
        return "", {}
    events = events_of(state)
    target = FunctionDecl.from_dict(dict(state["target"])) if state.get("target") else None
    api = _api(state)
    callees = callees_in(state.get("harness_code") or "", api, target)
    matches = _bank(ctx).search(target_query(state, problem), exclude_task_id=task_id_of(state),
                                events=events, target=target, callees=callees, api=api)
    shown, rejected = Gatekeeper(config_of(ctx)).screen(matches, target, callees, api, failure)
    broke = set(broke_build(state))
    rejected += [{"item_id": i.item_id, "reason": "its change broke this target's build"}
                 for i in shown if i.item_id in broke]
    shown = [i for i in shown if i.item_id not in broke]  # never applied again in this target
    events.emit("memory.inject", task_id=task_id_of(state), shown=[i.item_id for i in shown],
                rejected=rejected)
    past = (state.get("extras") or {}).get("experience") or {}
    known = {m["item_id"] for m in past.get("matches", [])}
    seen = {i["item_id"] for i in past.get("shown", [])}
    merged = {
        **past,
        "matches": past.get("matches", []) + [m.to_dict() for m in matches if m.item_id not in known],
        "shown": past.get("shown", []) + [i.to_dict() for i in shown if i.item_id not in seen],
        "used": past.get("used", []),
    }
    return render_experience(shown), {"experience": merged}


def note_used(state: FuzzState, reply: str, extras: dict[str, Any],
              deterministic: bool = False) -> dict[str, Any]:
    """The node update for the experience of one model call: matches, shown, cited and changing items.

    ``extras`` is what :func:`inject` returned. The update always goes under the state's
    ``extras`` key (a bare ``experience`` key is not a state field and LangGraph would drop
    it), so the search matches reach the end-of-run checks even when nothing was shown. A
    ``deterministic`` model's reply says which lessons changed its harness (its counterfactual,
    kept as ``changed``); any other reply makes the target's "used" a judgement by presence.
    """
    exp = dict(extras.get("experience") or (state.get("extras") or {}).get("experience") or {})
    if not exp.get("shown"):
        return {"extras": dict(extras)} if extras else {}
    shown_ids = [i["item_id"] for i in exp["shown"]]
    used = detect_used(reply, shown_ids)
    exp["used"] = sorted(set(exp.get("used", [])) | set(used))
    if deterministic:
        exp["changed"] = sorted(set(exp.get("changed", [])) | set(changed_ids(reply, shown_ids)))
    else:
        exp["by_presence"] = True
    shown = [InjectItem.from_dict(i) for i in exp["shown"]]
    return {"extras": {**extras, "experience": exp}, "memories_used": memories_used(shown, exp["used"])}


def newly_cited(state: FuzzState, update: dict[str, Any]) -> list[str]:
    """The item ids ``update`` (a :func:`note_used` result) cites that ``state`` had not cited yet."""
    before = set(((state.get("extras") or {}).get("experience") or {}).get("used") or [])
    cited = ((update.get("extras") or {}).get("experience") or {}).get("used") or []
    return [i for i in cited if i not in before]


def used_in_harness(state: FuzzState | dict[str, Any], exp: dict[str, Any]) -> list[str]:
    """The shown items used in the harness that was measured (the best one, else the last).

    An item with an action counts when its scope fits the target and the harness shows the
    action's change, and, where only a deterministic engine saw it, when that engine said its
    change made the harness differ (the counterfactual); one without an action counts when a
    reply cited it.
    """
    shown = [InjectItem.from_dict(i) for i in exp.get("shown", [])]
    target = FunctionDecl.from_dict(dict(state["target"])) if state.get("target") else None
    harness = (state.get("best") or {}).get("code") or state.get("harness_code") or ""
    changed = None if exp.get("by_presence") else set(exp.get("changed", []))
    return used_items(shown, exp.get("used", []), target, harness, _api(state), changed)


def _target(state: FuzzState | dict[str, Any]) -> FunctionDecl | None:
    return FunctionDecl.from_dict(dict(state["target"])) if state.get("target") else None


def _api(state: FuzzState | dict[str, Any]) -> list[FunctionDecl]:
    """The library's API functions the state carries (what a harness may call)."""
    return [FunctionDecl.from_dict(dict(f)) for f in state.get("api") or []]


def finalize_experience(state: FuzzState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Post-run lifecycle: evaluate, maybe extract, apply. Failures are logged, never fatal."""
    ctx = ctx_of(runtime)
    if ctx.defer_experience or (not mode_allows_retrieval(mode_of(ctx))
                                and not mode_allows_writes(mode_of(ctx))):
        return {}
    cfg, events = config_of(ctx), events_of(state)
    exp = (state.get("extras") or {}).get("experience") or {}
    shown = [InjectItem.from_dict(i) for i in exp.get("shown", [])]
    matches = [Match.from_dict(m) for m in exp.get("matches", [])]
    outcome = outcome_from_state(state, run_id=run_dir(state).name)
    gatekeeper = Gatekeeper(cfg)
    used = used_in_harness(state, exp)
    decision = gatekeeper.evaluate(shown, used, outcome, matches, lesson_evidence([state]))
    update: dict[str, Any] = {"memories_used": memories_used(shown, used)} if shown else {}
    if mode_allows_writes(mode_of(ctx)) and decision.should_extract:
        trajectory = trajectory_from_state(state, cfg, run_id=run_dir(state).name)
        kind = extraction_kind([trajectory])
        template, variables = build_extraction_prompt(kind, [trajectory],
                                                      cfg.extraction.max_trajectory_chars)
        try:
            result, call_update = call_agent(ExperienceExtractor, state, runtime, variables, template,
                                             stateless=True, sampling=extraction_sampling(cfg))
            update.update(call_update)
            items = parse_memory_items(result.reply)
            decision = gatekeeper.admit(decision, outcome, items, query=trajectory.query,
                                        trajectory=variables.get("trajectory", ""),
                                        task_type=cfg.bank.task)
        except (MemoryParseError, ReplyParseError, ModelCallError) as exc:
            events.emit("memory.extract.error", task_id=outcome.task_id, error=str(exc)[:500])
    elif mode_allows_writes(mode_of(ctx)):
        events.emit("memory.extract.skip", task_id=outcome.task_id, reasons=decision.skip_reasons)
    applied = _bank(ctx).apply(decision, events)
    log_event(state, "memory.experience.applied", task_id=outcome.task_id,
              added=list(getattr(applied.record, "added", []) or []) if applied.record else [])
    return update


def _attempt_decision(state: FuzzState, gatekeeper: Gatekeeper, attempt: int) -> Any:
    exp = (state.get("extras") or {}).get("experience") or {}
    shown = [InjectItem.from_dict(i) for i in exp.get("shown", [])]
    matches = [Match.from_dict(m) for m in exp.get("matches", [])]
    outcome = outcome_from_state(state, run_id=run_dir(state).name, attempt=attempt)
    return gatekeeper.evaluate(shown, used_in_harness(state, exp), outcome, matches,
                               lesson_evidence([state])), outcome


def _trajectory_decision(states: Sequence[FuzzState], gatekeeper: Gatekeeper, best: int) -> Any:
    """One decision for the rounds of one trajectory: what any round showed and cited, the best outcome."""
    shown: dict[str, InjectItem] = {}
    matches: dict[str, Match] = {}
    used: list[str] = []
    for state in states:
        exp = (state.get("extras") or {}).get("experience") or {}
        for item in exp.get("shown", []):
            shown.setdefault(item["item_id"], InjectItem.from_dict(item))
        for match in exp.get("matches", []):
            matches.setdefault(match["item_id"], Match.from_dict(match))
        used += [u for u in used_in_harness(state, exp) if u not in used]
    outcome = outcome_from_state(states[best], run_id=run_dir(states[best]).name, attempt=best)
    return gatekeeper.evaluate(list(shown.values()), used, outcome, list(matches.values()),
                               lesson_evidence(states)), outcome


def matts_lifecycle(states: Sequence[FuzzState], ctx: Context, best: int,
                    sequential: bool = False) -> dict[str, Any]:
    """MaTTS: the Hit/Validation records, and one contrastive extraction over all trajectories.

    Parallel attempts are independent uses of what they were shown: each gets its own
    Hit/Validation records. The rounds of a sequential trajectory are one use: one decision, on
    the best round's outcome, and the extraction contrasts the rounds (self-contrast). The
    extraction runs only when the Gatekeeper allows a candidate. Returns its usage (added to the
    target's record by the caller).
    """
    if not mode_allows_retrieval(mode_of(ctx)) and not mode_allows_writes(mode_of(ctx)):
        return {}
    cfg = config_of(ctx)
    events = events_of(states[best])
    gatekeeper = Gatekeeper(cfg)
    if sequential:
        decision, outcome = _trajectory_decision(states, gatekeeper, best)
    else:
        decisions = [_attempt_decision(s, gatekeeper, i) for i, s in enumerate(states)]
        for i, (other, _) in enumerate(decisions):
            if i != best:
                _bank(ctx).apply(other, events)
        decision, outcome = decisions[best]
    usage: dict[str, Any] = {}
    if mode_allows_writes(mode_of(ctx)) and decision.should_extract:
        trajectories = [trajectory_from_state(s, cfg, run_id=run_dir(s).name, attempt=i)
                        for i, s in enumerate(states)]
        max_chars = cfg.extraction.max_trajectory_chars
        template, variables = (refinement_extraction_prompt(trajectories, max_chars) if sequential
                               else build_extraction_prompt("contrastive", trajectories, max_chars))
        agent = ExperienceExtractor(get_chat_model(replace(ctx, **extraction_sampling(cfg))),
                                    token_budget=ctx.message_token_budget, model=model_name(ctx.model))
        # The code change between a harness that got further and one that did not is an action.
        items = contrast_items(trajectories, _target(states[best]))
        try:
            result = agent.run(variables, [], template)
            usage = result.usage
            items = with_contrast(items, parse_memory_items(result.reply))
        except (MemoryParseError, ReplyParseError, ModelCallError) as exc:
            events.emit("memory.extract.error", task_id=outcome.task_id, error=str(exc)[:500])
        if items:
            decision = gatekeeper.admit(decision, outcome, items, query=trajectories[best].query,
                                        trajectory=variables.get("trajectories", ""),
                                        task_type=cfg.bank.task, kind="contrastive")
    elif mode_allows_writes(mode_of(ctx)):
        events.emit("memory.extract.skip", task_id=outcome.task_id, reasons=decision.skip_reasons)
    _bank(ctx).apply(decision, events)
    return usage
