# ruff: noqa: E501
"""The sample files a library ships seed LogicFuzz's fuzz runs, so a file reader's target is reached.

``im`` (written here) opens an image file only when its header carries the right checksum,
as file formats do, checked so that libFuzzer's comparison tracing cannot solve it: from an
empty corpus, a short run never builds such a file, so the reader
the harness targets is never called. The library's own ``tests/images`` file, run once through the harness, opens at once.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzzkit.coverage import measure_coverage
from fuzzkit.harness import build_harness
from fuzzkit.runner import run_fuzzer
from fuzzkit.toolchain import Fuzzkit
from tests.toolchain.conftest import header_facts, offline_draft, tiny_library

pytestmark = pytest.mark.toolchain

IM_HEADER = """\
#ifndef IM_H
#define IM_H
#define IM_MODE_READ 1
#define IM_MODE_WRITE 2
typedef struct im_file_s im_file;
im_file *im_open(const char *path, int mode);
int im_read_rows(im_file *f, unsigned char *out, int n);
void im_close(im_file *f);
#endif
"""

IM_SOURCE = """\
#include "im.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
struct im_file_s { unsigned char body[64]; int rows; };
static unsigned fnv(const unsigned char *p, int n) {
  unsigned h = 2166136261u;
  for (int i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
  return h;
}
im_file *im_open(const char *path, int mode) {
  unsigned char head[24];
  unsigned sum;
  if (mode != IM_MODE_READ) return NULL;
  FILE *fp = fopen(path, "rb");
  if (fp == NULL) return NULL;
  size_t got = fread(head, 1, sizeof head, fp);
  fclose(fp);
  if (got < sizeof head || memcmp(head, "IMG1", 4) != 0) return NULL;
  memcpy(&sum, head + 4, 4);
  /* Compared through a mix, not directly: libFuzzer traces a direct comparison's operands and
     writes the expected sum into its next inputs, and so opened the file within seconds. */
  unsigned d = (sum ^ fnv(head + 8, 16)) * 2654435761u;
  if ((d ^ (d >> 15)) != 0) return NULL;
  im_file *f = calloc(1, sizeof *f);
  if (f != NULL) { memcpy(f->body, head + 8, 16); f->rows = head[8] % 8; }
  return f;
}
int im_read_rows(im_file *f, unsigned char *out, int n) {
  int k = f->rows < n ? f->rows : n;
  for (int i = 0; i < k; i++) out[i] = f->body[i];
  return k;
}
void im_close(im_file *f) { free(f); }
"""


def _sample() -> bytes:
    body = bytes(range(3, 19))
    h = 2166136261
    for b in body:
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return b"IMG1" + h.to_bytes(4, "little") + body


def test_the_shipped_sample_reaches_the_reader_an_empty_corpus_does_not(cache: Path, tmp_path: Path) -> None:
    root = tmp_path / "im-1.0"
    (root / "tests" / "images").mkdir(parents=True)
    (root / "tests" / "images" / "rows.img").write_bytes(_sample())
    lib = tiny_library(root, "im", IM_HEADER, IM_SOURCE, cache)
    code = offline_draft(lib, header_facts(lib), "im_read_rows")
    assert "im_open(" in code and "im_read_rows(" in code, code
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "harness.c").write_text(code)
    built = build_harness(tmp_path / "h" / "harness.c", lib, tmp_path / "h" / "out")
    assert built.ok, built.log
    seeds = Fuzzkit().seed_corpus(lib)
    assert seeds and len(list(Path(seeds).iterdir())) == 2  # the sample, as it is and padded
    tools = Fuzzkit()
    once = tools.run_inputs(Path(str(built.fuzz_binary)), Path(seeds), tmp_path / "seeded", rss_limit_mb=2048,
                            harness_name="harness.c")
    assert not once.crashed, Path(once.log_path).read_text()[-2000:]
    seeded = measure_coverage(Path(str(built.cov_binary)), [Path(seeds)], lib, tmp_path / "seeded" / "coverage")
    fuzzed = run_fuzzer(Path(str(built.fuzz_binary)), tmp_path / "empty", seconds=3)
    assert fuzzed.crash is None, fuzzed.crash.excerpt
    empty = measure_coverage(Path(str(built.cov_binary)), [Path(p) for p in fuzzed.replay_inputs()], lib,
                             tmp_path / "empty" / "coverage")
    hits = {"seeded": seeded.function_hits.get("im_read_rows", 0), "empty": empty.function_hits.get("im_read_rows", 0)}
    assert hits["seeded"] > 0 and hits["empty"] == 0, hits
