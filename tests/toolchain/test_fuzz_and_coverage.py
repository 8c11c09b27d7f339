from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from fuzzkit.coverage import CoverageReport, measure_coverage
from fuzzkit.coverage_union import union_coverage
from fuzzkit.errors import ToolchainError
from fuzzkit.harness import HarnessBuild
from fuzzkit.library import LibraryBuild
from fuzzkit.runner import FuzzRun, run_fuzzer

pytestmark = pytest.mark.toolchain


def test_naive_cjson_harness_fuzzes_and_measures_coverage(
    naive_cjson: HarnessBuild, cjson_lib: LibraryBuild, tmp_path: Path
) -> None:
    assert naive_cjson.fuzz_binary and naive_cjson.cov_binary
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "object.json").write_text('{"key": [1, 2.5e3, "\\u00e9", true, null]}')
    run = run_fuzzer(Path(naive_cjson.fuzz_binary), tmp_path, seconds=3, seed_dirs=[seeds])
    assert not run.crashed and not run.timed_out and run.exit_code == 0
    assert 3 <= run.seconds < 3 + 10
    assert run.stats.execs > 1000 and run.stats.cov > 20 and run.stats.corpus_size > 5
    assert run.stats.exec_per_sec > 0
    corpus = sorted(Path(run.corpus_dir).iterdir())
    assert len(corpus) > 5  # libFuzzer keeps about corpus_size files (the empty seed is not written)
    times = [t for t, _, _ in run.progress]
    assert times == sorted(times) and 0 <= times[0] < times[-1] <= run.seconds
    assert run.progress[-1][1:] == (run.stats.cov, run.stats.ft)
    assert FuzzRun.from_dict(json.loads(json.dumps(run.to_dict()))) == run

    assert run.replay_inputs() == [Path(run.corpus_dir), seeds]
    assert "1 files found in " + str(seeds) in Path(run.log_path).read_text()
    report = measure_coverage(Path(naive_cjson.cov_binary), run.replay_inputs(), cjson_lib, tmp_path / "cov")
    assert 0 < report.lines.percent < 100
    assert 0 < report.functions.covered < report.functions.count
    assert 0 < report.branches.covered < report.branches.count
    assert list(report.per_file) == ["cJSON.c"]
    assert report.per_file["cJSON.c"]["lines"] == report.lines
    assert report.function_hits["cJSON_Parse"] >= len(corpus)
    assert report.function_hits["parse_value"] > 0  # static functions lose llvm-cov's "file.c:" prefix
    assert report.uncovered(["cJSON_Parse", "cJSON_PrintUnformatted", "not_a_function"]) == [
        "cJSON_PrintUnformatted",
        "not_a_function",
    ]
    assert 0 < report.function_region_percent["cJSON_Parse"] <= 100
    assert report.inputs_run == len(corpus) + 1
    assert CoverageReport.from_dict(json.loads(json.dumps(report.to_dict()))) == report


CRASHY = """\
if (data[0] == 'B') { lib_before_abort(); abort(); }
keep_alive = (void *)(long)lib_ok(data, size);
"""


def test_coverage_keeps_profiles_of_crashing_inputs(
    make_harness: Callable[[str, str], HarnessBuild], buggy_lib: LibraryBuild, tmp_path: Path
) -> None:
    build = make_harness("crashy", CRASHY)
    assert build.cov_binary
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "good").write_bytes(b"hello")
    (corpus / "bad").write_bytes(b"B")  # kills the batch replay: the fallback runs files one by one
    crash = tmp_path / "crash-1"
    crash.write_bytes(b"Boom")
    report = measure_coverage(
        Path(build.cov_binary), [corpus, crash, tmp_path / "missing"], buggy_lib, tmp_path / "w"
    )
    assert report.function_hits["lib_ok"] == 1  # counted once: the dead batch's profile was dropped
    assert report.function_hits["lib_before_abort"] == 2  # written by the replay main's signal handler
    assert report.function_hits["bug_sum"] == 0
    # The whole library counts, also functions the harness never references.
    assert report.functions.count == 6 and report.functions.covered == 2
    assert report.inputs_run == 2 + 2 + 1


def test_coverage_of_nothing_run_is_low_but_valid(
    naive_cjson: HarnessBuild, cjson_lib: LibraryBuild, tmp_path: Path
) -> None:
    assert naive_cjson.cov_binary
    report = measure_coverage(Path(naive_cjson.cov_binary), [], cjson_lib, tmp_path)
    assert report.function_hits["cJSON_Parse"] == 1  # the empty input always runs
    assert 0 < report.lines.percent < 10


def test_union_coverage_joins_harnesses(
    make_harness: Callable[..., HarnessBuild], buggy_lib: LibraryBuild, tmp_path: Path
) -> None:
    first = make_harness("only_ok", "keep_alive = (void *)(long)lib_ok(data, size);")
    second = make_harness("only_keep", "free(bug_keep(data, size));")
    assert first.cov_binary and second.cov_binary
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a").write_bytes(b"xyz")
    one = measure_coverage(Path(first.cov_binary), [corpus], buggy_lib, tmp_path / "one")
    two = measure_coverage(Path(second.cov_binary), [corpus], buggy_lib, tmp_path / "two")
    both = union_coverage(
        [(Path(first.cov_binary), [corpus]), (Path(second.cov_binary), [corpus])], buggy_lib, tmp_path / "u"
    )
    assert one.function_hits["lib_ok"] > 0 and one.function_hits["bug_keep"] == 0
    assert two.function_hits["bug_keep"] > 0 and two.function_hits["lib_ok"] == 0
    assert both.function_hits["lib_ok"] == one.function_hits["lib_ok"]
    assert both.function_hits["bug_keep"] == two.function_hits["bug_keep"]
    assert both.lines.count == one.lines.count  # one library, counted once across binaries
    assert both.lines.covered == one.lines.covered + two.lines.covered  # disjoint functions
    assert both.functions.covered == 2 and both.inputs_run == one.inputs_run + two.inputs_run
    same = union_coverage(
        [(Path(first.cov_binary), [corpus]), (Path(first.cov_binary), [corpus])], buggy_lib, tmp_path / "s"
    )
    assert same.lines == one.lines and same.function_hits["lib_ok"] == 2 * one.function_hits["lib_ok"]
    with pytest.raises(ToolchainError):
        union_coverage([], buggy_lib, tmp_path / "none")


