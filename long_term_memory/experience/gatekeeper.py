"""The Gatekeeper: what gets injected before a target, and what gets written after it.

Before: :meth:`Gatekeeper.prepare_inject` drops matches that are not active, too stale or
failing, ranks the rest by (validation level, trust, score, freshness) and keeps
``retrieval.top_k``. After: :meth:`Gatekeeper.evaluate` turns what was shown, what the model
cited and the measured outcome into hit references, validation plans and the decision whether
to extract a candidate at all; :meth:`Gatekeeper.admit` checks the extracted items (secrets,
triviality, confidence) and builds the candidate record. Nothing here touches storage.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import Any, cast

from fuzzkit.api import FunctionDecl
from long_term_memory.experience.config import ExperienceConfig
from long_term_memory.experience.lesson_checks import LessonEvidence
from long_term_memory.experience.lesson_tags import content_tags, filtered_out, same_family
from long_term_memory.experience.lessons import MAX_FAILURE, lesson_fits, parse_action
from long_term_memory.experience.matches import InjectItem, Match
from long_term_memory.experience.models import (
    MAX_CONTENT,
    MAX_DESCRIPTION,
    MAX_TITLE,
    GatekeeperDecision,
    HitRef,
    MemoryItem,
    MemoryRecord,
    Outcome,
    RecordKind,
    ValidationPlan,
    ValidationResult,
    record_id_for,
)
from long_term_memory.experience.redaction import redact, redact_within
from long_term_memory.experience.rules import (
    BLOCKED,
    is_injectable,
    is_success,
    on_probation,
    outcome_tags,
    validation_result,
)

_CODE_HINT = re.compile(r"`[^`]+`|\b[A-Za-z_][A-Za-z0-9_]*\s*\(|#include")


def assess_confidence(items: Sequence[MemoryItem], outcome: Outcome) -> float:
    """The seed's confidence, on measured steps and the lessons' text.

    0.5 base; +0.2 for three or more measured steps (harness versions, fix rounds, iterations),
    +0.1 for one or two; +0.15 when the average lesson is 50–1000 characters long, +0.05 when
    it is at least 20; +0.1 when the lessons name concrete code (a call, an include, backticks).
    """
    score = 0.5
    steps = outcome.harness_versions + outcome.fix_rounds + outcome.iterations
    score += 0.2 if steps >= 3 else 0.1 if steps >= 1 else 0.0
    length = sum(len(i.content) for i in items) / max(1, len(items))
    score += 0.15 if 50 <= length <= 1000 else 0.05 if length >= 20 else 0.0
    if any(_CODE_HINT.search(i.content) for i in items):
        score += 0.1
    return round(min(1.0, score), 4)


def record_kind(decision: GatekeeperDecision, contrastive: bool = False) -> RecordKind:
    """The extraction prompt a decision calls for: labels come from the outcome, never the model."""
    if contrastive:
        return "contrastive"
    return "success" if decision.is_success else "failure"


class Gatekeeper:
    """Lifecycle decisions, configured by :class:`ExperienceConfig`."""

    def __init__(self, config: ExperienceConfig | None = None) -> None:
        """Use ``config`` (default: the packaged defaults)."""
        self.config = config or ExperienceConfig.load()

    def screen(self, matches: Sequence[Match], target: FunctionDecl | None = None,
               callees: Sequence[FunctionDecl] = (), api: Sequence[FunctionDecl] = (),
               failure: str = "") -> tuple[list[InjectItem], list[dict[str, str]]]:
        """Injectable items (ranked, at most ``retrieval.top_k``) and why the others were not.

        For a repair, ``failure`` is the class of the failure being repaired (``compile``,
        ``leak``, ``crash``, ``input``): a lesson about another class is left out
        (:func:`~long_term_memory.experience.lesson_tags.filtered_out`). Of two lessons equal in
        standing, the one of the target's API family comes first; the family never excludes.

        With the ``target`` known, an actionable lesson (one with an action) whose scope does
        not fit it is left out, and the ones whose scope fits come first and are shown beyond
        ``top_k`` (up to ``retrieval.scoped_extra`` more): they are the items the next attempt
        can apply, while a plain lesson only advises. Calls to leave out (``avoid_call``) and
        results not to release (``keep_result``) that fit are shown after them with a budget of
        their own (``retrieval.avoid_extra``): a library teaches several, and one that ranked
        below the others was a crash round repeated.
        """
        g = self.config.gatekeeper
        keep: list[Match] = []
        rejected: list[dict[str, str]] = []
        for match in matches:
            reason = is_injectable(match.status, match.freshness, match.consecutive_fail, g)
            if reason and on_probation(match.status, match.blocked_runs, g):
                reason = ""  # shown once more; its validation decides (see evaluate)
            fits = target is None or not _actionable(match) or _fits(match, target, callees, api)
            if not reason and not fits:
                reason = "its scope does not fit the target"
            reason = reason or filtered_out(match.lesson, failure)
            if reason:
                rejected.append({"item_id": match.item_id, "reason": reason})
            else:
                keep.append(match)
        # Seed 001's order (level, trust, score, freshness), with the use rate after trust: of two
        # equally trusted items, the one models actually applied when shown comes first, then the
        # one of the target's own API family.
        name = target.name if target else ""
        keep.sort(key=lambda m: (-m.validation_level, -m.trust, -m.use_rate,
                                 -same_family(m.lesson, m.task_id, name), -m.score, -m.freshness, m.item_id))
        fit_all = [m for m in keep if target is not None and _actionable(m)]
        fitting = [m for m in fit_all if not _avoids(m)]
        avoids = [m for m in fit_all if _avoids(m)][: self.config.retrieval.avoid_extra]
        top_k = self.config.retrieval.top_k + min(len(fitting), self.config.retrieval.scoped_extra)
        ranked = (fitting + [m for m in keep if m not in fit_all])[:top_k]
        chosen = [m for m in ranked if m in fitting] + avoids + [m for m in ranked if m not in fitting]
        rejected += [{"item_id": m.item_id, "reason": f"beyond the {len(avoids)} calls to leave out shown"
                      if _avoids(m) and m in fit_all else f"ranked below the top {top_k}"}
                     for m in keep if m not in chosen]
        return [InjectItem.from_match(m) for m in chosen], rejected

    def prepare_inject(self, matches: Sequence[Match]) -> list[InjectItem]:
        """The items to show the model, best first."""
        return self.screen(matches)[0]

    def evaluate(
        self,
        shown: Sequence[InjectItem | str],
        used: Sequence[str],
        outcome: Outcome,
        matches: Sequence[Match] = (),
        evidence: LessonEvidence | None = None,
    ) -> GatekeeperDecision:
        """Hits, validations and whether to extract, from the measured outcome.

        With ``evidence`` (what the run recorded per version), each shown lesson with an action
        is validated by its own failure signature (:mod:`~long_term_memory.experience.lesson_checks`):
        pass, fail, or no validation at all when its stage was never reached with its change or the
        target failed another way. Lessons without an action (and every lesson without
        ``evidence``) keep the target's result: the used ones, else the first shown one. A cited
        id that was never shown is ignored (a model can invent ids). ``matches`` (the search
        result) tells whether a strong answer already exists and how close the best match is.
        """
        shown_ids = list(dict.fromkeys(s.item_id if isinstance(s, InjectItem) else s for s in shown))
        used_ids = [u for u in dict.fromkeys(used) if u in shown_ids]
        decision = GatekeeperDecision(
            outcome.decision_id(), outcome.task_id, is_success(outcome, self.config)
        )
        decision.hit_refs = [HitRef(i, True, i in used_ids) for i in shown_ids]
        # A blocked item that matched counts one run in its scope (its road to probation).
        decision.hit_refs += [HitRef(m.item_id, False, False) for m in matches
                              if m.status == BLOCKED and m.item_id not in shown_ids]
        lessons = {s.item_id: s.lesson for s in shown if isinstance(s, InjectItem)
                   and evidence is not None and parse_action(s.lesson.get("action")) is not None}
        decision.validations = self._own_verdicts(lessons, used_ids, outcome, evidence)
        standing = {m.item_id: (m.status, m.blocked_runs) for m in matches}
        probation = [i for i in shown_ids if i not in lessons
                     and on_probation(*standing.get(i, ("", 0)), self.config.gatekeeper)]
        plain = [i for i in shown_ids if i not in lessons]
        targets = list(dict.fromkeys([u for u in used_ids if u in plain]
                                     or [i for i in shown_ids[:1] if i in plain]))
        result = validation_result(outcome, self.config)
        decision.validations += [
            ValidationPlan(item_id, result, item_id in used_ids, result == "pass" and item_id in used_ids,
                           f"{outcome.summary()}; used={'yes' if item_id in used_ids else 'no'}")
            for item_id in dict.fromkeys(targets + probation)
        ]
        strong_level = self.config.gatekeeper.strong_level
        strong_match = next(
            (
                m
                for m in matches
                if m.validation_level >= strong_level
                and m.status in self.config.gatekeeper.active_statuses
                and m.score >= self.config.retrieval.threshold
            ),
            None,
        )
        decision.has_strong = strong_match is not None or any(p.strong_signal for p in decision.validations)
        decision.top1_score = max((m.score for m in matches), default=0.0)
        decision.skip_reasons += self._skip_reasons(decision, outcome, strong_match)
        decision.should_extract = not decision.skip_reasons
        return decision

    @staticmethod
    def _own_verdicts(lessons: dict[str, dict[str, Any]], used_ids: Sequence[str], outcome: Outcome,
                      evidence: LessonEvidence | None) -> list[ValidationPlan]:
        """One validation per lesson with an action whose own failure signature gave a verdict."""
        if evidence is None:
            return []
        plateau = ("plateau" in outcome.termination_reason.lower()) if outcome.runs else None
        plans = []
        for item_id, lesson in lessons.items():
            used = item_id in used_ids
            result, why = evidence.verdict(item_id, lesson, used, plateau)
            if result is not None:
                plans.append(ValidationPlan(
                    item_id, cast(ValidationResult, result), used, result == "pass" and used,
                    f"{why}; {outcome.summary()}; used={'yes, ' + evidence.used_note() if used else 'no'}"))
        return plans

    def _skip_reasons(self, decision: GatekeeperDecision, outcome: Outcome,
                      strong_match: Match | None) -> list[str]:
        """Why no candidate is extracted from this run (none: extract)."""
        reasons = []
        if outcome.harness_versions < 1 or outcome.model_calls < 1:
            reasons.append("trivial trajectory: no harness was written")
        # A run that still needed repairs, or dropped an improvement that broke the harness, has
        # something the bank did not prevent: it is extracted even beside a strong or very close
        # answer (its repairs and dropped calls become actionable lessons).
        repaired = outcome.fix_rounds > 0 or outcome.dropped > 0
        if decision.has_strong and not repaired:
            why = (
                f"{strong_match.item_id} is at validation level {strong_match.validation_level}"
                if strong_match
                else "a used experience item passed validation in this run"
            )
            reasons.append(f"a strong answer already exists ({why})")
        skip_at = self.config.gatekeeper.skip_if_top1_score_ge
        if decision.top1_score >= skip_at and not repaired:
            reasons.append(f"top-1 match score {decision.top1_score:.3f} >= skip_if_top1_score_ge {skip_at}")
        return reasons

    def admit(
        self,
        decision: GatekeeperDecision,
        outcome: Outcome,
        items: Sequence[MemoryItem],
        *,
        query: str,
        trajectory: str,
        task_type: str,
        kind: RecordKind | None = None,
    ) -> GatekeeperDecision:
        """The decision with its candidate record, or with the reason there is none.

        Checks, in order: the decision allows extraction; secrets (redacted, or the candidate
        refused when ``strict_secret_block``); trivial lessons (shorter than
        ``min_content_chars``) are dropped; confidence at least ``min_confidence``.
        """
        out = dataclasses.replace(decision, skip_reasons=list(decision.skip_reasons), candidate=None)
        if not decision.should_extract:
            return out
        kind = kind or record_kind(decision)
        if kind != "contrastive" and (kind == "success") != decision.is_success:
            raise ValueError(
                f"record kind {kind!r} contradicts the measured outcome (is_success={decision.is_success})"
            )
        cand = self.config.candidate
        kept = list(items)
        if cand.redact:
            found, query, trajectory, kept = _redacted(query, trajectory, kept)
            if found and cand.strict_secret_block:
                out.skip_reasons.append(
                    f"secret detected ({', '.join(found)}): candidate refused (strict_secret_block)"
                )
                out.redactions = found
                return out
            if found:
                out.redactions = found
        kept = [i for i in kept if len(i.content) >= cand.min_content_chars]
        if not kept:
            out.skip_reasons.append(f"trivial output: no lesson has {cand.min_content_chars}+ characters")
            return out
        out.confidence = assess_confidence(kept, outcome)
        if out.confidence < cand.min_confidence:
            out.skip_reasons.append(f"confidence {out.confidence:.2f} < min_confidence {cand.min_confidence}")
            return out
        out.candidate = MemoryRecord(
            memory_id=record_id_for(decision.decision_id),
            task_id=decision.task_id,
            task_type=task_type,
            query=query,
            trajectory=trajectory,
            is_success=decision.is_success,
            kind=kind,
            memory_items=kept[:3],
            run_id=outcome.run_id,
            confidence=out.confidence,
            tags=outcome_tags(outcome, self.config) + content_tags([i.lesson() for i in kept[:3]],
                                                                   decision.task_id),
        )
        return out


def _redacted(
    query: str, trajectory: str, items: list[MemoryItem]
) -> tuple[list[str], str, str, list[MemoryItem]]:
    """The secrets found in a candidate's texts, and the texts with them redacted.

    Nothing is redacted when nothing is found. A marker can be longer than the secret it
    hides: each item's fields are cut back to their limits.
    """
    texts = [query, trajectory, *(i.text() for i in items)]
    found = sorted({name for text in texts for name in redact(text).found})
    if not found:
        return found, query, trajectory, items
    kept = [
        MemoryItem(
            title=redact_within(i.title, MAX_TITLE).text,
            description=redact_within(i.description, MAX_DESCRIPTION).text,
            content=redact_within(i.content, MAX_CONTENT).text,
            scope=i.scope,
            failure=redact_within(i.failure, MAX_FAILURE).text,
            action=i.action,
        )
        for i in items
    ]
    return found, redact(query).text, redact(trajectory).text, kept


def _actionable(match: Match) -> bool:
    """Whether the item carries an action the next attempt can apply."""
    return parse_action((match.lesson or {}).get("action")) is not None


def _avoids(match: Match) -> bool:
    """Whether the item says what not to do (an ``avoid_call`` or ``keep_result`` lesson)."""
    action = parse_action((match.lesson or {}).get("action"))
    return action is not None and action.verb in ("avoid_call", "keep_result")


def _fits(match: Match, target: FunctionDecl, callees: Sequence[FunctionDecl] = (),
          api: Sequence[FunctionDecl] = ()) -> bool:
    """Whether the item fits a harness for ``target`` that also calls ``callees`` (of ``api``)."""
    return lesson_fits(match.lesson or {}, target, callees, api)
