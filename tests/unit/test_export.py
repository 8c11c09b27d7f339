"""The pieces of ``logicfuzz export`` that need no toolchain: set cover, lcov, build.sh text, errors."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from fuzzkit.coverage_lines import greedy_cover, parse_lcov
from fuzzkit.errors import ToolchainError
from fuzzkit.export_build import build_script, compile_flags, generated_files, link_flags, source_counterpart
from fuzzkit.library import LibraryBuild
from logicfuzz.cli import main


def lines(*numbers: int, file: str = "a.c") -> set[tuple[str, int]]:
    return {(file, n) for n in numbers}


def test_greedy_cover_takes_the_largest_gain_first_and_leaves_out_what_others_cover() -> None:
    sets = [lines(1, 2, 8), lines(1, 2, 3, 4, 5), lines(4, 5, 6, 7, 8), lines(9), lines(3, 4)]
    # 1 (5 lines), then 2 adds 6, 7, 8; then 3 adds 9; 0 and 4 add nothing once those are taken.
    assert greedy_cover(sets) == [(1, 5), (2, 3), (3, 1)]
    chosen = [i for i, _ in greedy_cover(sets)]
    assert set().union(*(sets[i] for i in chosen)) == set().union(*sets)


def test_greedy_cover_ties_go_to_the_earlier_harness_and_files_keep_lines_apart() -> None:
    sets = [lines(1, 2), lines(3, 4), lines(1, 2, file="b.c")]
    assert greedy_cover(sets) == [(0, 2), (1, 2), (2, 2)]
    assert greedy_cover([lines(1), lines(1)]) == [(0, 1)]  # the same lines twice: one harness


def test_greedy_cover_of_nothing_chooses_nothing() -> None:
    assert greedy_cover([]) == []
    assert greedy_cover([set(), set()]) == []


def test_parse_lcov_keeps_run_lines_of_the_wanted_files_only() -> None:
    text = "\n".join(["SF:/lib/a.c", "DA:3,1", "DA:4,0", "DA:5,12,abc", "end_of_record",
                      "SF:/harness.c", "DA:1,9", "end_of_record", "SF:/lib/b.c", "DA:7,2", "end_of_record"])
    assert parse_lcov(text, ["/lib/a.c", "/lib/b.c"]) == {("/lib/a.c", 3), ("/lib/a.c", 5), ("/lib/b.c", 7)}


def _lib(root: Path, **fields: object) -> LibraryBuild:
    data: dict[str, object] = {
        "key": "k", "root": str(root), "fuzz_archive": "", "cov_archive": "", "log_path": "",
        "include_dirs": [str(root), str(root / "include")], "headers": [str(root / "include" / "t.h")],
        "coverage_files": [], "defines": ['VERSION="1.2 beta"', "LIMIT=64"],
        "sources": [str(root / "src" / "t.c"), str(root / "src" / "u.cc")],
        "cflags": ["-include", f"{root}/src/conf.h", "-std=c99"],
        "ldflags": ["/usr/lib/x86_64-linux-gnu/libz.so.1", "-lpthread"]}
    return LibraryBuild(**{**data, **fields})  # type: ignore[arg-type]


def test_build_script_writes_the_recipe_relative_to_the_source_and_is_valid_bash(tmp_path: Path) -> None:
    lib = _lib(tmp_path)
    assert compile_flags(lib) == ['-I"$LIB_SRC"', '-I"$LIB_SRC"/include', "'-DVERSION=\"1.2 beta\"'",
                                  "-DLIMIT=64", "-include", '"$LIB_SRC"/src/conf.h', "-std=c99"]
    assert link_flags(lib) == ["-lz", "-lpthread", "-lm"]
    script = build_script(lib, "tally", ["a_fuzzer.c"], generated=False, note="from run r1")
    assert str(tmp_path) not in script  # nothing of this machine's paths
    assert "  src/t.c\n  src/u.cc\n" in script and 'LIB_SRC="$SRC/tally"' in script
    assert "$CXX $CXXFLAGS \"$BUILD/$name.o\"" in script  # a C++ source: link with the C++ driver
    assert "$LIB_FUZZING_ENGINE" in script and "generated" not in script
    assert script.splitlines()[1].startswith("set -eu")  # `bash build.sh` ignores the #! line's -e
    assert subprocess.run(["bash", "-n"], input=script, text=True, capture_output=True).returncode == 0
    with_generated = build_script(lib, "tally", ["a_fuzzer.c"], generated=True)
    assert 'cp -a "$HERE/generated/." "$BUILD/src/"' in with_generated


def test_build_script_refuses_a_source_outside_the_tree(tmp_path: Path) -> None:
    lib = _lib(tmp_path / "root", sources=[str(tmp_path / "elsewhere.c")])
    with pytest.raises(ToolchainError, match="outside the library's source tree"):
        build_script(lib, "tally", ["a_fuzzer.c"], generated=False)


def test_generated_files_are_those_the_source_lacks_or_changes(tmp_path: Path) -> None:
    source, configured = tmp_path / "source", tmp_path / "configured"
    for root in (source, configured):
        (root / "include").mkdir(parents=True)
        (root / "src").mkdir()
        (root / "include" / "t.h").write_text("int t(void);\n")
        (root / "src" / "t.c").write_text("int t(void) { return 0; }\n")
    (configured / "include" / "config.h").write_text("#define HAVE_X 1\n")  # made by configure
    (configured / "src" / "t.c").write_text("int t(void) { return 1; }\n")  # rewritten by it
    lib = _lib(configured, include_dirs=[str(configured / "include")], sources=[str(configured / "src/t.c")],
               headers=[str(configured / "include" / "t.h")])
    (configured / "include" / "config.log").write_text("CC=clang\n")  # never read by the build
    assert generated_files(lib, source) == ["include/config.h", "src/t.c"]
    assert generated_files(_lib(source), source) == []


def test_a_project_in_a_subdirectory_builds_from_there(tmp_path: Path) -> None:
    source, configured = tmp_path / "pkg-1.0", tmp_path / "cache" / "proj"  # a copy of pkg-1.0/proj
    (source / "proj").mkdir(parents=True)
    (source / "proj" / "t.c").write_text("int t;\n")
    (source / "debian").mkdir()
    configured.mkdir(parents=True)
    (configured / "t.c").write_text("int t;\n")
    lib = _lib(configured, include_dirs=[str(configured)], sources=[str(configured / "t.c")], cflags=[])
    assert source_counterpart(lib, source) == (source / "proj").resolve()
    assert source_counterpart(_lib(source), source) == source.resolve()
    script = build_script(lib, "pkg", ["a_fuzzer.c"], generated=False, subdir="proj")
    assert 'LIB_SRC="$SRC/pkg"/proj\n' in script and "  t.c\n" in script


def test_export_says_what_is_wrong_and_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", str(tmp_path / "nothing"), "--to", str(tmp_path / "out")]) == 2
    assert "not a run directory" in capsys.readouterr().err
    run, full = tmp_path / "run", tmp_path / "full"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"benchmarks": []}))
    full.mkdir()
    (full / "keep.txt").write_text("x")
    assert main(["export", str(run), "--to", str(full)]) == 2
    assert "not an empty directory" in capsys.readouterr().err
    assert (full / "keep.txt").read_text() == "x"


def test_a_run_over_several_projects_needs_project(tmp_path: Path, kv_benchmark: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "kv2.yaml"
    other.write_text(yaml.safe_dump({**yaml.safe_load(kv_benchmark.read_text()), "project": "kv2"}))
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"benchmark_files": [str(kv_benchmark), str(other)]}))
    assert main(["export", str(run), "--to", str(tmp_path / "a")]) == 2
    assert "several projects (kv, kv2)" in capsys.readouterr().err
    assert main(["export", str(run), "--to", str(tmp_path / "b"), "--project", "zlib"]) == 2
    assert "the run has kv, kv2" in capsys.readouterr().err
    # The right project, but no target of it ran: said so, not a traceback.
    assert main(["export", str(run), "--to", str(tmp_path / "c"), "--project", "kv2"]) == 2
    assert "no target of kv2" in capsys.readouterr().err
    (run / "run.json").write_text(json.dumps({"benchmarks": ["gone/kv.yaml"]}))
    assert main(["export", str(run), "--to", str(tmp_path / "d")]) == 2
    assert "--benchmark" in capsys.readouterr().err
