"""The lifecycle rules of the Candidate / Hit / Validation seed, as pure functions.

Outcome to validation result, trust steps, ``consecutive_fail``, validation levels 0–3,
blocking and recovery, freshness. Every number comes from :class:`GatekeeperConfig`.
"""

from __future__ import annotations

import dataclasses
import math

from long_term_memory.experience.config import ExperienceConfig, GatekeeperConfig
from long_term_memory.experience.models import ItemStats, Outcome, ValidationResult

ACTIVE, BLOCKED, PROBATION = "active", "blocked", "probation"
LEVEL_NAMES = ("candidate", "verified", "confirmed", "gold")


def is_success(outcome: Outcome, config: ExperienceConfig) -> bool:
    """A target succeeded when it found a real bug, or its harness builds, runs and covers code."""
    if outcome.crashed_real:
        return True
    return (
        outcome.compiles
        and outcome.runs
        and outcome.lines_percent >= config.outcome.success_min_lines_percent
    )


def validation_result(outcome: Outcome, config: ExperienceConfig) -> ValidationResult:
    """``pass`` on success; ``partial`` when the harness at least compiled; else ``fail``."""
    if is_success(outcome, config):
        return "pass"
    return "partial" if outcome.compiles else "fail"


def outcome_tags(outcome: Outcome, config: ExperienceConfig) -> list[str]:
    """Tags that classify a candidate by what was measured (seed 001's ``tags``).

    ``result:pass|partial|fail``; where the target stopped (``stage:compile``, ``stage:run``,
    ``stage:coverage``); ``crash:real-bug`` or ``crash:harness``; ``repaired`` when fix rounds
    were needed; ``end:<termination reason>``.
    """
    tags = [f"result:{validation_result(outcome, config)}"]
    stage = "compile" if not outcome.compiles else ("run" if not outcome.runs else "coverage")
    tags.append(f"stage:{stage}")
    if outcome.crashed:
        tags.append("crash:real-bug" if outcome.crashed_real else "crash:harness")
    if outcome.fix_rounds:
        tags.append("repaired")
    if outcome.termination_reason:
        tags.append(f"end:{outcome.termination_reason.split(':', 1)[0].strip().replace(' ', '-')[:40]}")
    return tags


def derived_level(pass_count: int, use_count: int, config: GatekeeperConfig) -> int:
    """The level the counts support: 1 after a pass, 2 after enough passes, 3 with enough uses."""
    if pass_count <= 0:
        return 0
    if pass_count < config.level2_passes:
        return 1
    return 3 if use_count >= config.level3_uses else 2


def apply_hit(stats: ItemStats, shown: bool, used: bool, now: float) -> ItemStats:
    """Count one showing and/or one use."""
    del now  # hits do not change freshness: only a pass proves an item still works
    return dataclasses.replace(
        stats, hit_count=stats.hit_count + int(shown), use_count=stats.use_count + int(used)
    )


def apply_validation(
    stats: ItemStats, result: ValidationResult, config: GatekeeperConfig, now: float
) -> ItemStats:
    """One validation: trust, consecutive_fail, level and status per the seed.

    pass: trust + trust_pass (max 1), consecutive_fail = 0, level may rise, a blocked item
    recovers. partial: trust + trust_partial, consecutive_fail + fail_step_partial. fail:
    trust - trust_fail (min 0), consecutive_fail + fail_step_fail. Reaching block_threshold
    blocks the item.
    """
    trust, fails, status = stats.trust, stats.consecutive_fail, stats.status
    passes, partials, failures = stats.pass_count, stats.partial_count, stats.fail_count
    level, last_pass = stats.validation_level, stats.last_pass_at
    if result == "pass":
        trust, fails, passes, last_pass = min(1.0, trust + config.trust_pass), 0.0, passes + 1, now
        level = max(level, derived_level(passes, stats.use_count, config))
        if status in (BLOCKED, PROBATION):
            status = ACTIVE
    elif result == "partial":
        trust, fails, partials = (
            min(1.0, trust + config.trust_partial),
            fails + config.fail_step_partial,
            partials + 1,
        )
    elif result == "fail":
        trust, fails, failures = (
            max(0.0, trust - config.trust_fail),
            fails + config.fail_step_fail,
            failures + 1,
        )
    else:
        raise ValueError(f"validation result must be pass, partial or fail; got {result!r}")
    if fails >= config.block_threshold or (status == PROBATION and result != "pass"):
        status = BLOCKED  # on probation, only a pass brings an item back
    return dataclasses.replace(
        stats,
        trust=round(trust, 6),
        consecutive_fail=fails,
        status=status,
        pass_count=passes,
        partial_count=partials,
        fail_count=failures,
        validation_level=level,
        last_pass_at=last_pass,
    )


def freshness(stats: ItemStats, now: float, config: GatekeeperConfig) -> float:
    """1.0 for an item created or last passed now, halving every ``freshness_half_life_days``."""
    since = max(stats.created_at, stats.last_pass_at)
    age_days = max(0.0, (now - since) / 86400.0)
    return math.pow(0.5, age_days / config.freshness_half_life_days)


def on_probation(status: str, blocked_runs: int, config: GatekeeperConfig) -> bool:
    """True for an item to show once more so that its next validation decides its status.

    Unblocked by hand (``logicfuzz memory unblock``), or blocked and matched in
    ``probation_runs`` runs since its last validation.
    """
    return status == PROBATION or (status == BLOCKED and blocked_runs >= config.probation_runs)


def is_injectable(status: str, fresh: float, consecutive_fail: float, config: GatekeeperConfig) -> str:
    """'' when an item may be injected, else the reason it may not."""
    if status not in config.active_statuses:
        return f"status {status}"
    if fresh < config.min_freshness:
        return f"stale (freshness {fresh:.4f} < {config.min_freshness})"
    if consecutive_fail >= config.block_threshold:
        return f"consecutive_fail {consecutive_fail:g} >= {config.block_threshold:g}"
    return ""
