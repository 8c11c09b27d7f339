"""The offline engine's harnesses, built with clang against real libraries and fuzzed briefly."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from agents.offline import type_table
from agents.offline.analysis import analyze_function
from agents.offline.fixer import fix_harness
from agents.offline.improver import improve_harness
from agents.offline.synth import default_skeleton, write_harness
from fuzzkit.api import FunctionDecl
from fuzzkit.coverage import CoverageReport, measure_coverage
from fuzzkit.harness import HarnessBuild, build_harness
from fuzzkit.header_facts_collect import collect_facts
from fuzzkit.headers import parse_header
from fuzzkit.library import BuildRecipe, LibraryBuild, build_library
from fuzzkit.runner import FuzzRun, run_fuzzer
from fuzzkit.source import SourceSpec, fetch_source

pytestmark = pytest.mark.toolchain

ZLIB = BuildRecipe(
    sources=["adler32.c", "compress.c", "crc32.c", "deflate.c", "gzclose.c", "gzlib.c",
             "gzread.c", "gzwrite.c", "infback.c", "inffast.c", "inflate.c", "inftrees.c",
             "trees.c", "uncompr.c", "zutil.c"],
    headers=["zlib.h"],
)  # fmt: skip
YAML = BuildRecipe(
    sources=["src/*.c"],
    include_dirs=[".", "include", "src"],
    defines=["YAML_VERSION_MAJOR=0", "YAML_VERSION_MINOR=2", "YAML_VERSION_PATCH=5",
             'YAML_VERSION_STRING="0.2.5"'],
    headers=["include/yaml.h"],
)  # fmt: skip


@pytest.fixture(scope="module")
def libs(cjson_lib: LibraryBuild, cache: Path) -> dict[str, LibraryBuild]:
    return {
        "cjson": cjson_lib,
        "zlib": build_library(fetch_source(SourceSpec(apt="zlib"), cache=cache), ZLIB, cache=cache),
        "yaml": build_library(fetch_source(SourceSpec(apt="libyaml"), cache=cache), YAML, cache=cache),
    }


def api_of(lib: LibraryBuild) -> list[FunctionDecl]:
    """The library's API, with the Types table its headers give made active.

    The offline model reads that table from each prompt's ``## Types`` section; these tests
    call the engine directly, so they activate what prepare would render.
    """
    api = parse_header(Path(lib.headers[0]), lib.include_dirs, lib.defines)
    facts = collect_facts(lib.headers, lib.include_dirs, lib.defines, api)
    type_table._ACTIVE.set(type_table.read_types(facts.render()))
    return api


def generate(lib: LibraryBuild, name: str) -> tuple[FunctionDecl, list[FunctionDecl], str]:
    api = api_of(lib)
    target = next(f for f in api if f.name == name)
    analysis = analyze_function(target, api)
    draft = write_harness(
        target,
        api,
        [Path(lib.headers[0]).name],
        analysis.archetype,
        default_skeleton(analysis.archetype),
        rules=analysis.rules,
    )
    return target, api, draft.code


def build(code: str, lib: LibraryBuild, where: Path, name: str) -> HarnessBuild:
    where.mkdir(parents=True, exist_ok=True)
    source = where / f"{name}.c"
    source.write_text(code)
    return build_harness(source, lib, where / "out")


def assert_no_harness_bug(run: FuzzRun) -> None:
    if run.crash is not None:
        assert not run.crash.in_harness, run.crash.excerpt
    assert run.stats.execs > 100, Path(run.log_path).read_text()[-2000:]


@pytest.mark.parametrize(
    ("lib", "name", "min_cov"),
    [
        ("cjson", "cJSON_Parse", 100),
        ("cjson", "cJSON_ParseWithLength", 100),
        ("cjson", "cJSON_Print", 100),
        ("cjson", "cJSON_Duplicate", 100),
        ("cjson", "cJSON_Minify", 15),
        ("zlib", "inflate", 100),
        ("zlib", "uncompress", 100),
        ("zlib", "crc32", 15),
        ("yaml", "yaml_parser_parse", 500),
        ("yaml", "yaml_emitter_emit", 500),
    ],
)
def test_generated_harness_builds_and_fuzzes_cleanly(
    libs: dict[str, LibraryBuild], tmp_path: Path, lib: str, name: str, min_cov: int
) -> None:
    _, _, code = generate(libs[lib], name)
    built = build(code, libs[lib], tmp_path, name)
    assert built.ok, built.log
    assert not [d for d in built.diagnostics if "implicit" in d.message], built.log
    run = run_fuzzer(Path(str(built.fuzz_binary)), tmp_path / "work", seconds=2)
    assert_no_harness_bug(run)
    assert run.stats.cov >= min_cov


def test_improved_parse_harness_calls_what_was_uncovered(
    libs: dict[str, LibraryBuild], tmp_path: Path
) -> None:
    lib = libs["cjson"]
    target, api, code = generate(lib, "cJSON_Parse")
    first = build(code, lib, tmp_path / "initial", "parse")
    assert first.ok, first.log
    run = run_fuzzer(Path(str(first.fuzz_binary)), tmp_path / "initial" / "work", seconds=2)
    assert_no_harness_bug(run)
    report = measure_coverage(
        Path(str(first.cov_binary)), run.replay_inputs(), lib, tmp_path / "initial" / "cov"
    )
    uncovered = report.uncovered([f.name for f in api])
    assert "cJSON_Duplicate" in uncovered
    improved = improve_harness(code, target, api, uncovered, max_new_calls=6)
    assert len(improved.directions) == 6
    second = build(improved.code, lib, tmp_path / "improved", "parse")
    assert second.ok, second.log
    run2 = run_fuzzer(Path(str(second.fuzz_binary)), tmp_path / "improved" / "work", seconds=2)
    assert_no_harness_bug(run2)
    after = measure_coverage(
        Path(str(second.cov_binary)), run2.replay_inputs(), lib, tmp_path / "improved" / "cov"
    )
    added = [d.split()[1] for d in improved.directions]
    reached = [n for n in added if n not in after.uncovered([n])]
    assert len(reached) >= len(added) // 2, (added, reached)
    assert after.functions.covered > report.functions.covered


def line_percent(report: CoverageReport, suffix: str) -> float:
    counts = next(m["lines"] for name, m in report.per_file.items() if name.endswith(suffix))
    return 100.0 * counts.covered / counts.count


@pytest.mark.skipif(
    not os.environ.get("LOGICFUZZ_BENCH_SECONDS"),
    reason="set LOGICFUZZ_BENCH_SECONDS (e.g. 60) to measure coverage before and after improvement",
)
@pytest.mark.parametrize(
    ("lib", "name", "floor"),
    [("cjson", "cJSON_Parse", 25.0), ("zlib", "inflate", 15.0), ("yaml", "yaml_parser_parse", 40.0)],
)
def test_line_coverage_initial_and_improved(
    libs: dict[str, LibraryBuild], tmp_path: Path, lib: str, name: str, floor: float
) -> None:
    """The FACTS.md recipe: fuzz N s, replay the corpus through the coverage build, count lines.

    The improved harness gets four phase-2 rounds of up to four calls each, from the uncovered
    list of the initial run. Prints the whole library's line coverage (and cJSON.c's for cJSON).
    """
    seconds = int(os.environ["LOGICFUZZ_BENCH_SECONDS"])
    build_ = libs[lib]
    target, api, code = generate(build_, name)
    results = {}
    uncovered: list[str] = []
    for phase in ("initial", "improved"):
        if phase == "improved":
            for _ in range(4):
                called = set(re.findall(r"\b(\w+)\s*\(", code))
                todo = [n for n in uncovered if n not in called]
                code = improve_harness(code, target, api, todo, max_new_calls=4).code
        built = build(code, build_, tmp_path / phase, "harness")
        assert built.ok, built.log
        run = run_fuzzer(Path(str(built.fuzz_binary)), tmp_path / phase / "work", seconds=seconds)
        assert_no_harness_bug(run)
        report = measure_coverage(
            Path(str(built.cov_binary)), run.replay_inputs(), build_, tmp_path / phase / "cov"
        )
        uncovered = report.uncovered([f.name for f in api])
        results[phase] = report.lines.percent
        extra = f", cJSON.c {line_percent(report, 'cJSON.c'):.1f}%" if lib == "cjson" else ""
        print(f"{name} {phase}: library lines {report.lines.percent:.1f}%{extra} after {seconds} s")
    assert results["initial"] > floor
    assert results["improved"] > results["initial"] + 5.0


def test_fixer_repairs_real_clang_errors_of_a_broken_harness(
    libs: dict[str, LibraryBuild], tmp_path: Path
) -> None:
    lib = libs["zlib"]
    _, api, code = generate(lib, "uncompress")
    broken = code.replace('#include "zlib.h"\n', "").replace("#include <stdlib.h>\n", "")
    broken = broken.replace("(uLong)size);", "(uLong)size, 9);", 1)
    assert broken != code
    fixes: list[str] = []
    for attempt in range(3):
        built = build(broken, lib, tmp_path / f"try{attempt}", "fixme")
        if built.ok:
            break
        result = fix_harness(broken, built.log, api, ["zlib.h"])
        assert result.code != broken, (result.unresolved, built.log)
        fixes += result.fixes
        broken = result.code
    assert built.ok, built.log
    assert any("zlib.h" in f for f in fixes)
    assert any(f.startswith("call uncompress with its 4 declared arguments") for f in fixes)
    run = run_fuzzer(Path(str(built.fuzz_binary)), tmp_path / "work", seconds=2)
    assert_no_harness_bug(run)
