"""An argument the library's documentation lets be NULL is sometimes left out.

``lbl`` (written here) documents, where it defines ``lbl_register``, that either label may be
NULL, and derives the ASCII form itself when it is: that path (which traps here) is reached
only when the harness leaves ``alabel`` out. The documentation is in the source file, not in
the header, as in many C libraries; the prepare step reads it into the Types section.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fuzzkit.library import LibraryBuild
from tests.toolchain.conftest import assert_finds_crash_in, header_facts, offline_draft, tiny_library

pytestmark = pytest.mark.toolchain

LBL_HEADER = """\
#ifndef LBL_H
#define LBL_H
int lbl_register(const char *ulabel, const char *alabel, char **out, int flags);
void lbl_free(void *p);
#endif
"""

LBL_SOURCE = """\
#include "lbl.h"
#include <stdlib.h>
#include <string.h>
static void lbl_derive_long(void) { __builtin_trap(); }

/**
 * lbl_register:
 * @ulabel: the label in Unicode form, or NULL.
 * @alabel: the label in ASCII form, or %NULL to derive it from @ulabel.
 * @out: where the label to register is stored; release it with lbl_free().
 * @flags: options.
 *
 * Returns: 0 on success, a negative error code otherwise.
 **/
int lbl_register(const char *ulabel, const char *alabel, char **out, int flags) {
  (void)flags;
  if (ulabel == NULL && alabel == NULL) return -1;
  if (alabel != NULL) {
    if (strncmp(alabel, "xn--", 4) != 0) return -2;
    if (ulabel != NULL && strcmp(ulabel, alabel + 4) != 0) return -3;
    *out = strdup(alabel);
    return *out ? 0 : -4;
  }
  if (strlen(ulabel) > 8 && ulabel[0] == 'u') lbl_derive_long();
  *out = strdup(ulabel);
  return *out ? 0 : -4;
}

void lbl_free(void *p) { free(p); }
"""


@pytest.fixture(scope="module")
def lbl_lib(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> LibraryBuild:
    return tiny_library(tmp_path_factory.mktemp("lbllib"), "lbl", LBL_HEADER, LBL_SOURCE, cache)


def test_the_documented_null_reaches_the_path_that_derives_the_label(
    lbl_lib: LibraryBuild, tmp_path: Path
) -> None:
    facts = header_facts(lbl_lib)
    assert facts.optional == {"lbl_register": ["ulabel", "alabel"]}, facts.optional
    code = offline_draft(lbl_lib, facts, "lbl_register")
    assert re.search(r"alabel = \(lf_take_byte\(&lf_in\) & 1u\) \? NULL : lf_take_str", code), code
    assert_finds_crash_in(code, lbl_lib, tmp_path, "lbl_derive_long")