def test_code_of_an_included_implementation_file_counts_as_the_librarys(
    cache: Path, tmp_path: Path
) -> None:
    # One compiled file includes the implementation of another (`#include "impl/match.c"`), which
    # the recipe keeps from compiling on its own: llvm-cov reports its functions under the
    # included file, and coverage must count them (they were once reported as never called).
    from fuzzkit.harness import build_harness
    from fuzzkit.library import BuildRecipe, build_library, plan_build

    root = tmp_path / "src"
    (root / "impl").mkdir(parents=True)
    (root / "acme.h").write_text(
        "int acme_compile(const char *p, int n);\nint acme_match(const char *s, int n);\n"
    )
    (root / "impl" / "match.c").write_text(
        "int acme_match(const char *s, int n) {\n  int k = 0;\n"
        "  for (int i = 0; i < n; i++) k += s[i] == 'a';\n  return k;\n}\n"
    )
    (root / "compile.c").write_text(
        '#include "acme.h"\nint acme_compile(const char *p, int n) { return n > 0 && p[0] == \'x\'; }\n'
        '#include "impl/match.c"\n'
    )
    recipe = BuildRecipe(sources=["*.c", "impl/*.c"], exclude=["impl/*"], headers=["acme.h"])
    plan = plan_build(root, recipe, cache)
    assert [Path(f).name for f in plan.coverage_files] == ["compile.c", "match.c"]
    assert [Path(f).name for f in plan.sources] == ["compile.c"]
    lib = build_library(root, recipe, cache=cache)
    assert lib.coverage_files == plan.coverage_files
    harness = tmp_path / "h.c"
    harness.write_text(
        '#include <stdint.h>\n#include <stddef.h>\n#include "acme.h"\n'
        "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {\n"
        "  return acme_match((const char *)d, (int)n) < 0;\n}\n"
    )
    build = build_harness(harness, lib, tmp_path / "out")
    assert build.ok and build.cov_binary, build.log
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    (inputs / "a").write_bytes(b"banana")
    report = measure_coverage(Path(build.cov_binary), [inputs], lib, tmp_path / "cov")
    assert report.function_hits["acme_match"] > 0
    assert report.function_hits["acme_compile"] == 0
    assert sorted(report.per_file) == ["compile.c", "match.c"]
    assert report.per_file["match.c"]["lines"].covered > 0


MAGIC = """\
if (size >= 4 && data[0] == 'S' && data[1] == 'E' && data[2] == 'E' && data[3] == 'D') abort();
keep_alive = (void *)(long)lib_ok(data, size);
"""


def test_a_fixed_seed_gives_the_same_run_twice(
    make_harness: Callable[[str, str], HarnessBuild], tmp_path: Path
) -> None:
    # memory_ab compares arms at one libFuzzer seed: the same harness must then meet the same
    # inputs, so a crash one arm hits and the other misses comes from the harnesses, not luck.
    build = make_harness("magic", MAGIC)
    assert build.fuzz_binary
    runs = [run_fuzzer(Path(build.fuzz_binary), tmp_path / name, seconds=20, seed=seed)
            for name, seed in (("a", 7), ("b", 7), ("c", 8))]
    logs = [Path(r.log_path).read_text() for r in runs]
    assert all(r.crashed for r in runs)
    assert "Seed: 7" in logs[0] and "Seed: 7" in logs[1] and "Seed: 8" in logs[2]
    crashes = [Path(r.crash_files[0]).read_bytes() for r in runs]
    assert crashes[0] == crashes[1] and crashes[0][:4] == b"SEED"
    execs = [r.stats.execs for r in runs]
    assert execs[0] == execs[1] != execs[2]  # the same inputs in the same order, then another order


def test_a_seed_and_a_run_count_repeat_a_run_input_for_input(
    make_harness: Callable[[str, str], HarnessBuild], tmp_path: Path
) -> None:
    # A time budget ends two runs of one seed at different inputs on a loaded machine; a run
    # count ends them at the same one, so the corpus each kept is the same.
    build = make_harness("counted", "keep_alive = (void *)(long)lib_ok(data, size);")
    assert build.fuzz_binary
    runs = [run_fuzzer(Path(build.fuzz_binary), tmp_path / name, seconds=60, seed=3, runs=5000)
            for name in ("a", "b")]
    assert all("Done 5000 runs" in Path(r.log_path).read_text() for r in runs)
    kept = [sorted(p.read_bytes() for p in Path(r.corpus_dir).iterdir()) for r in runs]
    assert kept[0] == kept[1] and len(kept[0]) > 1
    assert all(r.seconds < 30 for r in runs)  # the count ended them, not the 60 s
