"""An upstream harness that builds only with its build system's per-variant definitions."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzkit.harness_variants import harness_variants

pytestmark = pytest.mark.toolchain

CMAKE = """\
cmake_minimum_required(VERSION 3.14)
project(kvq C)
option(KVQ_BUILD_FUZZERS "build the fuzzers" OFF)
add_library(kvq STATIC kvq.c)
if(KVQ_BUILD_FUZZERS)
  foreach(variant ONE TWO)
    add_executable(kvq_fuzz_${variant} fuzz/kvq_fuzz.c)
    target_compile_definitions(kvq_fuzz_${variant} PRIVATE KVQ_VARIANT=${variant})
    target_link_libraries(kvq_fuzz_${variant} kvq)
  endforeach()
endif()
"""

HARNESS = """\
#include <stddef.h>
#include <stdint.h>
#ifndef KVQ_VARIANT
#error "KVQ_VARIANT was not provided to this fuzz target"
#endif
int kvq_parse(const uint8_t *d, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return kvq_parse(d, n) * 0; }
"""


def test_each_target_of_the_build_system_is_a_variant_with_its_definitions(tmp_path: Path) -> None:
    root = tmp_path / "src" / "kvq"
    (root / "fuzz").mkdir(parents=True)
    (root / "CMakeLists.txt").write_text(CMAKE)
    (root / "kvq.c").write_text("#include <stddef.h>\n#include <stdint.h>\n"
                                "int kvq_parse(const uint8_t *d, size_t n) { return d && n; }\n")
    (root / "fuzz" / "kvq_fuzz.c").write_text(HARNESS)
    variants = harness_variants(root / "fuzz" / "kvq_fuzz.c", tmp_path / "scratch")
    assert sorted(variants) == [("kvq_fuzz_ONE", ["-DKVQ_VARIANT=ONE"]),
                                ("kvq_fuzz_TWO", ["-DKVQ_VARIANT=TWO"])]
    # The library's tree is left as it was: the project was configured in a copy.
    assert sorted(p.name for p in root.iterdir()) == ["CMakeLists.txt", "fuzz", "kvq.c"]


def test_no_build_system_no_variants(tmp_path: Path) -> None:
    (tmp_path / "fuzz").mkdir()
    (tmp_path / "fuzz" / "kvq_fuzz.c").write_text(HARNESS)
    assert harness_variants(tmp_path / "fuzz" / "kvq_fuzz.c", tmp_path / "scratch") == []
