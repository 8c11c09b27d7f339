"""``bench/generality.py`` on the tiny ``kv`` library: real builds, real fuzzing, equal CPU per side.

Three benchmarks of the same library: one ships a parse-only fuzz harness, one ships none, one
ships a harness that does not compile. A LogicFuzz run is laid out by hand (two running targets,
one that never ran, an audit log with crash verdicts) and reused with ``--logicfuzz-run``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from benchkit.generality_table import COLUMNS
from tests.bench_scripts import load_bench_script
from tests.conftest import harness

pytestmark = pytest.mark.toolchain

REPO = Path(__file__).resolve().parents[2]
PARSE_ONLY = harness("kv_free(kv_parse(text));")
QUERY = harness('kv_t *kv = kv_parse(text);\nkv_count(kv);\nkv_get(kv, "a");\nkv_free(kv);')
CHECK = harness("if (size < 2 || text[0] != '!') kv_check(text);")
BROKEN = harness("kv_free(kv_parse(text)) + no_such_symbol;")


def bench_module() -> ModuleType:
    return load_bench_script("generality")


@pytest.fixture
def benches(kv_benchmark: Path, tmp_path: Path) -> dict[str, Path]:
    """kv.yaml (a parse-only upstream harness), kvnone.yaml (none), kvbroken.yaml (one that fails)."""
    data = yaml.safe_load(kv_benchmark.read_text())
    # A copy of the session's kv tree: the files added here must not show in other tests' kv.
    root = tmp_path / "kvlib"
    shutil.copytree(data["source"]["path"], root)
    data["source"] = {"path": str(root)}
    for sub, name, code in (("fuzz", "kv_fuzzer.c", PARSE_ONLY), ("broken", "broken_fuzzer.c", BROKEN)):
        (root / sub).mkdir(exist_ok=True)
        (root / sub / name).write_text(code)
    (root / "fuzz" / "kv_fuzzer.dict").write_text('"="\n";"\n')  # shipped beside its harness
    paths = {}
    shipped_by = {"kv": ["fuzz/kv_fuzzer.c"], "kvnone": [], "kvbroken": ["broken/broken_fuzzer.c"]}
    for key, shipped in shipped_by.items():
        paths[key] = tmp_path / f"{key}.yaml"
        paths[key].write_text(yaml.safe_dump({**data, "upstream_harnesses": shipped}))
    return paths


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """A finished LogicFuzz run of kv: 2 of 3 targets running, 3 fix rounds, 2 misuse verdicts."""
    run = tmp_path / "run"
    targets = (("kv_parse", QUERY, True, 1), ("kv_check", CHECK, True, 2), ("kv_get", "junk", False, 0))
    for name, code, runs, fixes in targets:
        target = run / "kv" / name
        target.mkdir(parents=True)
        (target / "harness.c").write_text(code)
        (target / "result.json").write_text(json.dumps({"runs": runs, "fix_rounds": fixes}))
    verdicts = ["harness_misuse", "harness_misuse", "library_bug"]
    (run / "kv" / "kv_check" / "events.jsonl").write_text("".join(
        json.dumps({"type": "crash.verdict", "data": {"verdict": v}}) + "\n" for v in verdicts))
    (run / "run.json").write_text(json.dumps({"functions": ["kv_parse", "kv_check", "kv_get"]}))
    return run


def test_equal_cpu_table_and_json(benches: dict[str, Path], run_dir: Path, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    module = bench_module()
    out = tmp_path / "out"
    argv = [str(benches[k]) for k in ("kv", "kvnone", "kvbroken")]
    argv += [f"--logicfuzz-run={k}={run_dir}" for k in ("kv", "kvnone", "kvbroken")]
    assert module.main([*argv, "--seconds", "2", "--parallel", "2", "--out", str(out)]) == 0
    rows = {r["library"]: r for r in json.loads((out / "generality.json").read_text())["rows"]}

    kv = rows["kv"]
    assert (kv["functions_running"], kv["functions_total"]) == (2, 3)
    assert kv["fix_rounds"] == 3 and kv["misuse_crash_rounds"] == 2
    # 2 s x the larger harness count (2) = 4 CPU-seconds a side: 2 s each for LogicFuzz's two
    # harnesses, all 4 s for the single upstream one.
    assert kv["budget_per_side"] == 4
    # Each side fuzzes with its own dictionary (--dict own): kv's code has no string literals,
    # so LogicFuzz's harnesses get none; the upstream harness gets the one shipped beside it.
    assert kv["logicfuzz"]["budget"] == {"per_harness_seconds": 2, "harnesses": 2, "jobs": 1,
                                         "total_cpu_seconds": 4, "dictionaries": ["", ""]}
    assert kv["upstream"]["budget"] == {"per_harness_seconds": 4, "harnesses": 1, "jobs": 1,
                                        "total_cpu_seconds": 4, "dictionaries": ["kv_fuzzer.dict"]}
    assert kv["upstream"]["status"] == "ok" and kv["upstream"]["listed"] == ["fuzz/kv_fuzzer.c"]
    assert kv["logicfuzz"]["lines"] > kv["upstream"]["lines"] and kv["ratio_lines"] > 1.0
    diff = kv["line_diff"]
    assert diff["only_logicfuzz"] > 0 and 0 < diff["share_of_logicfuzz"] <= 100
    assert diff["share_of_library"] < diff["share_of_logicfuzz"]

    none = rows["kvnone"]
    assert none["upstream"]["status"] == "none shipped" and none["ratio_lines"] is None
    assert none["logicfuzz"]["budget"]["per_harness_seconds"] == 2 and "line_diff" not in none
    broken = rows["kvbroken"]
    assert broken["upstream"]["status"] == "does not build" and broken["ratio_lines"] is None
    assert "no_such_symbol" in broken["upstream"]["failures"]["broken_fuzzer.c"]

    table = capsys.readouterr().out
    header = table.splitlines()[0]
    for column in COLUMNS:
        assert f"| {column} |" in header
    assert "| kv | 2/3 | 3 | 2 | 1 built | 2/4 |" in table
    assert all(line.count("|") == len(header.split(" | ")) + 1 for line in table.splitlines()[:5])
    assert "1/1 with ratio >= 1.0" in table
    assert "kvnone: the Debian source ships no fuzz harness" in table
    assert "kvbroken: upstream harnesses that do not build: broken_fuzzer.c" in table

    merged = tmp_path / "merged.json"
    assert module.main(["--merge", str(out / "generality.json"), "--json", str(merged)]) == 0
    assert capsys.readouterr().out == table
    assert len(json.loads(merged.read_text())["rows"]) == 3


def test_a_failing_library_is_reported_and_the_next_goes_on(
        benches: dict[str, Path], run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"project": "bad", "source": {"path": str(tmp_path / "nowhere")}}))
    argv = [str(bad), str(benches["kvnone"]), f"--logicfuzz-run=kvnone={run_dir}", "--budget", "2",
            "--out", str(tmp_path / "out")]
    assert bench_module().main(argv) == 1  # one library failed, the other is still measured
    rows = {r["library"]: r for r in json.loads((tmp_path / "out" / "generality.json").read_text())["rows"]}
    assert rows["bad"]["error"] and rows["bad"]["stage"] in ("logicfuzz run", "comparison")
    assert rows["kvnone"]["logicfuzz"]["budget"]["per_harness_seconds"] == 1  # 2 s over 2 harnesses
    assert "bad: failed in" in capsys.readouterr().out
    # The run had an empty bank of its own, not the machine's (which earlier runs filled).
    config = yaml.safe_load((tmp_path / "out" / "bad" / "memory.yaml").read_text())
    assert config == {"bank": {"directory": str((tmp_path / "out" / "bad" / "bank").resolve())}}


@pytest.mark.parametrize("argv, said", [
    (["no-such-library-xyz"], "unknown library 'no-such-library-xyz'"),
    (["{kv}", "--logicfuzz-run", "{missing}"], "no directory"),
    (["{kv}", "{kvnone}", "--logicfuzz-run", "{run}"], "say which one"),
    (["missing/thing.yaml"], "does not exist"),
    (["{kv}", "--budget", "0"], "--budget"),
    (["{kv}", "--arms", "usage,sometimes"], "--arms sometimes"),
])
def test_bad_arguments_give_one_line_and_exit_2(
        argv: list[str], said: str, benches: dict[str, Path], run_dir: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    names = {"kv": benches["kv"], "kvnone": benches["kvnone"], "run": run_dir, "missing": tmp_path / "nope"}
    assert bench_module().main([a.format(**names) for a in argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and said in err and err.startswith("generality.py: error:")


def test_a_pinned_debian_library_is_keyed_by_its_name() -> None:
    from benchkit.generality_args import library_of

    lib = library_of("zlib=1:1.2.13.dfsg-1")
    assert (lib.key, lib.name, lib.functions) == ("zlib", "zlib=1:1.2.13.dfsg-1", [])
