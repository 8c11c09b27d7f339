# ruff: noqa: E501
"""An option word whose flags reach past its low byte: the high ones are drawn too.

``rx`` (written here) compiles a pattern with ``uint32_t`` options, unnamed in the prototype
as many headers leave them, and defines its flags as macros up to bit 20. A harness drew the
options from 0..255 (no constant group is named after the parameter), so ``RX_UTF`` (bit 19)
was never set and the code behind it never ran. The library traps in that code on one pattern;
a harness that ORs one of the header's high flags into the low byte reaches it. A flag that
tells the library to skip validating its input is never drawn (fuzz data is not valid), and
one in the low byte named for the function's own group is cleared.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fuzzkit.header_facts import HeaderFacts
from fuzzkit.library import LibraryBuild
from tests.toolchain.conftest import assert_finds_crash_in, header_facts, offline_draft, tiny_library

pytestmark = pytest.mark.toolchain

RX_HEADER = """\
#ifndef RX_H
#define RX_H
#include <stddef.h>
#include <stdint.h>
#define RX_CASELESS 0x00000001u
#define RX_MULTILINE 0x00000002u
#define RX_DOTALL 0x00000004u
#define RX_EXTENDED 0x00000008u
#define RX_UNGREEDY 0x00040000u
#define RX_UTF 0x00080000u
#define RX_LITERAL 0x00100000u
#define RX_NO_UTF_CHECK 0x00200000u
#define RX_CONVERT_UTF 0x00000001u
#define RX_CONVERT_NO_UTF_CHECK 0x00000002u
#define RX_CONVERT_GLOB 0x00000010u
typedef struct rx_code rx_code;
rx_code *rx_compile(const char *, size_t, uint32_t, int *);
int rx_pattern_convert(const char *, size_t, uint32_t, char **, size_t *);
void rx_code_free(rx_code *);
#endif
"""

RX_SOURCE = """\
#include "rx.h"
#include <stdlib.h>
#include <string.h>
struct rx_code { uint32_t options; size_t len; };
static void rx_check_utf(const char *p, size_t n) {
  if (n >= 3 && memcmp(p, "U8!", 3) == 0) __builtin_trap();  /* reached only in UTF mode */
}
rx_code *rx_compile(const char *p, size_t n, uint32_t options, int *err) {
  if (options & ~0x001C000Fu) { if (err) *err = 1; return NULL; }
  if (options & RX_UTF) rx_check_utf(p, n);
  rx_code *c = calloc(1, sizeof *c);
  if (c) { c->options = options; c->len = n; }
  return c;
}
void rx_code_free(rx_code *c) { free(c); }
int rx_pattern_convert(const char *p, size_t n, uint32_t options, char **out, size_t *outlen) {
  (void)p; (void)n; (void)options; *out = NULL; *outlen = 0;
  return 0;
}
"""


@pytest.fixture(scope="module")
def rx_lib(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> LibraryBuild:
    return tiny_library(tmp_path_factory.mktemp("rxlib"), "rx", RX_HEADER, RX_SOURCE, cache)


def test_a_high_flag_of_an_unnamed_option_word_is_drawn(rx_lib: LibraryBuild, tmp_path: Path) -> None:
    facts: HeaderFacts = header_facts(rx_lib)
    code = offline_draft(rx_lib, facts, "rx_compile")
    assert "524288" in code, code  # RX_UTF among the values OR-ed into the options
    assert "2097152" not in code, code  # not the flag that skips checking the input
    assert_finds_crash_in(code, rx_lib, tmp_path, "rx_check_utf")


def test_a_low_flag_that_skips_the_functions_own_check_is_cleared(rx_lib: LibraryBuild) -> None:
    facts: HeaderFacts = header_facts(rx_lib)
    code = offline_draft(rx_lib, facts, "rx_pattern_convert")
    assert re.search(r"(\w+) &= \(uint32_t\)~2u;", code), code  # RX_CONVERT_NO_UTF_CHECK
    compile_code = offline_draft(rx_lib, facts, "rx_compile")
    assert "~2u" not in compile_code, compile_code  # bit 1 of compile's options is another flag
