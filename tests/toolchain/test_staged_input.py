# ruff: noqa: E501
"""A streaming parser that reads from its own buffer: ask for it, fill it, parse ``len`` bytes.

``sp`` (written here, built in a temporary directory) has the shape: ``sp_get_buffer(p, len)``
hands out a buffer of ``len`` bytes, ``sp_parse_buffer(p, len, final)`` parses the first
``len`` bytes of it and takes no data pointer. The harness used to pass a length from option
bytes with nothing staged, and the input as the constructor's encoding name: the parser never
saw the input, and after another call had filled part of its buffer it read past that. The
library here traps on one input prefix, which only a harness that stages the input can reach.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzkit.header_facts import HeaderFacts
from fuzzkit.library import LibraryBuild
from tests.toolchain.conftest import assert_finds_crash_in, header_facts, offline_draft, tiny_library

pytestmark = pytest.mark.toolchain

SP_HEADER = """\
#ifndef SP_H
#define SP_H
typedef struct sp_parser_s *sp_parser;
sp_parser sp_create(const char *encoding);
void *sp_get_buffer(sp_parser p, int len);
int sp_parse_buffer(sp_parser p, int len, int final);
void sp_free(sp_parser p);
#endif
"""

SP_SOURCE = """\
#include "sp.h"
#include <stdlib.h>
#include <string.h>
struct sp_parser_s { char *buf; int cap; int depth; };
sp_parser sp_create(const char *encoding) {
  if (encoding && strcmp(encoding, "UTF-8") != 0) return NULL;
  return calloc(1, sizeof(struct sp_parser_s));
}
void *sp_get_buffer(sp_parser p, int len) {
  if (!p || len < 0) return NULL;
  if (len > p->cap) { char *b = realloc(p->buf, (size_t)len + 1); if (!b) return NULL; p->buf = b; p->cap = len; }
  return p->buf;
}
int sp_parse_buffer(sp_parser p, int len, int final) {
  if (!p || len < 0 || len > p->cap || (len > 0 && !p->buf)) return -1;
  for (int i = 0; i < len; i++) p->depth += p->buf[i] == '<' ? 1 : p->buf[i] == '>' ? -1 : 0;
  if (len >= 3 && memcmp(p->buf, "SP!", 3) == 0) __builtin_trap();  /* reached only by staged input */
  return final && p->depth != 0 ? -2 : 0;
}
void sp_free(sp_parser p) { if (p) { free(p->buf); free(p); } }
"""


@pytest.fixture(scope="module")
def sp_lib(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> LibraryBuild:
    return tiny_library(tmp_path_factory.mktemp("splib"), "sp", SP_HEADER, SP_SOURCE, cache)


def test_the_input_is_staged_in_the_parsers_own_buffer(sp_lib: LibraryBuild, tmp_path: Path) -> None:
    facts: HeaderFacts = header_facts(sp_lib)
    code = offline_draft(sp_lib, facts, "sp_parse_buffer")
    body = code[code.index("LLVMFuzzerTestOneInput"):]
    assert "sp_create(NULL)" in body, code  # the input is no encoding name
    assert body.index("sp_get_buffer(") < body.index("memcpy(") < body.index("sp_parse_buffer("), code
    assert "(int)size, " in body[body.index("sp_parse_buffer("):], code  # the length staged
    assert_finds_crash_in(code, sp_lib, tmp_path, "sp_parse_buffer")
