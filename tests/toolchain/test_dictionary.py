# ruff: noqa: E501
"""The dictionary made from a library's own string literals gets libFuzzer past its keywords.

``qx`` (written here) runs a one-line command language whose commands are recognised through a
hash of the word, as keyword tables often are: libFuzzer's comparison tracing sees only
the hash compared, never the word, so from an empty corpus a short run does not spell
``TRANSMOGRIFY``. The word is a string literal of the library (its table of command names), so
the dictionary ``logicfuzz run`` fuzzes with (:meth:`Fuzzkit.fuzz_dictionary`) holds it, and the
same run with it reaches the command's code.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzkit.coverage import measure_coverage
from fuzzkit.harness import build_harness
from fuzzkit.toolchain import Fuzzkit
from tests.toolchain.conftest import tiny_library

pytestmark = pytest.mark.toolchain

QX_HEADER = """\
#ifndef QX_H
#define QX_H
#include <stddef.h>
int qx_run(const char *line, size_t len);
const char *qx_command_name(int id);
#endif
"""

QX_SOURCE = """\
#include "qx.h"
#include <string.h>
static const char *const names[] = {"FROBNICATE", "TRANSMOGRIFY", "DEFENESTRATE"};
const char *qx_command_name(int id) { return id >= 0 && id < 3 ? names[id] : "?"; }
static unsigned mix(const char *p, size_t n) {
  unsigned h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 16777619u;
  h ^= h >> 13;
  return h * 2654435761u;
}
static int deep(const char *arg, size_t n) {
  int score = 0;
  for (size_t i = 0; i < n; i++) score += arg[i] == '!' ? 2 : 1;
  return score;
}
int qx_run(const char *line, size_t len) {
  size_t w = 0;
  while (w < len && line[w] != ' ') w++;
  unsigned h = mix(line, w);
  for (int id = 0; id < 3; id++) {
    if (mix(names[id], strlen(names[id])) == h && id == 1)
      return deep(line + w, len - w);
  }
  return -1;
}
"""

HARNESS = """\
#include <stdint.h>
#include <stddef.h>
#include "qx.h"
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  qx_run((const char *)data, size);
  return 0;
}
"""


def test_the_librarys_literals_get_the_fuzzer_to_a_keyword_an_empty_run_never_spells(cache: Path, tmp_path: Path) -> None:
    lib = tiny_library(tmp_path / "qx-1.0", "qx", QX_HEADER, QX_SOURCE, cache)
    tools = Fuzzkit()
    made = tools.fuzz_dictionary(lib)
    assert made and '"TRANSMOGRIFY"' in Path(made).read_text().splitlines()
    assert tools.fuzz_dictionary(lib) == made  # made once, beside the library's build
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "harness.c").write_text(HARNESS)
    built = build_harness(tmp_path / "h" / "harness.c", lib, tmp_path / "h" / "out")
    assert built.ok, built.log
    hits = {}
    for arm, dict_path in (("plain", ""), ("dict", made)):
        run = tools.run_fuzzer(Path(str(built.fuzz_binary)), tmp_path / arm, seconds=4, rss_limit_mb=2048,
                               harness_name="harness.c", dict_path=dict_path)
        assert run.crash is None, run.crash.excerpt
        log = Path(run.log_path).read_text()
        assert ("Dictionary: " in log) == bool(dict_path), log[:2000]
        cov = measure_coverage(Path(str(built.cov_binary)), [Path(p) for p in run.replay_inputs()], lib,
                               tmp_path / arm / "coverage")
        hits[arm] = cov.function_hits.get("deep", 0)
    assert hits["dict"] > 0 and hits["plain"] == 0, hits
