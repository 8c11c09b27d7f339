"""bench/results_markdown.py: ``--markdown FILE`` writes what a bench printed, headed by how it was made."""

from __future__ import annotations

import argparse
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from benchkit.results_markdown import REPO, add_markdown_option, command_line, markdown_copy


def test_the_file_holds_the_printed_table_under_command_commit_and_machine(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", [str(REPO / "bench" / "toy.py"), "lib.yaml", "--seconds", "15"])
    out = tmp_path / "results" / "toy.md"
    with markdown_copy(out, "Toy bench"):
        print("| library | ratio |\n|---|---|\n| toy | 1.00x |")
    printed = capsys.readouterr().out
    text = out.read_text()
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                          text=True).stdout.strip()
    assert text.startswith("# Toy bench\n")
    assert "- command: `python bench/toy.py lib.yaml --seconds 15`" in text
    assert f"- commit: {head}" in text
    assert f"- machine: {platform.machine()}, " in text
    assert text.endswith(printed) and printed.startswith("| library | ratio |")


def test_fixed_width_output_is_fenced_and_nothing_is_written_without_a_path(tmp_path: Path) -> None:
    out = tmp_path / "t.md"
    with markdown_copy(out, "Text", fenced=True):
        print("corpus  tried")
    assert out.read_text().endswith("```text\ncorpus  tried\n```\n")
    with markdown_copy(None, "Nothing"):
        print("x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.md"]


def test_a_failed_bench_leaves_the_previous_file(tmp_path: Path) -> None:
    out = tmp_path / "t.md"
    out.write_text("previous")
    with pytest.raises(RuntimeError), markdown_copy(out, "Broken"):
        print("half a table")
        raise RuntimeError("bench failed")
    assert out.read_text() == "previous"


def test_an_unwritable_path_stops_before_the_bench_with_what_to_do(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    add_markdown_option(parser)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(SystemExit) as stop:
        parser.parse_args(["--markdown", str(blocker / "table.md")])
    assert stop.value.code == 2


def test_no_path_of_the_machine_reaches_the_command_line() -> None:
    line = command_line(
        ["bench/generality.py", "--merge", "/tmp/s3/new4/generality.json", "--out=/scratch/x/run",
         str(REPO / "docs" / "results" / "a.md"), "libpng1.6"])
    assert "/tmp" not in line and "/scratch" not in line and str(REPO) not in line, line
    assert "new4/generality.json" in line and "--out=x/run" in line and "docs/results/a.md" in line, line


def test_no_path_of_the_machine_reaches_the_printed_table(tmp_path: Path) -> None:
    from benchkit.results_markdown import portable_text

    rest = " | 2/3 | LF/up | see https://example.org/a/b and docs/results/x.md\n"
    printed = portable_text("# memory A/B (runs in /srv/sitting/mab)" + rest)
    assert printed == "# memory A/B (runs in sitting/mab)" + rest
