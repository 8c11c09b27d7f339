"""Each bench's ``--markdown FILE``: checked before the work, and the file it writes for a small result.

The benches are run whole (``main(argv)``) for the unwritable path, with arguments that would make
the work itself fail or do nothing, so only a check made while parsing exits with argparse's code 2
and its message. The file test gives each bench's ``report`` a small fake result: the file is headed
by the title of the bench's file in ``docs/results/`` and the command, commit and machine, then the
Markdown table the bench printed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from benchkit.results_markdown import REPO
from tests.bench_scripts import load_bench_script

HEAD = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                      text=True).stdout.strip()


@pytest.fixture
def load(monkeypatch: pytest.MonkeyPatch) -> Any:
    """``load(name)``: the bench script; the environment it sets at import is put back afterwards."""
    monkeypatch.setenv("PYTHONPATH", os.environ.get("PYTHONPATH", ""))
    return load_bench_script


def _unwritable_argv(tmp_path: Path) -> dict[str, list[str]]:
    missing = str(tmp_path / "missing.yaml")
    return {
        "bank_open_stress": ["--rounds", "0"],
        "context_bench": [missing],
        "coverage_vs_upstream": [missing],
        "model_compare": [missing, "--no-local"],
        "pgvector_size": ["--store", "postgresql://127.0.0.1:1/none", "--items", "2"],
        "scale": ["--executors", "", "--bank-writes", "0"],
    }


@pytest.mark.parametrize("name", ["bank_open_stress", "context_bench", "coverage_vs_upstream",
                                  "model_compare", "pgvector_size", "scale"])
def test_an_unwritable_markdown_path_stops_the_bench_before_its_work(
        name: str, tmp_path: Path, load: Any, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    argv = [*_unwritable_argv(tmp_path)[name], "--markdown", str(blocker / "table.md")]
    with pytest.raises(SystemExit) as stop:
        load(name).main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2, err
    assert "--markdown" in err and "pass a path in a writable folder" in err, err


def _h1(results_file: str) -> str:
    return (REPO / "docs" / "results" / results_file).read_text().splitlines()[0]


def _written(bench: ModuleType, script: str, argv: list[str], out: Path,
             monkeypatch: pytest.MonkeyPatch) -> tuple[Any, str]:
    """The bench's parsed arguments, as if typed as ``python bench/SCRIPT argv --markdown out``."""
    argv = [*argv, "--markdown", str(out)]
    monkeypatch.setattr(sys, "argv", [str(REPO / "bench" / script), *argv])
    return bench.parse_args(argv), f"- command: `python bench/{script} "


def _check(out: Path, results_file: str, command: str, table_head: str, row: str) -> str:
    text = out.read_text()
    assert text.startswith(_h1(results_file) + "\n\n"), text
    assert command in text and f"- commit: {HEAD}" in text and "- machine: " in text, text
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith(table_head))
    assert lines[head + 1].startswith("|---"), text
    assert any(line.startswith(row) for line in lines[head + 2:]), text
    assert "```" not in text and str(out.parent) not in text, text
    return text


