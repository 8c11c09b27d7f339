"""A library the engine was never tuned for, end to end: headers, default choice, harnesses.

``pk`` (written here, built in a temporary directory) has the API shapes that broke harnesses
for libraries outside the shipped benchmarks: buffers listed before their lengths, a
worst-case bound with the library's own integer types, an opaque context made through a
``T **`` constructor, an error-code typedef, verbless constructors, ``loadb``-style readers,
reference-stealing ``_new`` setters and an unchecked ``_nocheck`` variant. The library has no
bug, so any crash is the harness's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.offline.analysis import analyze_function
from agents.offline.synth import default_skeleton, write_harness
from fuzzkit.harness import build_harness
from fuzzkit.headers import parse_header
from fuzzkit.init_benchmark import make_benchmark, skips_validation
from fuzzkit.library import BuildRecipe, LibraryBuild, build_library
from fuzzkit.runner import run_fuzzer
from fuzzkit.source import SourceSpec, fetch_source

pytestmark = pytest.mark.toolchain

PK_HEADER = """\
#ifndef PK_H
#define PK_H
#include <stddef.h>

int pk_packBound(int inputSize);
int pk_pack(const char *src, char *dst, int srcSize, int dstCapacity);
int pk_unpack(const char *src, char *dst, int compressedSize, int dstCapacity);

typedef size_t pk_errorCode_t;
typedef struct pk_dctx_s pk_dctx;
unsigned pk_getVersion(void);
unsigned pk_isError(pk_errorCode_t code);
pk_errorCode_t pk_createDecoder(pk_dctx **dctxPtr, unsigned version);
pk_errorCode_t pk_freeDecoder(pk_dctx *dctx);
size_t pk_decode(pk_dctx *dctx, void *dstBuffer, size_t *dstSizePtr, const void *srcBuffer,
                 size_t *srcSizePtr);

typedef struct pk_value pk_value_t;
pk_value_t *pk_loadb(const char *buffer, size_t buflen, size_t flags);
pk_value_t *pk_loadb_nocheck(const char *buffer, size_t buflen, size_t flags);
pk_value_t *pk_array(void);
pk_value_t *pk_number(long long value);
void pk_delete(pk_value_t *value);
size_t pk_array_size(const pk_value_t *array);
char *pk_dumps(const pk_value_t *value, size_t flags);
int pk_array_append_new(pk_value_t *array, pk_value_t *item);
#endif
"""

PK_SOURCE = """\
#include "pk.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Run-length pairs (count, byte); reads exactly srcSize bytes, writes at most dstCapacity. */
int pk_packBound(int inputSize) { return inputSize < 0 ? 0 : 2 * inputSize; }

int pk_pack(const char *src, char *dst, int srcSize, int dstCapacity) {
  int out = 0;
  for (int i = 0; i < srcSize;) {
    int run = 1;
    while (i + run < srcSize && run < 255 && src[i + run] == src[i]) run++;
    if (out + 2 > dstCapacity) return 0;
    dst[out++] = (char)run;
    dst[out++] = src[i];
    i += run;
  }
  return out;
}

int pk_unpack(const char *src, char *dst, int compressedSize, int dstCapacity) {
  int out = 0;
  for (int i = 0; i + 1 < compressedSize; i += 2) {
    int run = (unsigned char)src[i];
    if (out + run > dstCapacity) return -1;
    memset(dst + out, src[i + 1], (size_t)run);
    out += run;
  }
  return out;
}

struct pk_dctx_s { unsigned version; int have_count; unsigned char count; };

unsigned pk_getVersion(void) { return 100; }
unsigned pk_isError(pk_errorCode_t code) { return code == (size_t)-1; }

pk_errorCode_t pk_createDecoder(pk_dctx **dctxPtr, unsigned version) {
  pk_dctx *d = calloc(1, sizeof *d);
  *dctxPtr = d;
  if (d == NULL) return (size_t)-1;
  d->version = version;
  return 0;
}

pk_errorCode_t pk_freeDecoder(pk_dctx *dctx) {
  free(dctx);
  return 0;
}

size_t pk_decode(pk_dctx *d, void *dstBuffer, size_t *dstSizePtr, const void *srcBuffer,
                 size_t *srcSizePtr) {
  const unsigned char *src = srcBuffer;
  unsigned char *dst = dstBuffer;
  size_t in = 0, out = 0;
  if (d->version != 100) return (size_t)-1;
  while (in < *srcSizePtr) {
    if (!d->have_count) {
      d->count = src[in++];
      d->have_count = 1;
      continue;
    }
    if (out + d->count > *dstSizePtr) break;
    memset(dst + out, src[in++], d->count);
    out += d->count;
    d->have_count = 0;
  }
  *srcSizePtr = in;
  *dstSizePtr = out;
  return 0;
}

struct pk_value { int is_array; long long number; pk_value_t **items; size_t n, cap; };

pk_value_t *pk_array(void) {
  pk_value_t *v = calloc(1, sizeof *v);
  if (v) v->is_array = 1;
  return v;
}

pk_value_t *pk_number(long long value) {
  pk_value_t *v = calloc(1, sizeof *v);
  if (v) v->number = value;
  return v;
}

