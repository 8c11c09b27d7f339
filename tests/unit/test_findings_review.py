"""bench/findings_review.py: each library-bug verdict of a set of runs beside its hand review."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bench_scripts import load_bench_script


def _run(root: Path, project: str, signatures: list[str]) -> Path:
    run = root / project / "run"
    (run / "findings").mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"benchmark": f"{project}.yaml"}))
    (run / "findings" / "index.json").write_text(json.dumps([
        {"project": project, "kind": "leak", "signature": s, "top_frame": "alloc x.c:1",
         "targets": [f"{project}/f"], "replays": True} for s in signatures]))
    return run


def test_verdicts_are_joined_with_their_reviews_and_counted(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    bench = load_bench_script("findings_review")
    reviews = tmp_path / "reviews.yaml"
    reviews.write_text("reviews:\n  \"acme leak@a<b\": {review: misuse, why: the harness kept it}\n"
                       "  \"acme leak@c<d\": {review: true_bug, why: a ten-line program replays it}\n")
    monkeypatch.setattr(bench, "REVIEWS", reviews)
    _run(tmp_path / "gen", "acme", ["leak@a<b", "leak@c<d", "leak@e<f"])
    markdown = tmp_path / "out.md"
    assert bench.main([str(tmp_path / "gen"), "--markdown", str(markdown)]) == 0
    out = capsys.readouterr().out
    assert "true library bug 1, harness misuse 1, unclear 0; not yet reviewed 1" in out
    assert "false alarms (misuse of the reviewed): 1/2 (50%)" in out
    assert "| acme | leak | `alloc x.c:1` | f | 1 | yes | unreviewed |  |" in out
    assert "harness misuse 1" in markdown.read_text()


def test_a_folder_with_no_run_and_a_bad_review_are_clear_errors(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    bench = load_bench_script("findings_review")
    monkeypatch.setattr(bench, "REVIEWS", tmp_path / "none.yaml")
    assert bench.main([str(tmp_path)]) == 2
    assert "holds no run directory" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("reviews:\n  \"acme leak@a\": {review: maybe}\n")
    monkeypatch.setattr(bench, "REVIEWS", bad)
    _run(tmp_path / "gen", "acme", ["leak@a"])
    assert bench.main([str(tmp_path / "gen")]) == 2
    assert "needs `review` (one of true_bug, misuse, unclear) and `why`" in capsys.readouterr().err


def test_the_shipped_reviews_read() -> None:
    bench = load_bench_script("findings_review")
    assert all(r["review"] in bench.VERDICTS for r in bench.load_reviews().values())


def test_one_finding_reported_by_two_runs_is_one_row(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    bench = load_bench_script("findings_review")
    monkeypatch.setattr(bench, "REVIEWS", tmp_path / "none.yaml")
    _run(tmp_path / "a", "acme", ["leak@a<b"])
    _run(tmp_path / "b", "acme", ["leak@a<b"])
    assert bench.main([str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "| f | 2 | yes | unreviewed |" in out
    assert "distinct library-bug verdicts: 1 (reported 2 times)" in out
