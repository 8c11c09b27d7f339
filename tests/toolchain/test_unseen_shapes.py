# ruff: noqa: E501
"""Shapes that kept harnesses from running on libraries nobody tuned the engine for.

``xq`` (written here, built in a temporary directory) has what three unseen libraries had:
a parser whose result comes back through ``struct T **out`` and is released by a ``void *``
releaser its documentation names; a decoder context that only sees the input once the
function taking the buffer is called; typedef'd byte and length types whose result buffer the
documentation says to release with ``free``. Everything the engine may know about them comes
from the header (``fuzzkit.header_facts``) through the prompt's Types section. The library has
no bug: a crash or a leak is the harness's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.offline.analysis import analyze_function
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from fuzzkit.header_facts import HeaderFacts
from fuzzkit.header_facts_collect import collect_facts
from fuzzkit.headers import parse_header
from fuzzkit.library import LibraryBuild
from tests.toolchain.conftest import assert_runs_clean, tiny_library

pytestmark = pytest.mark.toolchain

XQ_HEADER = """\
#ifndef XQ_H
#define XQ_H
#include <stddef.h>
#include <stdint.h>

#define XQ_SUCCESS 0
#define XQ_EBADRESP 10
#define XQ_ENOMEM 15

typedef unsigned char xq_uint8_t;
typedef long xq_ssize_t;

struct xq_reply {
  int ttl;
  char *name;
  struct xq_reply *next;
};

/* Parse a reply; on success *out holds a list that must be freed with xq_free_data(). */
int xq_parse_reply(const unsigned char *abuf, int alen, struct xq_reply **out);
/* Release data allocated by the xq_parse_* functions. */
void xq_free_data(void *dataptr);

typedef struct xq_ctx xq_ctx;
struct xq_hdr { int width; int height; int channels; };
xq_ctx *xq_ctx_new(int flags);
int xq_set_buffer(xq_ctx *ctx, const uint8_t *buf, size_t len);
int xq_get_header(xq_ctx *ctx, struct xq_hdr *hdr);
int xq_decode_image(xq_ctx *ctx, uint8_t *out, size_t out_len, int fmt, int flags);
void xq_ctx_free(xq_ctx *ctx);

/* Escape s into a new buffer. *dst must be released with free(). Returns the length or -1. */
xq_ssize_t xq_escape(const xq_uint8_t *s, xq_ssize_t len, xq_uint8_t **dst);
#endif
"""

XQ_SOURCE = """\
#include "xq.h"
#include <stdlib.h>
#include <string.h>

int xq_parse_reply(const unsigned char *abuf, int alen, struct xq_reply **out) {
  struct xq_reply *head = NULL, **tail = &head;
  int i = 0;
  if (!abuf || alen < 2 || !out) return XQ_EBADRESP;
  while (i + 2 <= alen) {
    int n = abuf[i + 1];
    if (i + 2 + n > alen) break;
    struct xq_reply *r = calloc(1, sizeof *r);
    if (!r) return XQ_ENOMEM;
    r->ttl = abuf[i];
    r->name = malloc(n + 1);
    memcpy(r->name, abuf + i + 2, n);
    r->name[n] = 0;
    *tail = r; tail = &r->next;
    i += 2 + n;
  }
  *out = head;
  return head ? XQ_SUCCESS : XQ_EBADRESP;
}

void xq_free_data(void *dataptr) {
  struct xq_reply *r = dataptr;
  while (r) { struct xq_reply *n = r->next; free(r->name); free(r); r = n; }
}

