# ruff: noqa: E501
"""A settings struct whose header documents each field's values, in the comments beside them.

``cz`` (written here, built in a temporary directory) is a toy compressor: ``cz_config_init``
sets defaults, ``cz_compress`` reads the settings. Its fields are documented the ways C headers
do (a trailing comment continued on the next lines, a doc comment before the field, a field
with no range). The library has a bug reached only in one documented configuration (the
highest level, the run-length strategy, with verification on): a harness that leaves the
defaults can never find it; one that draws each documented field from its range finds it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzkit.header_facts import HeaderFacts
from fuzzkit.library import LibraryBuild
from tests.toolchain.conftest import assert_finds_crash_in, header_facts, offline_draft, tiny_library

pytestmark = pytest.mark.toolchain

CZ_HEADER = """\
#ifndef CZ_H
#define CZ_H
#include <stddef.h>
typedef struct {
  int level;        // compression level, in [1..9];
                    // higher is slower
  /** strategy: 0=default, 1=filtered, 2=huffman only, 3=rle */
  int strategy;
  int verify;       // if true, decompress the output and compare
  int window;       // window size in bytes
} cz_config;
/* Defaults into cfg; returns 0. */
int cz_config_init(cz_config *cfg);
/* Compresses src[0..n) into dst; returns the bytes written, or -1. */
int cz_compress(const cz_config *cfg, const unsigned char *src, size_t n, unsigned char *dst, size_t cap);
#endif
"""

CZ_SOURCE = """\
#include "cz.h"
int cz_config_init(cz_config *cfg) {
  if (!cfg) return -1;
  cfg->level = 6; cfg->strategy = 0; cfg->verify = 0; cfg->window = 4096;
  return 0;
}
int cz_compress(const cz_config *cfg, const unsigned char *src, size_t n, unsigned char *dst, size_t cap) {
  if (!cfg || !src || !dst || cfg->level < 1 || cfg->level > 9) return -1;
  if (cfg->strategy == 3 && cfg->verify && cfg->level == 9) __builtin_trap();  /* the bug */
  size_t out = 0;
  for (size_t i = 0; i < n && out + 2 <= cap; ) {
    size_t run = 1;
    while (i + run < n && src[i + run] == src[i] && run < 255) run++;
    dst[out++] = (unsigned char)run; dst[out++] = src[i]; i += run;
  }
  return (int)out;
}
"""


@pytest.fixture(scope="module")
def cz_lib(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> LibraryBuild:
    return tiny_library(tmp_path_factory.mktemp("czlib"), "cz", CZ_HEADER, CZ_SOURCE, cache)


@pytest.fixture(scope="module")
def cz_facts(cz_lib: LibraryBuild) -> HeaderFacts:
    return header_facts(cz_lib)


def test_the_types_section_shows_each_documented_range(cz_facts: HeaderFacts) -> None:
    text = cz_facts.render()
    ranges = {r.tag or r.names[0]: r.ranges for r in cz_facts.declarations().records}
    assert {"level": (1, 9), "strategy": (0, 3), "verify": (0, 1)}.items() <= next(
        r for r in ranges.values() if "level" in r).items(), text
    assert "level: [1, 9]" in text, text


def test_a_harness_draws_the_documented_settings_and_finds_the_bug_behind_them(
    cz_lib: LibraryBuild, cz_facts: HeaderFacts, tmp_path: Path
) -> None:
    code = offline_draft(cz_lib, cz_facts, "cz_compress")
    assert "cz_config_init(" in code, code
    assert "lf_take_int(&lf_in, 1, 9)" in code and "lf_take_int(&lf_in, 0, 3)" in code, code
    assert ".window =" not in code, code  # no documented range: the default stays
    assert_finds_crash_in(code, cz_lib, tmp_path, "cz_compress")