void pk_delete(pk_value_t *value) {
  if (value == NULL) return;
  for (size_t i = 0; i < value->n; i++) pk_delete(value->items[i]);
  free(value->items);
  free(value);
}

size_t pk_array_size(const pk_value_t *array) { return array && array->is_array ? array->n : 0; }

/* Steals item, also when it fails. */
int pk_array_append_new(pk_value_t *array, pk_value_t *item) {
  if (item == NULL) return -1;
  if (array == NULL || !array->is_array || array == item) {
    pk_delete(item);
    return -1;
  }
  if (array->n == array->cap) {
    size_t cap = array->cap ? 2 * array->cap : 4;
    pk_value_t **items = realloc(array->items, cap * sizeof *items);
    if (items == NULL) {
      pk_delete(item);
      return -1;
    }
    array->items = items;
    array->cap = cap;
  }
  array->items[array->n++] = item;
  return 0;
}

/* "1,2,3" is a list of numbers; flags bit 0 allows an empty list. */
pk_value_t *pk_loadb(const char *buffer, size_t buflen, size_t flags) {
  pk_value_t *list = pk_array();
  size_t i = 0;
  if (list == NULL) return NULL;
  while (i < buflen) {
    long long n = 0;
    size_t start = i;
    while (i < buflen && buffer[i] >= '0' && buffer[i] <= '9' && i - start < 18)
      n = n * 10 + (buffer[i++] - '0');
    if (i == start || pk_array_append_new(list, pk_number(n)) != 0) {
      pk_delete(list);
      return NULL;
    }
    if (i < buflen && buffer[i] != ',') {
      pk_delete(list);
      return NULL;
    }
    i++;
  }
  if (list->n == 0 && !(flags & 1)) {
    pk_delete(list);
    return NULL;
  }
  return list;
}

pk_value_t *pk_loadb_nocheck(const char *buffer, size_t buflen, size_t flags) {
  return pk_loadb(buffer, buflen, flags | 1);
}

static size_t dump(const pk_value_t *v, char *out, size_t cap) {
  size_t used = 0;
  if (!v->is_array) return (size_t)snprintf(out, cap, "%lld", v->number);
  used += (size_t)snprintf(out, cap, "[");
  for (size_t i = 0; i <= v->n; i++) {
    const char *sep = i == v->n ? "]" : i ? "," : "";
    used += (size_t)snprintf(out ? out + used : NULL, out ? cap - used : 0, "%s", sep);
    if (i < v->n) used += dump(v->items[i], out ? out + used : NULL, out ? cap - used : 0);
  }
  return used;
}

char *pk_dumps(const pk_value_t *value, size_t flags) {
  (void)flags;
  if (value == NULL) return NULL;
  size_t n = dump(value, NULL, 0);
  char *out = malloc(n + 1);
  if (out) dump(value, out, n + 1);
  return out;
}
"""


@pytest.fixture(scope="module")
def pk_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pklib")
    (root / "pk.h").write_text(PK_HEADER)
    (root / "pk.c").write_text(PK_SOURCE)
    return root


@pytest.fixture(scope="module")
def pk_lib(pk_root: Path, cache: Path) -> LibraryBuild:
    source = fetch_source(SourceSpec(path=str(pk_root)))
    return build_library(source, BuildRecipe(sources=["pk.c"], headers=["pk.h"]), cache=cache)


def test_default_choice_leaves_out_the_unchecked_variant(pk_root: Path, cache: Path) -> None:
    assert skips_validation("pk_loadb_nocheck") and skips_validation("json_string_nocheck")
    assert not skips_validation("pk_loadb") and not skips_validation("check_input")
    bench = make_benchmark({"path": str(pk_root)}, cache=cache)
    chosen = [f["name"] for f in bench["functions"]]
    assert "pk_loadb" in chosen and "pk_unpack" in chosen
    assert "pk_loadb_nocheck" not in chosen


@pytest.mark.parametrize("name", ["pk_pack", "pk_unpack", "pk_decode", "pk_dumps", "pk_array_append_new"])
def test_first_harness_builds_calls_the_target_and_fuzzes_cleanly(
    pk_lib: LibraryBuild, tmp_path: Path, name: str
) -> None:
    api = parse_header(Path(pk_lib.headers[0]), pk_lib.include_dirs, pk_lib.defines)
    target = next(f for f in api if f.name == name)
    analysis = analyze_function(target, api)
    draft = write_harness(
        target,
        api,
        ["pk.h"],
        analysis.archetype,
        default_skeleton(analysis.archetype),
        rules=analysis.rules,
    )
    assert f"{name}(" in draft.code
    source = tmp_path / f"{name}.c"
    source.write_text(draft.code)
    built = build_harness(source, pk_lib, tmp_path / "out")
    assert built.ok, built.log
    assert not [d for d in built.diagnostics if "implicit" in d.message], built.log
    run = run_fuzzer(Path(str(built.fuzz_binary)), tmp_path / "work", seconds=2)
    assert run.crash is None, run.crash.excerpt
    assert run.stats.execs > 100, Path(run.log_path).read_text()[-2000:]