def test_bank_open_stress_writes_its_count_as_a_table(
        tmp_path: Path, load: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    bench, out = load("bank_open_stress"), tmp_path / "r.md"
    args, command = _written(bench, "bank_open_stress.py", ["--rounds", "2", "--writers", "3"], out,
                             monkeypatch)
    bench.report(["sqlite3.OperationalError: database `x` is locked"], args)
    text = _check(out, "bank-open-stress.md", command, "| rounds | writers", "| 2 | 3 | 30 | 1 of 6 |")
    assert text.endswith("- `sqlite3.OperationalError: database 'x' is locked`\n")


def test_context_bench_writes_one_row_per_arm(tmp_path: Path, load: Any,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    yaml_file = tmp_path / "lib.yaml"
    yaml_file.write_text("project: cjson\n")
    bench, out = load("context_bench"), tmp_path / "r.md"
    args, command = _written(bench, "context_bench.py", [str(yaml_file)], out, monkeypatch)
    arm = {"calls": 22, "median": 3439, "p95": 16619, "total": 131903, "compiling": 2, "running": 2,
           "targets": 2, "mean_lines": 42.7}
    rows = {name: dict(arm) for name in bench.ARMS}
    bench.report(args, ["cJSON_Parse"], rows, tmp_path / "runs")
    _check(out, "context-bench.md", command, "| arm | calls", "| code-memory summary | 22 | 3439 |")


def _coverage_row(library: str, baseline: str) -> dict[str, Any]:
    return {"library": library, "baseline": baseline,
            "base": {"lines": [40.3, 40.7, 42.5], "branches": [30.0, 31.0, 32.0]},
            "logicfuzz": {"lines": [65.8, 66.5, 66.7], "branches": [50.0, 48.7, 49.0]},
            "budget": {"base": {"per_harness_seconds": 60}, "logicfuzz": {"per_harness_seconds": 60}}}


def test_coverage_vs_upstream_writes_a_markdown_table_not_fixed_width_text(
        tmp_path: Path, load: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    bench, out = load("coverage_vs_upstream"), tmp_path / "r.md"
    args, command = _written(bench, "coverage_vs_upstream.py", ["a.yaml", "--per-harness"], out,
                             monkeypatch)
    rows = [_coverage_row("cJSON", "upstream"), _coverage_row("zlib", "naive"),
            _coverage_row("libyaml", "naive"), {"library": "bad", "error": "no build | see\nlog"}]
    bench.report(rows, args)
    text = _check(out, "coverage-vs-upstream.md", command, "| library | baseline",
                  "| cJSON | upstream | 60 / 60 | 40.7 [40.3-42.5] |")
    assert "| bad | error: no build \\| see log | - |" in text


def test_model_compare_writes_one_row_per_model(tmp_path: Path, load: Any,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    bench, out = load("model_compare"), tmp_path / "r.md"
    args, command = _written(bench, "model_compare.py", [], out, monkeypatch)
    row = {"running": 2, "targets": 2, "errors": 0, "lines": 42.5, "branches": 45.4, "calls": 10,
           "fallbacks": 0, "prompt": 30434, "completion": 7157, "seconds": 36.0}
    bench.report(args, ["cJSON_Parse"], {"offline": row}, tmp_path / "runs")
    _check(out, "model-compare.md", command, "| model | running", "| offline | 2/2 | 0 | 42.5% |")
    assert bench.title(bench.parse_args(["--no-local", "--model", "openai:m"])) == \
        "The offline engine against openai:m"


def test_pgvector_size_writes_its_rows_under_the_header(tmp_path: Path, load: Any,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    bench, out = load("pgvector_size"), tmp_path / "r.md"
    args, command = _written(bench, "pgvector_size.py", ["--items", "10000"], out, monkeypatch)
    bench.report(["| exact: read-only open, search | 195 | 0.6 | 0.9 |"], args)
    _check(out, "pgvector-size.md", command, "| step | open ms", "| exact: read-only open, search | 195 |")


def _latency(p50: float) -> dict[str, float]:
    return {"n": 400, "p50": p50, "p95": 2 * p50, "max": 3 * p50}


def test_scale_writes_its_tables_under_what_it_measured(tmp_path: Path, load: Any,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    bench = load("scale")
    bank = {path: {"writes": _latency(0.0077), "searches": _latency(0.0006)}
            for path in ("local index", "pgvector")}
    args, command = _written(bench, "scale.py", ["--executors", ""], tmp_path / "bank.md", monkeypatch)
    bench.report([], bank, args)
    _check(tmp_path / "bank.md", "scale-pgvector.md", command, "| operation | n |", "| write | 400 | 7.7 |")
    executor = {"executor": "local", "workers": 1, "startup": 2.3, "makespan": 96.0, "per_hour": 300.0,
                "overhead": 0.005, "overhead_pct": 0.05, "steps": 56, "hours_1000": 3.34}
    args, command = _written(bench, "scale.py", [], tmp_path / "all.md", monkeypatch)
    bench.report([executor], {"local index": bank["local index"]}, args)
    text = _check(tmp_path / "all.md", "scale.md", command, "| executor | workers",
                  "| local | 1 | 2.3 | 96.0 | 300 | 1.00 |")
    assert "| search | 400 | 0.6 |" in text