struct xq_ctx { int flags; const uint8_t *buf; size_t len; };
xq_ctx *xq_ctx_new(int flags) { xq_ctx *c = calloc(1, sizeof *c); if (c) c->flags = flags; return c; }
int xq_set_buffer(xq_ctx *ctx, const uint8_t *buf, size_t len) { if (!ctx) return -1; ctx->buf = buf; ctx->len = len; return 0; }
int xq_get_header(xq_ctx *ctx, struct xq_hdr *hdr) {
  if (!ctx || !ctx->buf || ctx->len < 4 || !hdr) return -1;
  if (ctx->buf[0] != 'X' || ctx->buf[1] != 'Q') return -2;
  hdr->width = ctx->buf[2]; hdr->height = ctx->buf[3]; hdr->channels = 3;
  return 0;
}
int xq_decode_image(xq_ctx *ctx, uint8_t *out, size_t out_len, int fmt, int flags) {
  struct xq_hdr h;
  if (xq_get_header(ctx, &h) != 0) return -1;
  size_t need = (size_t)h.width * h.height * (fmt ? 4 : 3);
  if (!out || out_len < need) return -3;
  for (size_t i = 0; i < need; i++) out[i] = ctx->len > 4 ? ctx->buf[4 + i % (ctx->len - 4)] : 0;
  return flags ? 1 : 0;
}
void xq_ctx_free(xq_ctx *ctx) { free(ctx); }

xq_ssize_t xq_escape(const xq_uint8_t *s, xq_ssize_t len, xq_uint8_t **dst) {
  if (!s || len < 0 || !dst) return -1;
  xq_uint8_t *o = malloc(2 * (size_t)len + 1);
  if (!o) return -1;
  xq_ssize_t j = 0;
  for (xq_ssize_t i = 0; i < len; i++) { if (s[i] == '"' || s[i] == '\\\\') o[j++] = '\\\\'; o[j++] = s[i]; }
  o[j] = 0; *dst = o; return j;
}
"""


@pytest.fixture(scope="module")
def xq_lib(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> LibraryBuild:
    return tiny_library(tmp_path_factory.mktemp("xqlib"), "xq", XQ_HEADER, XQ_SOURCE, cache)


@pytest.fixture(scope="module")
def xq_facts(xq_lib: LibraryBuild) -> HeaderFacts:
    api = parse_header(Path(xq_lib.headers[0]), xq_lib.include_dirs, xq_lib.defines)
    return collect_facts(xq_lib.headers, xq_lib.include_dirs, xq_lib.defines, api)


def test_the_header_says_types_constants_and_releasers(xq_facts: HeaderFacts) -> None:
    typedefs = {t.name: t.canonical for t in xq_facts.typedefs}
    assert typedefs["xq_uint8_t"] == "unsigned char" and typedefs["xq_ssize_t"] == "long"
    records = {r.tag: r for r in xq_facts.records}
    assert [f[0] for f in records["xq_reply"].fields] == ["ttl", "name", "next"]
    assert records["xq_ctx"].opaque
    assert {m.name: m.value for m in xq_facts.macros}["XQ_SUCCESS"] == 0
    released = {(r.function, r.releases) for r in xq_facts.releasers}
    assert ("xq_free_data", "what xq_parse_reply allocates") in released
    assert ("free", "what xq_escape allocates") in released
    assert ("xq_ctx_free", "xq_ctx *") in released
    text = xq_facts.render()
    assert "fields: {ttl: int, name: char *, next: struct xq_reply *}" in text, text
    assert "- [xq_uint8_t, unsigned char]" in text, text


@pytest.mark.parametrize(
    ("name", "must_contain"),
    [
        ("xq_parse_reply", ["struct xq_reply *", "xq_free_data("]),
        ("xq_decode_image", ["xq_set_buffer(", "data"]),
        ("xq_escape", ["free(dst"]),
    ],
)
def test_first_harness_builds_feeds_the_input_and_leaks_nothing(
    xq_lib: LibraryBuild, xq_facts: HeaderFacts, tmp_path: Path, name: str, must_contain: list[str]
) -> None:
    api = parse_header(Path(xq_lib.headers[0]), xq_lib.include_dirs, xq_lib.defines)
    target = next(f for f in api if f.name == name)
    with using(read_types(xq_facts.render())):
        analysis = analyze_function(target, api)
        draft = write_harness(target, api, ["xq.h"], analysis.archetype,
                              default_skeleton(analysis.archetype), rules=analysis.rules)
    for piece in must_contain:
        assert piece in draft.code, draft.code
    assert_runs_clean(draft.code, xq_lib, tmp_path)
