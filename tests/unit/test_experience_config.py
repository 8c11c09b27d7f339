"""The experience config file: defaults, partial user files, and errors that name the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from long_term_memory.experience import ExperienceConfig, ExperienceConfigError
from long_term_memory.experience.config import CONFIG_ENV, DEFAULT_CONFIG


def test_packaged_defaults_match_the_seeds() -> None:
    cfg = ExperienceConfig.load()
    assert DEFAULT_CONFIG.name == "experience.default.yaml"
    assert cfg.mode == "retrieve-extract" and cfg.bank.task == "fuzz-c"
    assert cfg.embedding.model == "all-MiniLM-L6-v2"
    assert (cfg.retrieval.top_k, cfg.retrieval.threshold) == (1, 0.5)
    assert (cfg.matts.enabled, cfg.matts.n) == (False, 3)
    g = cfg.gatekeeper
    assert (g.min_freshness, g.block_threshold, g.initial_trust) == (0.001, 3.0, 0.5)
    assert (g.trust_pass, g.trust_partial, g.trust_fail) == (0.05, 0.02, 0.10)
    assert (g.fail_step_partial, g.fail_step_fail, g.level2_passes, g.level3_uses) == (0.5, 1.0, 3, 10)
    assert g.skip_if_top1_score_ge == 0.90 and g.active_statuses == ("active",)
    c = cfg.candidate
    assert (c.min_confidence, c.redact, c.strict_secret_block) == (0.45, True, False)
    assert ExperienceConfig() == cfg  # the file and the code agree


def test_partial_user_files_yaml_and_toml(tmp_path: Path) -> None:
    yml = tmp_path / "mine.yaml"
    yml.write_text("retrieval:\n  top_k: 2\n  threshold: 0.6\nmatts:\n  enabled: true\n")
    cfg = ExperienceConfig.load(yml)
    assert (cfg.retrieval.top_k, cfg.retrieval.threshold, cfg.retrieval.candidates) == (2, 0.6, 10)
    assert cfg.matts.enabled and cfg.matts.n == 3
    toml = tmp_path / "mine.toml"
    toml.write_text('mode = "retrieve-only"\n[gatekeeper]\nskip_if_top1_score_ge = 0.8\n')
    cfg = ExperienceConfig.load(toml)
    assert cfg.mode == "retrieve-only" and cfg.gatekeeper.skip_if_top1_score_ge == 0.8


def test_environment_variable_names_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "env.yaml"
    path.write_text("dedupe:\n  threshold: 0.9\n")
    monkeypatch.setenv(CONFIG_ENV, str(path))
    assert ExperienceConfig.load().dedupe.threshold == 0.9


@pytest.mark.parametrize(("text", "message"), [
    ("retrieval:\n  threshold: 1.5\n",
     "retrieval.threshold = 1.5: Input should be less than or equal to 1 (allowed: -1.0 <= value <= 1.0)"),
    ("gatekeeper:\n  trust_pas: 0.1\n", "gatekeeper.trust_pas: unknown key"),
    ("retrieval:\n  top_k: 0\n", "retrieval.top_k = 0"),
    ("matts:\n  n: three\n", "matts.n = 'three'"),
    ("mode: everything\n", "mode = 'everything'"),
    ("retrieval:\n  top_k: 5\n  candidates: 2\n", "retrieval.candidates (2) must be >= retrieval.top_k (5)"),
    ("gatekeeper:\n  block_threshold: 0\n", "gatekeeper.block_threshold = 0"),
    ("candidate:\n  min_confidence: -0.1\n", "allowed: 0.0 <= value <= 1.0"),
    ("- just\n- a list\n", "must be a mapping of sections"),
    ("retrieval: [unclosed\n", "is not valid"),
])
def test_bad_values_are_errors_naming_key_and_range(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ExperienceConfigError) as info:
        ExperienceConfig.load(path)
    assert message in str(info.value)
    assert str(path) in str(info.value)


def test_missing_file_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(ExperienceConfigError, match="cannot read experience config .*default.yaml"):
        ExperienceConfig.load(tmp_path / "nope.yaml")


def test_overrides_are_validated_too() -> None:
    cfg = ExperienceConfig.load().with_overrides(retrieval__top_k=3, mode="baseline")
    assert cfg.retrieval.top_k == 3 and cfg.mode == "baseline"
    with pytest.raises(ExperienceConfigError, match="dedupe.threshold"):
        cfg.with_overrides(dedupe__threshold=0)
