"""One fix round on a library the engine never saw: type names without their tag, built for real.

``xq`` (written here, built in a temporary directory) has the shapes that went unrepaired for
five rounds: a value struct used through ``struct x_ttl *``, an opaque reply handed out through
``struct x_reply **`` and an enum parameter. The harness drops every tag and passes the reply
pointer where its address is wanted; the build's diagnostics go through the enhancer's prompt
to the offline model, and its one answer must build and run.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agents.enhancer import Enhancer
from agents.offline.model import OfflineChatModel
from fuzzkit.harness import build_harness
from fuzzkit.headers import parse_header
from fuzzkit.library import LibraryBuild
from nodes.build import errors_text
from tests.toolchain.conftest import tiny_library

pytestmark = pytest.mark.toolchain

XQ_HEADER = """\
#ifndef XQ_H
#define XQ_H
#include <stddef.h>
struct x_ttl { int seconds; };
struct x_reply;
enum x_mode { X_FAST, X_SAFE };
int x_ttl_set(struct x_ttl *ttl, int seconds);
int x_query(const char *name, size_t len, const struct x_ttl *ttl, struct x_reply **out);
int x_reply_count(const struct x_reply *reply);
void x_reply_free(struct x_reply *reply);
int x_mode_set(enum x_mode mode);
#endif
"""

XQ_SOURCE = """\
#include "xq.h"
#include <stdlib.h>

struct x_reply { size_t count; };
static enum x_mode current = X_FAST;

int x_ttl_set(struct x_ttl *ttl, int seconds) {
  ttl->seconds = seconds < 0 ? 0 : seconds;
  return 0;
}

int x_query(const char *name, size_t len, const struct x_ttl *ttl, struct x_reply **out) {
  *out = NULL;
  if (len == 0 || ttl->seconds < 0) return -1;
  struct x_reply *reply = calloc(1, sizeof *reply);
  if (!reply) return -1;
  for (size_t i = 0; i < len; i++) reply->count += name[i] == '.';
  reply->count += current == X_SAFE;
  *out = reply;
  return 0;
}

int x_reply_count(const struct x_reply *reply) { return reply ? (int)reply->count : -1; }
void x_reply_free(struct x_reply *reply) { free(reply); }
int x_mode_set(enum x_mode mode) { current = mode; return 0; }
"""

TAGLESS_HARNESS = """\
#include <stdint.h>
#include <stddef.h>
#include "xq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  x_ttl ttl;
  x_ttl_set(&ttl, (int)size);
  x_mode_set((x_mode)(size % 2));
  struct x_reply *reply = NULL;
  if (x_query((const char *)data, size, &ttl, reply) != 0) return 0;
  int n = x_reply_count(reply);
  x_reply_free(reply);
  return n < 0;
}
"""


@pytest.fixture(scope="module")
def xq(cache: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[LibraryBuild, Path]:
    root = tmp_path_factory.mktemp("xq")
    return tiny_library(root, "xq", XQ_HEADER, XQ_SOURCE, cache), root / "xq.h"


def test_one_fix_round_through_the_prompt_makes_it_build(
    xq: tuple[LibraryBuild, Path], tmp_path: Path
) -> None:
    lib, header = xq
    source = tmp_path / "v0" / "harness.c"
    source.parent.mkdir()
    source.write_text(TAGLESS_HARNESS)
    broken = build_harness(source, lib, tmp_path / "v0")
    assert not broken.ok
    assert any(f.text == "struct " for d in broken.errors for f in d.fixits)
    errors = errors_text(broken.diagnostics, broken.log, source.name)
    assert 'fix-it: insert "struct " at 6:3' in errors and 'fix-it: insert "&" at 10:47' in errors

    api = parse_header(header)
    target = next(f for f in api if f.name == "x_query")
    state = {"target": target.to_dict(), "api": [f.to_dict() for f in api], "headers": ["xq.h"],
             "harness_code": TAGLESS_HARNESS}
    reply = Enhancer(OfflineChatModel()).run(
        Enhancer.fix_variables(state, (), "the harness does not compile", errors, "", "", "(none)"))
    assert reply.output.unresolved == []

    fixed = tmp_path / "v1" / "harness.c"
    fixed.parent.mkdir()
    fixed.write_text(reply.code)
    build = build_harness(fixed, lib, tmp_path / "v1")
    assert build.ok, build.log
    assert [d for d in build.diagnostics if d.severity == "warning"] == []
    assert "x_query((const char *)data, size, &ttl, &reply)" in reply.code
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "seed").write_bytes(b"a.b.c")
    run = subprocess.run([str(build.fuzz_binary), "-runs=300", str(corpus)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
