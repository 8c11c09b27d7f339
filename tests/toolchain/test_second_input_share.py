"""A chain function's own sized input gets a share of the fuzz input, not a short string.

``rx`` (written here) compiles a pattern and matches it against a subject: the harness of
``rx_match`` builds the compiled pattern from part of the input and matches the rest. A pattern
of at most 16 bytes (what a short option string gives) never reaches the library's long-pattern
path, which traps; a share of the input up to all of it does. The start offset into the subject
stays inside it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from fuzzkit.library import LibraryBuild
from tests.toolchain.conftest import assert_finds_crash_in, header_facts, offline_draft, tiny_library

pytestmark = pytest.mark.toolchain

RX_HEADER = """\
#ifndef RX_H
#define RX_H
#include <stddef.h>
typedef struct rx rx;
rx *rx_compile(const char *pattern, size_t pattern_len, unsigned flags);
int rx_match(const rx *re, const char *subject, size_t length, size_t start);
void rx_free(rx *re);
#endif
"""

RX_SOURCE = """\
#include "rx.h"
#include <stdlib.h>
#include <string.h>
struct rx { size_t len; char first; };
static void rx_long_group(void) { __builtin_trap(); }
rx *rx_compile(const char *pattern, size_t pattern_len, unsigned flags) {
  (void)flags;
  if (pattern_len == 0) return NULL;
  rx *re = malloc(sizeof *re);
  if (re == NULL) return NULL;
  re->len = pattern_len;
  re->first = pattern[0];
  return re;
}
int rx_match(const rx *re, const char *subject, size_t length, size_t start) {
  if (start > length) return -2;
  if (re->len >= 40 && re->first == '(') rx_long_group();
  return memchr(subject + start, re->first, length - start) != NULL;
}
void rx_free(rx *re) { free(re); }
"""


@pytest.fixture(scope="module")
def rx_lib(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> LibraryBuild:
    return tiny_library(tmp_path_factory.mktemp("rxlib"), "rx", RX_HEADER, RX_SOURCE, cache)


def test_the_pattern_takes_a_share_of_the_input(rx_lib: LibraryBuild, tmp_path: Path) -> None:
    code = offline_draft(rx_lib, header_facts(rx_lib), "rx_match")
    assert re.search(r"= lf_take_part\(&lf_in\);", code), code
    assert_finds_crash_in(code, rx_lib, tmp_path, "rx_long_group")


def test_the_start_offset_stays_inside_the_subject(rx_lib: LibraryBuild) -> None:
    code = offline_draft(rx_lib, header_facts(rx_lib), "rx_match")
    call = re.search(r"rx_match\(\w+, \(const char \*\)\w+, \(size_t\)size, (\w+)\)", code)
    assert call, code
    assert f"{call.group(1)} %= (size_t)(size + 1);" in code, code


def test_an_unnamed_offset_after_the_length_stays_inside_the_subject() -> None:
    """Headers that name no parameters (``int rx_match(const rx *, const unsigned char *, size_t,
    size_t, unsigned)``): the size_t right after the subject's length is where to start in it."""
    api = parse_prototypes("typedef struct rx rx;\nrx *rx_compile(const unsigned char *, size_t, unsigned);\n"
                           "int rx_match(const rx *, const unsigned char *, size_t, size_t, unsigned);\n"
                           "void rx_free(rx *);")
    target = next(d for d in api if d.name == "rx_match")
    arche = analyze_function(target, api).archetype
    code = write_harness(target, api, ["rx.h"], arche, default_skeleton(arche)).code
    call = re.search(r"rx_match\(\w+, \(const unsigned char \*\)data, \(size_t\)size, (\w+), (\w+)\)", code)
    assert call, code
    assert f"{call.group(1)} %= (size_t)(size + 1);" in code, code
    assert f"{call.group(2)} %=" not in code, code  # the option word after it is no offset
