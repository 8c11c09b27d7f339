"""A library's own fuzz harnesses built the way its build files build them (benchkit/harness_compare.py).

The invented ``tally`` library keeps two harnesses in ``fuzz/`` that share a helper,
``fuzz_common.c``, through a macro of ``fuzz/include/fuzz_common.h``: only the fuzz target of
the build files (automake or CMake) says to compile the helper and to add ``-Ifuzz/include``.
A third, C++ harness uses the C++ wrapper library ``wrap/libtallyxx``, which the fuzz target
links and LogicFuzz's C build of the library does not hold. A fourth harness, which no build
file declares (a script builds it), calls a function of a C++ source beside the library's C
source. All of them link the same library build, and every one builds and runs.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from benchkit import harness_compare as compare
from fuzzkit.library import BuildRecipe, LibraryBuild, build_library
from fuzzkit.source import SourceSpec, fetch_source
from tests.bench_scripts import load_bench_script

pytestmark = pytest.mark.toolchain

ENTRY = "int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)"
FILES = {
    "tally.h": "#include <stddef.h>\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
               "int tally_count(const unsigned char *d, size_t n, int c);\n"
               "#ifdef __cplusplus\n}\n#endif\n",
    "tally.c": '#include "tally.h"\nint tally_count(const unsigned char *d, size_t n, int c) {\n'
               "  int k = 0;\n  for (size_t i = 0; i < n; i++) k += d[i] == c;\n  return k;\n}\n",
    "tally_stream.cc": '#include "tally.h"\n#include <string>\n'
                       "int tally_count_string(const std::string &s) {\n"
                       "  return tally_count((const unsigned char *)s.data(), s.size(), 'a');\n}\n",
    "fuzz/include/fuzz_common.h": "#include <stddef.h>\n#include <stdint.h>\n"
                                  "extern int fuzz_common_seen;\n"
                                  "int fuzz_common_feed(const uint8_t *d, size_t n, int c);\n"
                                  "#define TALLY_FEED(d, n, c) fuzz_common_feed(d, n, c)\n",
    "fuzz/fuzz_common.c": '#include <fuzz_common.h>\n#include "tally.h"\nint fuzz_common_seen;\n'
                          "int fuzz_common_feed(const uint8_t *d, size_t n, int c) {\n"
                          "  fuzz_common_seen += 1;\n  return tally_count(d, n, c);\n}\n",
    "fuzz/tally_count_fuzzer.c": f"#include <fuzz_common.h>\n{ENTRY} {{\n"
                                 "  TALLY_FEED(data, size, 'x');\n  return 0;\n}\n",
    "fuzz/tally_sum_fuzzer.c": f"#include <fuzz_common.h>\n{ENTRY} {{\n"
                               "  TALLY_FEED(data, size, 0);\n  return 0;\n}\n",
    "fuzz/tally_wrap_fuzzer.cc": '#include <stddef.h>\n#include <stdint.h>\n#include "tallyxx.h"\n'
                                 f'extern "C" {ENTRY} {{\n'
                                 "  tally::Counter c('q');\n  c.feed(data, size);\n  return 0;\n}\n",
    "wrap/include/tallyxx.h": "#include <stddef.h>\n#include <stdint.h>\nnamespace tally {\n"
                              "class Counter {\n public:\n  explicit Counter(int c);\n"
                              "  int feed(const uint8_t *d, size_t n);\n private:\n  int c_;\n};\n}\n",
    "wrap/tallyxx.cc": '#include "tallyxx.h"\n#include "tally.h"\n'
                       "namespace tally {\nCounter::Counter(int c) : c_(c) {}\n"
                       "int Counter::feed(const uint8_t *d, size_t n) { return tally_count(d, n, c_); }\n}\n",
    "scripts/tally_string_fuzzer.cc": "#include <string>\nint tally_count_string(const std::string &s);\n"
                                      f'#include <stddef.h>\n#include <stdint.h>\nextern "C" {ENTRY} {{\n'
                                      "  std::string text((const char *)data, size);\n"
                                      "  return tally_count_string(text) * 0;\n}\n",
}
AUTOMAKE = {
    "Makefile.am": "SUBDIRS = wrap fuzz\nlib_LTLIBRARIES = libtally.la\n"
                   "libtally_la_SOURCES = tally.c tally.h\n",
    "wrap/Makefile.am": "AM_CPPFLAGS = -I$(srcdir)/include -I$(top_srcdir)\n"
                        "noinst_LTLIBRARIES = libtallyxx.la\nlibtallyxx_la_SOURCES = tallyxx.cc\n"
                        "libtallyxx_la_LIBADD = $(top_builddir)/libtally.la\n",
    "fuzz/Makefile.am": "AM_CPPFLAGS = -I$(top_srcdir) -I$(srcdir)/include\n"
                        "if ENABLE_FUZZERS\n"
                        "noinst_PROGRAMS = tally_count_fuzzer tally_sum_fuzzer tally_wrap_fuzzer\n"
                        "endif\n"
                        "tally_count_fuzzer_SOURCES = tally_count_fuzzer.c fuzz_common.c\n"
                        "tally_count_fuzzer_LDADD = $(top_builddir)/libtally.la\n"
                        "tally_sum_fuzzer_SOURCES = tally_sum_fuzzer.c \\\n  fuzz_common.c\n"
                        "tally_sum_fuzzer_LDADD = $(top_builddir)/libtally.la\n"
                        "tally_wrap_fuzzer_SOURCES = tally_wrap_fuzzer.cc\n"
                        "tally_wrap_fuzzer_CPPFLAGS = -I$(top_srcdir)/wrap/include\n"
                        "tally_wrap_fuzzer_LDADD = $(top_builddir)/wrap/libtallyxx.la \\\n"
                        "  $(top_builddir)/libtally.la\n",
}
CMAKE = {
    "CMakeLists.txt": "project(tally C CXX)\nadd_library(tally STATIC tally.c)\n"
                      "add_subdirectory(wrap)\nadd_subdirectory(fuzz)\n",
    "wrap/CMakeLists.txt": "add_library(tallyxx STATIC tallyxx.cc)\n"
                           "target_include_directories(tallyxx PUBLIC include ${PROJECT_SOURCE_DIR})\n"
                           "target_link_libraries(tallyxx PUBLIC tally)\n",
    "fuzz/CMakeLists.txt": "set(FUZZERS count sum)\nforeach(name IN LISTS FUZZERS)\n"
                           "  add_executable(tally_${name}_fuzzer tally_${name}_fuzzer.c fuzz_common.c)\n"
                           "  target_include_directories(tally_${name}_fuzzer PRIVATE include ..)\n"
                           "  target_link_libraries(tally_${name}_fuzzer PRIVATE tally)\nendforeach()\n"
                           "add_executable(tally_wrap_fuzzer tally_wrap_fuzzer.cc)\n"
                           "target_link_libraries(tally_wrap_fuzzer tallyxx $<$<BOOL:ON>:tally>)\n"
                           "target_include_directories(tally_wrap_fuzzer PRIVATE ../wrap/include)\n",
}
HARNESSES = ["fuzz/tally_count_fuzzer.c", "fuzz/tally_sum_fuzzer.c", "fuzz/tally_wrap_fuzzer.cc",
             "scripts/tally_string_fuzzer.cc"]


def _tally(root: Path, build_files: dict[str, str], cache: Path) -> LibraryBuild:
    for rel, text in {**FILES, **build_files}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return build_library(fetch_source(SourceSpec(path=str(root))),
                         BuildRecipe(sources=["tally.c"], headers=["tally.h"]), cache=cache)


@pytest.mark.parametrize("build_files", [AUTOMAKE, CMAKE], ids=["automake", "cmake"])
def test_each_harness_builds_as_its_fuzz_target_and_runs(build_files: dict[str, str], tmp_path: Path,
                                                         cache: Path) -> None:
    lib = _tally(tmp_path / "tally", build_files, cache)

    side = compare.build_side("upstream", [tmp_path / "tally" / h for h in HARNESSES], lib, tmp_path / "up")
    assert side.failures == {}
    assert side.names == [Path(h).name for h in HARNESSES]
    for build in side.builds:
        ran = subprocess.run([build.fuzz_binary, "-runs=100"], capture_output=True, text=True, timeout=120)
        assert ran.returncode == 0, ran.stderr[-2000:]
        assert "Done 100 runs" in ran.stderr


def test_one_harness_of_several_targets_is_built_once_per_target(tmp_path: Path, cache: Path) -> None:
    variant = ("#include <stddef.h>\n#include <stdint.h>\n#include \"tally.h\"\n"
               "#ifndef TALLY_CHAR\n#error \"TALLY_CHAR was not provided to this fuzz target\"\n#endif\n"
               f"{ENTRY} {{ return tally_count(data, size, TALLY_CHAR) * 0; }}\n")
    lists = ("project(tally C)\nadd_library(tally STATIC tally.c)\nforeach(c 97 98)\n"
             "  add_executable(tally_char_${c} fuzz/tally_char_fuzzer.c)\n"
             "  target_compile_definitions(tally_char_${c} PRIVATE TALLY_CHAR=${c})\nendforeach()\n")
    lib = _tally(tmp_path / "tally", {"CMakeLists.txt": lists, "fuzz/tally_char_fuzzer.c": variant}, cache)

    side = compare.build_side("upstream", [tmp_path / "tally" / "fuzz" / "tally_char_fuzzer.c"], lib,
                              tmp_path / "up")
    assert side.names == ["tally_char_fuzzer.c[tally_char_97]", "tally_char_fuzzer.c[tally_char_98]"]


def test_yardstick_counts_what_builds_and_runs(tmp_path: Path, cache: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "tally"
    _tally(root, AUTOMAKE, cache)
    (root / "fuzz" / "tally_broken_fuzzer.c").write_text(f"#include <stdint.h>\n{ENTRY} {{ return nope; }}\n")
    bench = {"project": "tally", "language": "c", "source": {"path": str(root)},
             "build": {"sources": ["tally.c"], "headers": ["tally.h"]},
             "upstream_harnesses": [*HARNESSES, "fuzz/tally_broken_fuzzer.c"]}
    (tmp_path / "tally.yaml").write_text(yaml.safe_dump(bench))
    module = load_bench_script("yardstick")
    assert module.main([str(tmp_path / "tally.yaml"), "--runs", "50", "--out", str(tmp_path / "out")]) == 1
    (row,) = json.loads((tmp_path / "out" / "yardstick.json").read_text())["rows"]
    assert (len(row["listed"]), len(row["built"]), len(row["running"])) == (5, 4, 4)
    assert list(row["failures"]) == ["tally_broken_fuzzer.c"]
    assert "nope" in row["failures"]["tally_broken_fuzzer.c"]
    assert "| tally | 5 | 4 | 4 |" in capsys.readouterr().out
