"""``logicfuzz report``: loading a run directory, the Markdown and HTML it writes, the charts."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from logicfuzz.cli_report import add_report_command
from logicfuzz.report import ReportError, load_run, percent_of, timeline_of
from logicfuzz.report_plots import bar_chart, line_chart, nice_ticks
from logicfuzz.report_write import write_report


def cov(covered: int, count: int) -> dict[str, Any]:
    return {"covered": covered, "count": count, "percent": round(100 * covered / count, 2)}


def record(function: str, **over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "project": "cjson", "function": function, "archetype": "stateless_parser",
        "compiles": True, "runs": True, "crashes": False, "crash": None,
        "coverage": {"lines": cov(420, 1000), "branches": cov(300, 1000), "functions": cov(40, 80)},
        "target_hits": 812, "best_version": 2, "iterations": 2, "fix_rounds": 1,
        "harness_versions": 3, "model_calls": 5, "prompt_tokens": 9100, "completion_tokens": 1300,
        "usage": {"function_analyzer": {"calls": 1, "prompt_tokens": 1500, "completion_tokens": 200},
                  "prototyper": {"calls": 2, "prompt_tokens": 4100, "completion_tokens": 700},
                  "enhancer": {"calls": 2, "prompt_tokens": 3500, "completion_tokens": 400}},
        "guards": {}, "termination_reason": "coverage plateau after 2 iterations",
        "memory_used": {"session": {"api_constraints": 2, "known_fixes": 1, "archetype": 1},
                        "experience": [{"id": "mem-7", "title": "free what cJSON_Parse returns",
                                        "similarity": 0.71}]},
        "coverage_history": [
            {"iteration": 0, "version": 1, "lines": 30.5, "branches": 20.1,
             "progress": [[0.1, 40, 41], [1.0, 180, 260], [3.0, 300, 520], [5.0, 320, 560]]},
            {"iteration": 1, "version": 2, "lines": 42.0, "branches": 30.0,
             "progress": [[0.1, 60, 70], [1.5, 260, 400], [4.0, 410, 700], [5.0, 415, 720]]},
            {"iteration": 2, "version": 3, "lines": 41.6, "branches": 29.5, "progress": []},
        ],
        "seconds": 61.2,
    }
    return {**base, **over}


CRASH = {"kind": "heap-buffer-overflow", "signature": "parse_string cJSON.c:812",
         "summary": "READ of size 1 past a 4-byte buffer", "reproducer": "crash-0a1b",
         "verdict": "library_bug", "feasible": True}


def write_run(root: Path, *, baseline: bool = True, experience: bool = True) -> Path:
    """A run directory shaped like `logicfuzz run` writes it (values made up for the test)."""
    root.mkdir(parents=True, exist_ok=True)
    records = [
        record("cJSON_Parse"),
        record("cJSON_ParseWithLength", crashes=True, crash=CRASH, best_version=1, iterations=0,
               termination_reason="real crash found in library code",
               coverage_history=[{"iteration": 0, "version": 1, "lines": 25.0, "branches": 15.0}],
               coverage_over_time=[[0.2, 30, 31], [2.0, 150, 190], [4.5, 210, 300]],
               coverage={"lines": cov(250, 1000), "branches": cov(150, 1000), "functions": cov(20, 80)}),
        record("cJSON_Minify", runs=False, best_version=1, coverage_history=[], iterations=0,
               coverage={"lines": cov(10, 1000), "branches": cov(4, 1000), "functions": cov(2, 80)},
               termination_reason="fix rounds exhausted"),
        {"project": "cjson", "function": "cJSON_Duplicate",
         "error": "function_analyzer: model call failed: Error code: 503 - upstream overloaded"},
    ]
    (root / "run.json").write_text(json.dumps({
        "benchmark": "benchmarks/cjson.yaml", "functions": [r["function"] for r in records],
        "context": {"model": "openai:fake-model", "fuzz_seconds": 5, "max_iterations": 2,
                    "memory_mode": "retrieve-extract", "api_key_env": "OPENAI_API_KEY"}}))
    (root / "summary.json").write_text(json.dumps({
        "run_dir": str(root), "project": "cjson", "results": records,
        "union_coverage": {"lines": cov(560, 1000), "branches": {"percent": 51.25}}}))
    for rec in records:
        tdir = root / "cjson" / rec["function"]
        tdir.mkdir(parents=True, exist_ok=True)
        name = "error.json" if rec.get("error") else "result.json"
        (tdir / name).write_text(json.dumps(rec))
        if not rec.get("error"):
            (tdir / "harness.c").write_text(
                "#include <stdint.h>\n#include \"cJSON.h\"\n"
                "int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {\n"
                "  if (size < 1 && data[0] == '<') return 0;\n  return 0;\n}\n")
    (root / "cjson" / "cJSON_Minify" / "fuzz.log").write_text(
        "INFO: Seed: 1\n#2\tINITED cov: 12 ft: 13 corp: 1/1b exec/s: 0 rss: 30Mb\n"
        "#64\tNEW    cov: 15 ft: 19 corp: 3/9b lim: 4 exec/s: 0 rss: 31Mb\n"
        "#4096\tpulse  cov: 18 ft: 25 corp: 5/40b lim: 40 exec/s: 2048 rss: 33Mb\n"
        "#9000\tDONE   cov: 18 ft: 25 corp: 5/40b lim: 90 exec/s: 1800 rss: 33Mb\n")
    if baseline:
        (root / "baseline.json").write_text(json.dumps({
            "label": "upstream cjson_read_fuzzer, 60 s",  # long labels must not break the layout
            "libraries": {"cjson": {"lines": 37.3, "branches": 28.0}},
            "targets": {"cjson/cJSON_ParseWithLength": {
                "lines": cov(300, 1000), "label": "naive harness: one call of the target per input, 60 s"}},
        }))
    if experience:
        (root / "experience.json").write_text(json.dumps({
            "bank": "fuzz-c",
            "growth": [{"label": f"t{i}", "items": n} for i, n in enumerate([0, 2, 3, 3, 5, 6], 1)],
            "items": [{"id": f"m{i}", "title": f"lesson {i}", "trust": t, "validation_level": i % 4,
                       "status": "active"} for i, t in enumerate([0.5, 0.5, 0.55, 0.62, 0.9, 0.3], 1)],
        }))
    return root


def test_load_run_reads_every_target_in_run_order(tmp_path: Path) -> None:
    data = load_run(write_run(tmp_path / "run"))
    assert [t.function for t in data.targets] == ["cJSON_Parse", "cJSON_ParseWithLength",
                                                  "cJSON_Minify", "cJSON_Duplicate"]
    assert [t.status for t in data.targets] == ["runs", "crash", "builds", "error"]
    assert data.totals() == {"targets": 4, "building": 3, "running": 2, "crashing": 1, "repaired": 0,
                             "errors": 1, "model_calls": 15, "tokens": 31200}
    parse, length, minify, dup = data.targets
    assert parse.baseline == {"lines": 37.3, "branches": 28.0} and "upstream" in parse.baseline_label
    assert length.baseline == {"lines": 30.0} and length.baseline_label.startswith("naive harness")
    assert dup.error.startswith("function_analyzer: model call failed")
    assert parse.harness.startswith("#include") and dup.harness == ""


def test_per_target_files_beat_a_stale_summary(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run")
    fixed = record("cJSON_Duplicate", best_version=4)
    (run / "cjson" / "cJSON_Duplicate" / "result.json").write_text(json.dumps(fixed))
    (run / "summary.json").unlink()  # a run interrupted before its summary
    data = load_run(run)
    dup = next(t for t in data.targets if t.function == "cJSON_Duplicate")
    assert dup.status == "runs" and dup.record["best_version"] == 4


def test_timelines_from_history_best_or_fuzz_log(tmp_path: Path) -> None:
    data = load_run(write_run(tmp_path / "run"))
    parse, length, minify, dup = data.targets
    assert parse.timeline and parse.timeline.x_unit == "seconds"
    assert [label for label, _ in parse.timeline.series] == ["v1", "v2"]  # v3 has no samples
    assert parse.timeline.series[1][1][-1] == (5.0, 415.0)
    assert length.timeline and length.timeline.series[0][0] == "v1 (best)"
    assert minify.timeline and minify.timeline.x_unit == "executions"
    assert minify.timeline.series[0][1] == [(2.0, 12.0), (64.0, 15.0), (4096.0, 18.0), (9000.0, 18.0)]
    assert dup.timeline is None
    assert timeline_of({}, tmp_path) is None


def test_timeline_reads_each_versions_fuzz_log(tmp_path: Path) -> None:
    for version, cov_value in ((1, 10), (2, 14), (10, 20)):
        run = tmp_path / f"v{version}" / "run"
        run.mkdir(parents=True)
        (run / "fuzz.log").write_text(f"#1\tINITED cov: 3 ft: 3 corp: 1/1b exec/s: 0 rss: 30Mb\n"
                                      f"#500\tDONE   cov: {cov_value} ft: 9 corp: 2/3b exec/s: 99\n")
    (tmp_path / "fuzz.log").write_text("#7\tDONE   cov: 99 ft: 99\n")  # the copy of one of them
    timeline = timeline_of({"best_version": 2}, tmp_path)
    assert timeline is not None and timeline.x_unit == "executions"
    assert timeline.series == [("v1", [(1.0, 3.0), (500.0, 10.0)]), ("v2", [(1.0, 3.0), (500.0, 14.0)]),
                               ("v10", [(1.0, 3.0), (500.0, 20.0)])]


def test_percent_of_accepts_numbers_and_coverage_dicts() -> None:
    assert percent_of(37.3) == 37.3 and percent_of(cov(1, 4)) == 25.0
    assert percent_of({"covered": 1, "count": 8}) == 12.5
    assert percent_of(None) is None and percent_of({"count": 0}) is None and percent_of(True) is None


def test_markdown_holds_the_tables(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run")
    _, md_path = write_report(run)
    md = md_path.read_text()
    row = next(line for line in md.splitlines() if line.startswith("| cjson | cJSON_Parse |"))
    assert "42.0% (base 37.3%, +4.7)" in row and "| runs |" in row
    length = next(line for line in md.splitlines() if line.startswith("| cjson | cJSON_ParseWithLength |"))
    assert "25.0% (base 30.0%, -5.0)" in length
    assert "heap-buffer-overflow: READ of size 1 past a 4-byte buffer (library bug)" in length
    assert "| prototyper | 2 | 4100 | 700 |" in md
    assert "mem-7 free what cJSON_Parse returns (0.71)" in md
    assert "Line coverage per iteration: 0: 30.5%, 1: 42.0%, 2: 41.6%." in md
    assert "Coverage: lines 420/1000 (42.0% (base 37.3%, +4.7)), branches 300/1000" in md
    assert "**Error:** function_analyzer: model call failed" in md
    assert ("4 targets: 3 build, 2 run, 1 crash on a library bug, 0 repaired a harness-misuse crash, "
            "1 failed with an error; 15 model calls, 31200 tokens.") in md
    assert ("**All harnesses together: 56.0% lines, 51.2% branches; baseline 37.3% lines, 28.0% branches "
            "(1.50x lines)**") in md


def test_union_without_a_baseline_or_summary(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", baseline=False)
    assert load_run(run).union_line() == "All harnesses together: 56.0% lines, 51.2% branches"
    (run / "summary.json").unlink()
    assert load_run(run).union_line() == ""


def svgs(html: str) -> list[ET.Element]:
    return [ET.fromstring(s) for s in re.findall(r"<svg.*?</svg>", html, re.S)]


def test_html_is_self_contained_and_has_the_charts(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run")
    html_path, _ = write_report(run)
    html = html_path.read_text()
    for forbidden in ("<script", "<link", "src=", "url(", "@import", "http://", "https://"):
        assert forbidden not in html, forbidden
    assert "<strong>All harnesses together: 56.0% lines" in html
    charts = svgs(html)
    titles = [c.get("aria-label") for c in charts]
    assert titles == ["Line coverage per iteration (phase 2)", "Coverage over time: cJSON_Parse",
                      "Coverage over time: cJSON_ParseWithLength", "Coverage over time: cJSON_Minify",
                      "Experience bank growth", "Trust of the bank's items"]
    iteration = charts[0]
    assert len(iteration.findall("polyline")) == 2  # two targets have an iteration history
    assert len(iteration.findall("circle")) == 4  # 3 + 1 points
    labels = [t.text for t in iteration.iter("text")]
    assert "iteration" in labels and "line coverage (%)" in labels
    # Each target's baseline is a dashed level in its own colour, named in the legend.
    assert "cJSON_Parse: upstream cjson_read_fuzzer, 60 s" in labels
    assert any(str(label).startswith("cJSON_ParseWithLength: naive harness") for label in labels)
    refs = iteration.findall("line[@class='ref']")
    assert [r.get("stroke") for r in refs] == [p.get("stroke") for p in iteration.findall("polyline")]
    assert "0.5" not in labels and {"0", "1", "2"} <= set(labels)  # iterations are whole numbers
    trust = charts[-1]
    assert sorted(float(r.get("height") or 0) > 0 for r in trust.findall("rect")).count(True) == 4
    assert 'class="pill s-error"' in html and "upstream overloaded" in html
    assert html.count('class="target"') == 4


def test_html_escapes_what_the_run_wrote(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", baseline=False, experience=False)
    path = run / "cjson" / "cJSON_Parse" / "result.json"
    rec = json.loads(path.read_text())
    rec["termination_reason"] = "<img onerror=alert(1)>"
    path.write_text(json.dumps(rec))
    html = write_report(run)[0].read_text()
    assert "<img" not in html and "&lt;img onerror=alert(1)&gt;" in html
    assert "Experience bank" not in html and "base " not in html


def test_a_directory_without_results_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ReportError, match="holds no results"):
        load_run(tmp_path)
    with pytest.raises(ReportError, match="not a directory"):
        load_run(tmp_path / "missing")
    (tmp_path / "summary.json").write_text("{not json")
    with pytest.raises(ReportError, match=r"summary\.json is not readable JSON"):
        load_run(tmp_path)


def test_cli_command_writes_both_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="logicfuzz")
    add_report_command(parser.add_subparsers(dest="command", required=True))
    run = write_run(tmp_path / "run")
    args = parser.parse_args(["report", str(run), "--json"])
    assert args.func(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert Path(out["html"]).is_file() and Path(out["markdown"]).is_file()


def test_nice_ticks_are_round_and_cover_the_range() -> None:
    assert nice_ticks(0, 42) == [0, 10, 20, 30, 40, 50]
    assert nice_ticks(0, 1) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]
    ticks = nice_ticks(3.2, 1234)
    assert ticks[0] <= 3.2 and ticks[-1] >= 1234 and len(ticks) <= 8
    assert nice_ticks(5, 5)[0] <= 5 <= nice_ticks(5, 5)[-1]


def test_charts_place_points_inside_the_plot_area() -> None:
    svg = ET.fromstring(line_chart([("a", [(0, 0), (10, 50)]), ("b", [(5, 25)])], title="t",
                                   x_label="x", y_label="y", y_min=0, markers=True))
    xs = [float(c.get("cx") or 0) for c in svg.findall("circle")]
    ys = [float(c.get("cy") or 0) for c in svg.findall("circle")]
    view = [float(v) for v in (svg.get("viewBox") or "").split()]
    assert all(0 < x < view[2] for x in xs) and all(0 < y < view[3] for y in ys)
    assert ys[0] > ys[1]  # larger values are drawn higher
    assert "no samples recorded" in line_chart([("a", [])], title="t", x_label="x", y_label="y")
    assert "nothing to count" in bar_chart([], title="t", x_label="x", y_label="y")
