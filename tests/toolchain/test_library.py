from __future__ import annotations

import json
import multiprocessing
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from fuzzkit.detect import prepare_library
from fuzzkit.errors import ToolchainError
from fuzzkit.library import BuildRecipe, LibraryBuild, build_library, plan_build

pytestmark = pytest.mark.toolchain


def _symbols(archive: str) -> str:
    return subprocess.run(["nm", archive], capture_output=True, text=True, check=True).stdout


def test_build_produces_both_flavours(cjson_lib: LibraryBuild, cjson_root: Path) -> None:
    assert cjson_lib.coverage_files == [str(cjson_root / "cJSON.c")]
    assert cjson_lib.headers == [str(cjson_root / "cJSON.h")]
    assert cjson_lib.include_dirs == [str(cjson_root)]
    fuzz, cov = _symbols(cjson_lib.fuzz_archive), _symbols(cjson_lib.cov_archive)
    assert " T cJSON_Parse" in fuzz and " T cJSON_Parse" in cov
    assert "__asan_report_load" in fuzz and "__asan" not in cov
    assert "__profc_cJSON_Parse" in cov and "__profc" not in fuzz
    assert "clang" in Path(cjson_lib.log_path).read_text()


def test_build_is_cached(
    cjson_lib: LibraryBuild, cjson_root: Path, cache: Path, cjson_recipe: BuildRecipe
) -> None:
    start = time.monotonic()
    again = build_library(cjson_root, cjson_recipe, cache=cache)
    assert time.monotonic() - start < 0.5
    assert again.key == cjson_lib.key
    assert again.build_id == cjson_lib.build_id  # the same build, not a rebuild
    assert LibraryBuild.from_dict(json.loads(json.dumps(again.to_dict()))) == again


def test_key_follows_flags_and_file_contents(
    cjson_root: Path, cjson_recipe: BuildRecipe, tmp_path: Path
) -> None:
    base = plan_build(cjson_root, cjson_recipe)
    assert plan_build(cjson_root, cjson_recipe).key == base.key
    assert plan_build(cjson_root, cjson_recipe.model_copy(update={"defines": ["X=1"]})).key != base.key
    copy = tmp_path / "copy"
    shutil.copytree(cjson_root, copy)
    first = plan_build(copy, cjson_recipe).key
    (copy / "cJSON.h").write_text((copy / "cJSON.h").read_text() + "\n/* edited */\n")
    assert plan_build(copy, cjson_recipe).key != first


def _build_in_child(root: str, cache: str, barrier: Any, results: Any) -> None:
    barrier.wait()
    recipe = BuildRecipe(sources=["cJSON.c"], headers=["cJSON.h"], defines=["FUZZKIT_RACE=1"])
    results.put(build_library(Path(root), recipe, cache=Path(cache), jobs=1).build_id)


def test_concurrent_builds_share_one_build(cjson_root: Path, tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    procs = [
        ctx.Process(target=_build_in_child, args=(str(cjson_root), str(tmp_path), barrier, results))
        for _ in range(2)
    ]
    for proc in procs:
        proc.start()
    ids = [results.get(timeout=120) for _ in procs]
    for proc in procs:
        proc.join(timeout=30)
        assert proc.exitcode == 0
    assert ids[0] == ids[1]
    builds = [p for p in (tmp_path / "builds").iterdir() if p.is_dir()]
    assert len(builds) == 1, builds  # no second copy, no leftover temporary directory


def test_compile_error_names_file_and_error(tmp_path: Path) -> None:
    (tmp_path / "good.c").write_text("int good(void) { return 1; }\n")
    (tmp_path / "bad.c").write_text("int bad(void) {\n  return missing_thing;\n}\n")
    with pytest.raises(ToolchainError) as info:
        build_library(tmp_path, BuildRecipe(sources=["*.c"]), cache=tmp_path / "cache")
    message = str(info.value)
    assert "bad.c" in message and ":2:10: error: use of undeclared identifier 'missing_thing'" in message
    assert "build:" in info.value.hint
    assert not any(p.is_dir() for p in (tmp_path / "cache" / "builds").iterdir())


def test_glob_matching_nothing_is_an_error(cjson_root: Path, tmp_path: Path) -> None:
    with pytest.raises(ToolchainError, match="matches no file"):
        build_library(cjson_root, BuildRecipe(sources=["src/*.c"]), cache=tmp_path)
    with pytest.raises(ToolchainError, match="header"):
        build_library(cjson_root, BuildRecipe(sources=["cJSON.c"], headers=["nope.h"]), cache=tmp_path)


def test_exclude_and_coverage_sources(cjson_root: Path) -> None:
    recipe = BuildRecipe(sources=["cJSON*.c"], exclude=["*Utils*"], coverage_sources=["cJSON.c"])
    plan = plan_build(cjson_root, recipe)
    assert [Path(s).name for s in plan.sources] == ["cJSON.c"]
    assert [Path(s).name for s in plan.coverage_files] == ["cJSON.c"]
    both = plan_build(cjson_root, BuildRecipe(sources=["cJSON*.c"]))
    assert [Path(s).name for s in both.sources] == ["cJSON.c", "cJSON_Utils.c"]


def _prepare_in_child(cache: str, barrier: Any, results: Any) -> None:
    barrier.wait()
    lib = prepare_library({"apt": "cjson"}, None, cache=Path(cache), jobs=1)
    results.put((lib.build_id, lib.fuzz_archive))


def test_concurrent_fetch_detect_and_build_from_two_processes(tmp_path: Path) -> None:
    """Two runs sharing an empty cache: one fetch, one detection, one build, both succeed."""
    ctx = multiprocessing.get_context("fork")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_prepare_in_child, args=(str(tmp_path), barrier, results)) for _ in range(2)]
    for proc in procs:
        proc.start()
    got = [results.get(timeout=300) for _ in procs]
    for proc in procs:
        proc.join(timeout=30)
        assert proc.exitcode == 0
    assert got[0] == got[1] and Path(got[0][1]).is_file()
    for kind in ("sources/apt", "detect", "builds"):
        entries = [p.name for p in (tmp_path / kind).iterdir() if p.is_dir()]
        assert len(entries) == 1, (kind, entries)  # no second copy, no leftover temporary directory


def test_api_is_what_the_header_declares_and_the_build_defines(tmp_path: Path) -> None:
    """A header declaring every width of a function, of which the build compiled one, offers one.

    A declared but unbuilt function can never link; offered to a prototyper or improver, it
    costs a fix round (seen as link errors on calls of another code-unit width's variant).
    """
    from fuzzkit.toolchain import Fuzzkit

    (tmp_path / "wid.h").write_text(
        "int wid_count_8(const unsigned char *s, int n);\n"
        "int wid_count_16(const unsigned short *s, int n);\n"
        "static inline int wid_twice(int x) { return 2 * x; }\n")
    (tmp_path / "wid8.c").write_text(
        '#include "wid.h"\nint wid_count_8(const unsigned char *s, int n) { return n > 0 && s[0]; }\n')
    lib = build_library(tmp_path, BuildRecipe(sources=["wid8.c"], headers=["wid.h"]),
                        cache=tmp_path / "cache")
    # the header's inline helper is callable, though no build defines it (fuzzkit.headers.inline_functions)
    assert [d.name for d in Fuzzkit().parse_api(lib)] == ["wid_count_8", "wid_twice"]
