"""Shared fixtures for the toolchain tests: a per-session cache, cJSON and a buggy library."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from agents.offline.analysis import analyze_function
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from fuzzkit.crash import CrashReport
from fuzzkit.harness import HarnessBuild, build_harness
from fuzzkit.header_facts import HeaderFacts
from fuzzkit.headers import parse_header
from fuzzkit.library import BuildRecipe, LibraryBuild, build_library
from fuzzkit.runner import FuzzRun, run_fuzzer
from fuzzkit.source import SourceSpec, fetch_source
from fuzzkit.toolchain import Fuzzkit

CJSON_RECIPE = BuildRecipe(sources=["cJSON.c"], headers=["cJSON.h"])

NAIVE_CJSON_HARNESS = """\
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cJSON.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\\0';
  cJSON_Delete(cJSON_Parse(text));
  free(text);
  return 0;
}
"""

# A small library with bugs on purpose; each is reached by one specific first byte so
# libFuzzer finds it within a second or two.
BUGGY_HEADER = """\
#include <stddef.h>
int bug_sum(const unsigned char *data, size_t size);
char *bug_keep(const unsigned char *data, size_t size);
int bug_use_after_free(int value);
int lib_ok(const unsigned char *data, size_t size);
void lib_before_abort(void);
"""
BUGGY_SOURCE = """\
#include "buggy.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int sum_bytes(const char *copy, size_t size) {
  int total = 0;
  for (size_t i = 0; i <= size; i++) total += copy[i]; /* reads one past the end */
  return total;
}

int bug_sum(const unsigned char *data, size_t size) {
  char *copy = malloc(size);
  memcpy(copy, data, size);
  int total = sum_bytes(copy, size);
  free(copy);
  return total;
}

char *bug_keep(const unsigned char *data, size_t size) {
  char *copy = malloc(size + 1);
  memcpy(copy, data, size);
  copy[size] = 0;
  return copy;
}

int bug_use_after_free(int value) {
  int *cell = malloc(sizeof(int));
  *cell = value;
  free(cell);
  return *(volatile int *)cell;
}

int lib_ok(const unsigned char *data, size_t size) {
  int acc = 0;
  for (size_t i = 0; i < size; i++) acc = acc * 31 + data[i];
  return acc;
}

void lib_before_abort(void) { fprintf(stderr, "about to abort\\n"); }
"""


def harness_for(body: str, includes: str = "") -> str:
    """A harness calling the buggy library; ``body`` runs when size >= 1."""
    return textwrap.dedent(
        """\
        #include <stdint.h>
        #include <stdlib.h>
        #include "buggy.h"
        %s
        void *volatile keep_alive;

        int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
          if (size < 1) return 0;
        %s
          return 0;
        }
        """
    ) % (includes, textwrap.indent(textwrap.dedent(body), "  "))


@pytest.fixture(scope="session")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzzkit-cache")


@pytest.fixture(scope="session")
def cjson_recipe() -> BuildRecipe:
    return CJSON_RECIPE


@pytest.fixture(scope="session")
def cjson_root(cache: Path) -> Path:
    return fetch_source(SourceSpec(apt="cjson"), cache=cache)


@pytest.fixture(scope="session")
def cjson_lib(cjson_root: Path, cache: Path) -> LibraryBuild:
    return build_library(cjson_root, CJSON_RECIPE, cache=cache)


@pytest.fixture(scope="session")
def naive_cjson(cjson_lib: LibraryBuild, tmp_path_factory: pytest.TempPathFactory) -> HarnessBuild:
    work = tmp_path_factory.mktemp("naive")
    source = work / "naive.c"
    source.write_text(NAIVE_CJSON_HARNESS)
    build = build_harness(source, cjson_lib, work / "out")
    assert build.ok, build.log
    return build


@pytest.fixture(scope="session")
def buggy_lib(cache: Path, tmp_path_factory: pytest.TempPathFactory) -> LibraryBuild:
    return tiny_library(tmp_path_factory.mktemp("buggy"), "buggy", BUGGY_HEADER, BUGGY_SOURCE, cache)


@pytest.fixture()
def make_harness(buggy_lib: LibraryBuild, tmp_path: Path) -> Callable[..., HarnessBuild]:
    def make(name: str, body: str, includes: str = "") -> HarnessBuild:
        source = tmp_path / f"{name}.c"
        source.write_text(harness_for(body, includes))
        build = build_harness(source, buggy_lib, tmp_path / f"{name}-out")
        assert build.ok, build.log
        return build

    return make


def tiny_library(root: Path, stem: str, header: str, source: str, cache: Path) -> LibraryBuild:
    """A one-file library (``stem.h``, ``stem.c``) written under ``root`` and built."""
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{stem}.h").write_text(header)
    (root / f"{stem}.c").write_text(source)
    return build_library(fetch_source(SourceSpec(path=str(root))),
                         BuildRecipe(sources=[f"{stem}.c"], headers=[f"{stem}.h"]), cache=cache)


def crash_of(code: str, lib: LibraryBuild, work: Path) -> CrashReport | None:
    """``code`` built against ``lib`` (it must build), fuzzed 3000 runs with seed 1: its crash, if any."""
    work.mkdir(parents=True)
    (work / "harness.c").write_text(code)
    built = build_harness(work / "harness.c", lib, work / "out")
    assert built.ok, built.log
    return run_fuzzer(Path(str(built.fuzz_binary)), work / "run", seconds=20, seed=1, runs=3000).crash


def header_facts(lib: LibraryBuild) -> HeaderFacts:
    """What the prepare step reads from a one-header library's header (its Types section)."""
    return Fuzzkit().collect_facts(lib, Fuzzkit().parse_api(lib))


def offline_draft(lib: LibraryBuild, facts: HeaderFacts, name: str) -> str:
    """The offline engine's first draft for ``name`` of a one-header library, from its Types section."""
    api = parse_header(Path(lib.headers[0]), lib.include_dirs, lib.defines)
    target = next(f for f in api if f.name == name)
    with using(read_types(facts.render())):
        analysis = analyze_function(target, api)
        return write_harness(target, api, [Path(lib.headers[0]).name], analysis.archetype,
                             default_skeleton(analysis.archetype), rules=analysis.rules).code


def _fuzz(code: str, lib: LibraryBuild, work: Path, seconds: int) -> FuzzRun:
    """``code`` built against ``lib`` (it must build) and fuzzed for ``seconds``."""
    work.mkdir(parents=True, exist_ok=True)
    source = work / "harness.c"
    source.write_text(code)
    built = build_harness(source, lib, work / "out")
    assert built.ok, built.log
    return run_fuzzer(Path(str(built.fuzz_binary)), work / "run", seconds=seconds)


def assert_runs_clean(code: str, lib: LibraryBuild, work: Path, seconds: int = 3) -> None:
    """``code`` builds against ``lib`` and fuzzes for ``seconds`` without a crash, doing work."""
    run = _fuzz(code, lib, work, seconds)
    assert run.crash is None, run.crash.excerpt
    assert run.stats.execs > 100, Path(run.log_path).read_text()[-2000:]


def assert_finds_crash_in(code: str, lib: LibraryBuild, work: Path, function: str, seconds: int = 20) -> None:
    """``code`` builds against ``lib`` and, fuzzed, finds a crash in ``function`` within ``seconds``."""
    run = _fuzz(code, lib, work, seconds)
    assert run.crash is not None, Path(run.log_path).read_text()[-2000:]
    assert function in run.crash.excerpt, run.crash.excerpt

