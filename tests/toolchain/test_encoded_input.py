# ruff: noqa: E501
"""A decoder that takes bytes without a length reads what its own encoder wrote.

``pk`` (written here, built in a temporary directory) compiles rules from text and serializes
them: ``pk_serialize_decode(rules, n, bytes)`` takes no length, because the encoded data says
how long it is, and trusts it. The harness used to hand it a NUL-terminated copy of the fuzz
input and a count from option bytes: a read past the buffer on nearly every input, blamed on the
harness, on the first target and on every improvement that added the call. Built from the
encoder's output (rules compiled from the input, one of them, encoded, then decoded), the
harness reaches a trap behind a rule that only a decoded rule can carry.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzkit.header_facts import HeaderFacts
from fuzzkit.library import LibraryBuild
from tests.toolchain.conftest import _fuzz, header_facts, offline_draft, tiny_library

pytestmark = pytest.mark.toolchain

PK_HEADER = """\
#ifndef PK_H
#define PK_H
#include <stddef.h>
#include <stdint.h>
typedef struct pk_rule pk_rule;
pk_rule *pk_compile(const char *, size_t, int *);
void pk_rule_free(pk_rule *);
int32_t pk_serialize_encode(const pk_rule **, int32_t, uint8_t **, size_t *);
int32_t pk_serialize_decode(pk_rule **, int32_t, const uint8_t *);
int32_t pk_serialize_count(const uint8_t *);
void pk_serialize_free(uint8_t *);
#endif
"""

PK_SOURCE = """\
#include "pk.h"
#include <stdlib.h>
#include <string.h>
struct pk_rule { size_t len; char *text; };
pk_rule *pk_compile(const char *p, size_t n, int *err) {
  pk_rule *r = calloc(1, sizeof *r);
  if (!r || !(r->text = malloc(n + 1))) { free(r); if (err) *err = 1; return NULL; }
  memcpy(r->text, p, n); r->text[n] = 0; r->len = n;
  return r;
}
void pk_rule_free(pk_rule *r) { if (r) { free(r->text); free(r); } }
/* Format: count (4 bytes), then per rule its length (4 bytes) and its bytes. */
int32_t pk_serialize_encode(const pk_rule **rs, int32_t n, uint8_t **out, size_t *size) {
  size_t total = 4;
  if (!rs || n <= 0 || !out || !size) return -1;
  for (int32_t i = 0; i < n; i++) total += 4 + rs[i]->len;
  uint8_t *b = malloc(total), *w = b + 4;
  if (!b) return -1;
  memcpy(b, &n, 4);
  for (int32_t i = 0; i < n; i++) { uint32_t l = (uint32_t)rs[i]->len; memcpy(w, &l, 4); memcpy(w + 4, rs[i]->text, l); w += 4 + l; }
  *out = b; *size = total;
  return n;
}
int32_t pk_serialize_count(const uint8_t *b) { int32_t n; memcpy(&n, b, 4); return n; }
static void pk_check(const pk_rule *r) { if (r->len >= 3 && memcmp(r->text, "PK!", 3) == 0) __builtin_trap(); }
int32_t pk_serialize_decode(pk_rule **rs, int32_t n, const uint8_t *b) {
  int32_t have = pk_serialize_count(b);
  const uint8_t *p = b + 4;
  if (n > have) n = have;
  for (int32_t i = 0; i < n; i++) {
    uint32_t l; memcpy(&l, p, 4);
    rs[i] = pk_compile((const char *)p + 4, l, NULL);  /* trusts the length: the encoder wrote it */
    if (!rs[i]) return -1;
    pk_check(rs[i]);
    p += 4 + l;
  }
  return n;
}
void pk_serialize_free(uint8_t *b) { free(b); }
"""


@pytest.fixture(scope="module")
def pk_lib(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> LibraryBuild:
    return tiny_library(tmp_path_factory.mktemp("pklib"), "pk", PK_HEADER, PK_SOURCE, cache)


def test_the_decoder_reads_what_its_encoder_wrote(pk_lib: LibraryBuild, tmp_path: Path) -> None:
    facts: HeaderFacts = header_facts(pk_lib)
    code = offline_draft(pk_lib, facts, "pk_serialize_decode")
    body = code[code.index("LLVMFuzzerTestOneInput"):]
    # A rule compiled from the input, alone in the encoder's array, encoded, then decoded.
    assert body.index("pk_compile(") < body.index("pk_serialize_encode(") < body.index("pk_serialize_decode("), code
    encode = body[body.index("pk_serialize_encode("):].split(";")[0]
    assert "(int32_t)1" in encode, code
    decode = body[body.index("pk_serialize_decode("):].split(";")[0]
    assert "encoded" in decode and "text" not in decode, code
    assert "pk_serialize_free(encoded)" in body, code  # the header's releaser for the buffer
    run = _fuzz(code, pk_lib, tmp_path, 20)
    assert run.crash is not None, Path(run.log_path).read_text()[-2000:]
    # The trap behind a decoded rule, not a read past the input.
    assert "pk_check" in run.crash.excerpt and "overflow" not in run.crash.excerpt, run.crash.excerpt


def test_a_bare_byte_reader_of_the_family_reads_encoded_bytes_too(pk_lib: LibraryBuild) -> None:
    facts: HeaderFacts = header_facts(pk_lib)
    code = offline_draft(pk_lib, facts, "pk_serialize_count")
    body = code[code.index("LLVMFuzzerTestOneInput"):]
    assert body.index("pk_serialize_encode(") < body.index("pk_serialize_count("), code
    assert "pk_serialize_count((const uint8_t *)encoded)" in body, code
