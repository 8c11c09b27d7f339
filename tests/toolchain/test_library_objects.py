# ruff: noqa: E501
"""A regex-like API seen on an unseen library: pointer ranges, library-defined tables, an
anonymous settings struct and an opaque compiled object.

``rq`` (written here, built in a temporary directory) has what that library had:
- a subject given as ``str, end`` plus positions ``start, range`` inside it (three separate
  strings make the library walk from one heap block into another);
- an encoding that is a struct of function pointers nothing constructs: the header declares
  the library's own (``extern const rq_encoding rq_latin1``), and a zeroed one makes the
  library call address 0; one is declared but never built into the library;
- a settings struct declared ``typedef struct { ... } rq_compile_info;`` (anonymous: its fields
  were never in the Types section) with an encoding field;
- an opaque compiled object made through ``rq_re **`` whose only other "initializer" is a
  getter with "start" in its name.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.offline.type_table import read_types
from fuzzkit.header_facts import HeaderFacts
from fuzzkit.library import LibraryBuild
from tests.toolchain.conftest import assert_runs_clean, header_facts, offline_draft, tiny_library

pytestmark = pytest.mark.toolchain

RQ_HEADER = """\
#ifndef RQ_H
#define RQ_H
typedef unsigned char rq_uchar;
typedef struct {
  int (*unit_len)(const rq_uchar *p);
  const char *name;
} rq_encoding;
extern const rq_encoding rq_latin1;
extern const rq_encoding rq_utf8;
extern const rq_encoding rq_never_built;
typedef struct {
  const rq_encoding *enc;
  int flags;
} rq_compile_info;
typedef struct rq_re rq_re;
int rq_new(rq_re **re, const rq_uchar *pattern, const rq_uchar *pattern_end, rq_compile_info *ci);
const rq_uchar *rq_get_tag_start(rq_re *re, int n);
int rq_search(rq_re *re, const rq_uchar *str, const rq_uchar *end, const rq_uchar *start, const rq_uchar *range);
void rq_free(rq_re *re);
#endif
"""

RQ_SOURCE = """\
#include "rq.h"
#include <stdlib.h>
#include <string.h>
static int one(const rq_uchar *p) { (void)p; return 1; }
static int utf8_len(const rq_uchar *p) { return *p < 0x80 ? 1 : *p < 0xe0 ? 2 : *p < 0xf0 ? 3 : 4; }
const rq_encoding rq_latin1 = {one, "latin1"};
const rq_encoding rq_utf8 = {utf8_len, "utf8"};
struct rq_re { const rq_encoding *enc; rq_uchar *pat; size_t len; };
int rq_new(rq_re **re, const rq_uchar *pattern, const rq_uchar *pattern_end, rq_compile_info *ci) {
  if (!re || !pattern || pattern_end < pattern || !ci) return -1;
  rq_re *r = calloc(1, sizeof *r);
  if (!r) return -2;
  r->enc = ci->enc;
  r->len = (size_t)(pattern_end - pattern);
  r->pat = malloc(r->len + 1);
  memcpy(r->pat, pattern, r->len);
  for (size_t i = 0; i < r->len; i += (size_t)r->enc->unit_len(pattern + i)) {}
  *re = r;
  return 0;
}
const rq_uchar *rq_get_tag_start(rq_re *re, int n) { return n >= 0 && (size_t)n < re->len ? re->pat + n : NULL; }
int rq_search(rq_re *re, const rq_uchar *str, const rq_uchar *end, const rq_uchar *start, const rq_uchar *range) {
  int found = -1;
  for (const rq_uchar *p = start; p < range; p += re->enc->unit_len(p)) {
    if (p < str || p >= end) return -2;
    if (re->len && (size_t)(end - p) >= re->len && memcmp(p, re->pat, re->len) == 0) { found = (int)(p - str); break; }
  }
  return found;
}
void rq_free(rq_re *re) { if (re) { free(re->pat); free(re); } }
"""


@pytest.fixture(scope="module")
def rq_lib(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> LibraryBuild:
    return tiny_library(tmp_path_factory.mktemp("rqlib"), "rq", RQ_HEADER, RQ_SOURCE, cache)


@pytest.fixture(scope="module")
def rq_facts(rq_lib: LibraryBuild) -> HeaderFacts:
    return header_facts(rq_lib)


def test_the_types_section_shows_anonymous_records_and_the_library_s_objects(rq_facts: HeaderFacts) -> None:
    text = rq_facts.render()
    assert "names: [rq_compile_info]\n  fields: {enc: const rq_encoding *, flags: int}" in text, text
    assert "- {name: rq_latin1, type: const rq_encoding}" in text
    assert "- {name: rq_utf8, type: const rq_encoding}" in text
    assert "rq_never_built" not in text  # declared, but the built library does not define it
    table = read_types(text)
    assert [f[0] for f in table.record("rq_compile_info").fields] == ["enc", "flags"]
    assert ("rq_utf8", "const rq_encoding") in table.instances


def test_a_search_over_a_pointer_range_with_a_library_encoding_runs(
    rq_lib: LibraryBuild, rq_facts: HeaderFacts, tmp_path: Path
) -> None:
    code = offline_draft(rq_lib, rq_facts, "rq_search")
    assert "data + size" in code, code  # the end of the subject, not a second string
    assert "&rq_latin1" in code and "&rq_utf8" in code, code  # the library's own encodings
    assert "rq_get_tag_start" not in code, code  # a getter is no initializer
    assert "rq_re *" in code, code  # opaque: held through a pointer
    assert_runs_clean(code, rq_lib, tmp_path)


def test_twenty_encoding_tables_are_all_offered(tmp_path: Path, cache: Path) -> None:
    """A library defining a table per encoding: the Types section listed only its first eight
    (all single-byte ones in header order), so no harness ever reached a multibyte encoding."""
    names = [f"rq_enc{i}" for i in range(20)]
    header = RQ_HEADER.replace("extern const rq_encoding rq_never_built;\n",
                               "".join(f"extern const rq_encoding {n};\n" for n in names))
    source = RQ_SOURCE + "".join(f'const rq_encoding {n} = {{utf8_len, "{n}"}};\n' for n in names)
    facts = header_facts(tiny_library(tmp_path, "rq", header, source, cache))
    text = facts.render()
    assert all(f"- {{name: {n}, type: const rq_encoding}}" in text for n in names), text
