"""``bench/coverage_vs_upstream.py`` end to end on the tiny ``kv`` library: real builds, real fuzzing.

The "upstream" harness only parses; the "LogicFuzz" run's two harnesses parse and then query the
parsed list, so their union must cover more of ``kv.c`` and the ratio must say so. Both sides get
the same total fuzzing CPU: the two LogicFuzz harnesses half the seconds each of the upstream one.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from tests.bench_scripts import load_bench_script
from tests.conftest import harness

pytestmark = pytest.mark.toolchain

REPO = Path(__file__).resolve().parents[2]
PARSE_ONLY = harness("kv_free(kv_parse(text));")
QUERY = harness('kv_t *kv = kv_parse(text);\nkv_count(kv);\nkv_get(kv, "a");\nkv_free(kv);')
CHECK = harness("if (size < 2 || text[0] != '!') kv_check(text);")


def bench_module() -> ModuleType:
    return load_bench_script("coverage_vs_upstream")


@pytest.fixture
def bench(kv_benchmark: Path, tmp_path: Path) -> Path:
    """The kv benchmark with a shipped fuzz harness that only parses."""
    data = yaml.safe_load(kv_benchmark.read_text())
    root = Path(data["source"]["path"])
    (root / "fuzz").mkdir(exist_ok=True)
    (root / "fuzz" / "kv_fuzzer.c").write_text(PARSE_ONLY)
    path = tmp_path / "kv.yaml"
    path.write_text(yaml.safe_dump({**data, "upstream_harnesses": ["fuzz/kv_fuzzer.c"]}))
    return path


def test_union_of_logicfuzz_harnesses_against_the_shipped_one(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    for name, code, runs in (("kv_parse", QUERY, True), ("kv_check", CHECK, True), ("kv_get", "junk", False)):
        target = run / "kv" / name
        target.mkdir(parents=True)
        (target / "harness.c").write_text(code)
        (target / "result.json").write_text(json.dumps({"runs": runs}))

    rc = bench_module().main([str(bench), "--seconds", "2", "--repeats", "2", "--parallel", "2",
                              "--logicfuzz-runs", str(run), "--out", str(tmp_path / "out")])
    assert rc == 0
    rows = json.loads((tmp_path / "out" / "results.json").read_text())
    row = rows[0]
    assert row["baseline"] == "upstream" and row["logicfuzz_harnesses"] == 2  # the failed target is left out
    assert len(row["base"]["lines"]) == 2 and len(row["logicfuzz"]["lines"]) == 2
    assert min(row["logicfuzz"]["lines"]) > max(row["base"]["lines"])
    # Equal CPU: 2 s x the larger count (2) = 4 s per side, all of it to the one upstream harness.
    assert row["budget"]["mode"] == "equal-cpu"
    assert row["budget"]["base"] == {
        "per_harness_seconds": 4, "harnesses": 1, "jobs": 1, "total_cpu_seconds": 4, "dictionaries": [""]}
    assert row["budget"]["logicfuzz"] == {  # kv's code has no string literals: no dictionary
        "per_harness_seconds": 2, "harnesses": 2, "jobs": 1, "total_cpu_seconds": 4, "dictionaries": ["", ""]}
    baseline = json.loads((run / "baseline.json").read_text())["libraries"]["kv"]
    assert baseline["lines"] == sorted(row["base"]["lines"])[0] + (
        sorted(row["base"]["lines"])[1] - sorted(row["base"]["lines"])[0]) / 2  # median of two
    assert baseline["label"].startswith("upstream harness (kv_fuzzer.c), 4 s each")
    table = capsys.readouterr().out
    assert "kv" in table and "upstream" in table and "x" in table.splitlines()[-1]
    assert "| 4 / 2 |" in table.splitlines()[-1] and "equal total CPU" in table


def test_per_harness_gives_every_harness_the_same_seconds(bench: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    for name, code in (("kv_parse", QUERY), ("kv_check", CHECK)):
        (run / "kv" / name).mkdir(parents=True)
        (run / "kv" / name / "harness.c").write_text(code)
        (run / "kv" / name / "result.json").write_text(json.dumps({"runs": True}))
    rc = bench_module().main([str(bench), "--seconds", "1", "--repeats", "1", "--per-harness",
                              "--logicfuzz-runs", str(run), "--out", str(tmp_path / "out")])
    assert rc == 0
    budget = json.loads((tmp_path / "out" / "results.json").read_text())[0]["budget"]
    assert budget["mode"] == "per-harness"
    assert budget["base"]["per_harness_seconds"] == budget["logicfuzz"]["per_harness_seconds"] == 1
    assert budget["logicfuzz"]["total_cpu_seconds"] == 2 * budget["base"]["total_cpu_seconds"]


def test_a_missing_run_is_a_clear_error(bench: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_module().main([str(bench), "--seconds", "1", "--repeats", "1"]) == 1
    assert "--logicfuzz-runs" in capsys.readouterr().err
