"""Corrupted experience-bank files heal, or stop with one clear line: never a traceback, nothing lost.

Each case of ``corrupted_files.CASES`` damages a real bank (JSONL, SQLite, vectors) and checks
the promised outcome; see that module for what "healed" and "refused" assert.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchkit.security.corrupted_files import CASES, Case, run_case


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_corrupted_bank_file(case: Case, tmp_path: Path) -> None:
    result = run_case(case, tmp_path / "bank")
    assert result["outcome"] == case.expected, result["detail"]


def test_there_are_at_least_sixteen_cases_of_both_outcomes() -> None:
    assert len(CASES) >= 16
    assert {c.expected for c in CASES} == {"healed", "refused"}


def test_a_run_refuses_a_bank_it_cannot_heal_before_any_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from benchkit.security.corrupted_files import TASK, seed
    from logicfuzz.cli import main

    directory = tmp_path / "bank"
    directory.mkdir()
    seed(directory)
    (directory / f"{TASK}.lifecycle.sqlite").write_bytes(b"not a database" * 100)
    (directory / f"{TASK}.lifecycle.jsonl").unlink()
    cfg = tmp_path / "exp.yaml"
    cfg.write_text(f"embedding:\n  model: hashing-256\nbank:\n  directory: {directory}\n")
    code = main(["run", str(tmp_path / "never-read.yaml"), "--memory-config", str(cfg), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert f"{TASK}.lifecycle.sqlite" in err and "memory repair" in err
