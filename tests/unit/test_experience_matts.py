"""MaTTS helpers: attempt plans, best-of-N choice, the refinement prompt, modes."""

from __future__ import annotations

import pytest

from long_term_memory.experience import (
    attempt_specs,
    best_attempt,
    mode_allows_retrieval,
    mode_allows_writes,
    refinement_prompt,
)
from tests.unit.test_experience_support import config, outcome


def test_off_by_default_one_plain_attempt() -> None:
    specs = attempt_specs(config())
    assert len(specs) == 1 and specs[0].temperature is None and specs[0].refine_rounds == 0


def test_parallel_scaling_n_attempts_at_the_configured_temperature() -> None:
    specs = attempt_specs(config(matts__enabled=True, matts__n=4, matts__temperature=0.9,
                                 matts__max_tokens=2048))
    assert [s.attempt for s in specs] == [0, 1, 2, 3]
    assert {(s.temperature, s.max_tokens) for s in specs} == {(0.9, 2048)}


def test_sequential_scaling_one_attempt_with_refinement_rounds() -> None:
    specs = attempt_specs(config(matts__enabled=True, matts__mode="sequential", matts__refine_rounds=3))
    assert len(specs) == 1 and specs[0].refine_rounds == 3
    text = refinement_prompt(2, "v1 did not build:\n error: x")
    assert text.startswith("## Self-refinement (round 2)") and "v1 did not build: error: x" in text
    assert "re-examine your previous attempt" in text


def test_best_of_n_prefers_real_bugs_then_running_harness_coverage_and_economy() -> None:
    attempts = [
        outcome(attempt=0, lines_percent=40.0, model_calls=9),
        outcome(attempt=1, compiles=False, runs=False, lines_percent=0.0),
        outcome(attempt=2, lines_percent=40.0, model_calls=5),
        outcome(attempt=3, lines_percent=35.0),
    ]
    assert best_attempt(attempts) == 2
    attempts.append(outcome(attempt=4, runs=False, crashed=True, crashed_real=True, lines_percent=10.0))
    assert best_attempt(attempts) == 4
    with pytest.raises(ValueError):
        best_attempt([])


def test_modes() -> None:
    assert [mode_allows_retrieval(m) for m in ("baseline", "retrieve-extract", "retrieve-only")] == \
        [False, True, True]
    assert [mode_allows_writes(m) for m in ("baseline", "retrieve-extract", "retrieve-only")] == \
        [False, True, False]
    with pytest.raises(ValueError, match="not one of"):
        mode_allows_writes("extract-only")
