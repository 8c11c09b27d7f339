"""An option word carries only the flags the header's comments give its function.

``qre`` (written here) documents two groups of option bits: one "for qre_compile()", one for
the matchers, with a bit marked for one matcher only. Its matcher rejects any other bit, as real
libraries do at their option check (a trap here, so a harness that passes one shows at once).
Drawn from every flag in the header, the matcher's option word carries a compile bit on most
inputs and the call ends there; scoped, it never does.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fuzzkit.library import LibraryBuild
from tests.toolchain.conftest import assert_runs_clean, header_facts, offline_draft, tiny_library

pytestmark = pytest.mark.toolchain

QRE_HEADER = """\
#ifndef QRE_H
#define QRE_H
#include <stddef.h>
#include <stdint.h>
typedef struct qre qre;

/* Options for qre_compile(). They change what is compiled, and some of them what
qre_exec() then does with it. */

#define QRE_CASELESS   0x00000001u
#define QRE_MULTILINE  0x00000002u
#define QRE_DOTALL     0x00000004u
#define QRE_EXTENDED   0x00000008u
#define QRE_UNGREEDY   0x00000010u
#define QRE_ANYCRLF    0x00000020u
#define QRE_UTF        0x00080000u

/* These are for qre_exec() and qre_exec_all(). */

#define QRE_NOTBOL     0x00000001u
#define QRE_NOTEOL     0x00000002u
#define QRE_NOTEMPTY   0x00000004u
#define QRE_PARTIAL    0x00000010u
#define QRE_GLOBAL     0x00000100u  /* qre_exec_all() only */

qre *qre_compile(const char *pattern, size_t length, uint32_t options, int *error);
int qre_exec(const qre *re, const char *subject, size_t length, uint32_t options);
int qre_exec_all(const qre *re, const char *subject, size_t length, uint32_t options);
void qre_free(qre *re);
#endif
"""

QRE_SOURCE = """\
#include "qre.h"
#include <stdlib.h>
#include <string.h>
struct qre { uint32_t options; char first; };
static void qre_bad_option(void) { __builtin_trap(); }  /* a library returns an error here */
qre *qre_compile(const char *pattern, size_t length, uint32_t options, int *error) {
  if (options & ~(0x3fu | QRE_UTF)) qre_bad_option();
  qre *re = malloc(sizeof *re);
  if (re == NULL) { *error = 1; return NULL; }
  re->options = options;
  re->first = length ? pattern[0] : 0;
  *error = 0;
  return re;
}
static int run(const qre *re, const char *subject, size_t length, uint32_t options, uint32_t allowed) {
  if (options & ~allowed) qre_bad_option();
  return memchr(subject, re->first, length) != NULL;
}
int qre_exec(const qre *re, const char *subject, size_t length, uint32_t options) {
  return run(re, subject, length, options, QRE_NOTBOL | QRE_NOTEOL | QRE_NOTEMPTY | QRE_PARTIAL);
}
int qre_exec_all(const qre *re, const char *subject, size_t length, uint32_t options) {
  return run(re, subject, length, options, QRE_NOTBOL | QRE_NOTEOL | QRE_NOTEMPTY | QRE_PARTIAL | QRE_GLOBAL);
}
void qre_free(qre *re) { free(re); }
"""


@pytest.fixture(scope="module")
def qre_lib(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> LibraryBuild:
    return tiny_library(tmp_path_factory.mktemp("qrelib"), "qre", QRE_HEADER, QRE_SOURCE, cache)


def test_the_types_section_says_which_function_takes_which_flags(qre_lib: LibraryBuild) -> None:
    text = header_facts(qre_lib).render()
    groups = header_facts(qre_lib).constants().macros
    assert any(g.scope == ["qre_compile"] and "QRE_CASELESS" in g.constants for g in groups), text
    assert any(g.scope == ["qre_exec", "qre_exec_all"] and g.constants.get("QRE_NOTBOL") == 1
               for g in groups)
    assert any(g.only == {"QRE_GLOBAL": ["qre_exec_all"]} and g.constants["QRE_GLOBAL"] == 256
               for g in groups)
    assert "scope: [qre_exec, qre_exec_all]" in text, text


@pytest.mark.parametrize(("target", "mask"), [("qre_exec", 0x17), ("qre_exec_all", 0x117)])
def test_each_matcher_gets_its_own_bits_and_runs(qre_lib: LibraryBuild, tmp_path: Path, target: str,
                                                 mask: int) -> None:
    code = offline_draft(qre_lib, header_facts(qre_lib), target)
    words = re.findall(r"\w+ = \(uint32_t\)lf_take_bits\(&lf_in, (0x[0-9a-f]+)u\);", code)
    assert sorted(int(w, 16) for w in words) == sorted([0x8003f, mask]), code  # compile, then match
    assert_runs_clean(code, qre_lib, tmp_path)
