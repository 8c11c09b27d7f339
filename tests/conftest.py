"""Fixtures shared by the graph and end-to-end tests: a tiny C library built for real."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from agents.offline import type_table

KV_HEADER = """\
#ifndef KV_H
#define KV_H
#include <stddef.h>
typedef struct kv kv_t;
/* Parses "key=value;key=value" into a list; NULL on malformed input. */
kv_t *kv_parse(const char *text);
void kv_free(kv_t *kv);
int kv_count(const kv_t *kv);
const char *kv_get(const kv_t *kv, const char *key);
/* Counts '=' signs; has a heap overflow on purpose for input starting with "!!". */
int kv_check(const char *text);
#endif
"""

KV_SOURCE = """\
#include "kv.h"
#include <stdlib.h>
#include <string.h>

struct kv { char *key; char *value; struct kv *next; };

static char *dup_range(const char *start, size_t len) {
  char *out = malloc(len + 1);
  if (!out) return NULL;
  memcpy(out, start, len);
  out[len] = '\\0';
  return out;
}

kv_t *kv_parse(const char *text) {
  kv_t *head = NULL;
  while (text && *text) {
    const char *eq = strchr(text, '=');
    if (!eq) { kv_free(head); return NULL; }
    const char *end = strchr(eq, ';');
    size_t vlen = end ? (size_t)(end - eq - 1) : strlen(eq + 1);
    kv_t *node = calloc(1, sizeof(*node));
    if (!node) { kv_free(head); return NULL; }
    node->key = dup_range(text, (size_t)(eq - text));
    node->value = dup_range(eq + 1, vlen);
    node->next = head;
    head = node;
    text = end ? end + 1 : eq + 1 + vlen;
  }
  return head;
}

void kv_free(kv_t *kv) {
  while (kv) { kv_t *next = kv->next; free(kv->key); free(kv->value); free(kv); kv = next; }
}

int kv_count(const kv_t *kv) {
  int n = 0;
  for (; kv; kv = kv->next) n++;
  return n;
}

int kv_check(const char *text) {
  int n = 0;
  if (text[0] == '!' && text[1] == '!') {
    volatile char *scratch = malloc(4);  /* volatile: the bad store must survive -O1 */
    if (scratch) { scratch[4 + (unsigned char)text[1] % 4] = 1; free((void *)scratch); }
  }
  for (; *text; text++) n += *text == '=';
  return n;
}

const char *kv_get(const kv_t *kv, const char *key) {
  for (; kv; kv = kv->next) {
    if (kv->key && strcmp(kv->key, key) == 0) return kv->value;
  }
  return NULL;
}
"""


@pytest.fixture(scope="session")
def kv_benchmark(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A benchmark YAML for the tiny ``kv`` library, sources on a local path."""
    root = tmp_path_factory.mktemp("kvlib")
    (root / "kv.h").write_text(KV_HEADER)
    (root / "kv.c").write_text(KV_SOURCE)
    bench = {
        "project": "kv",
        "language": "c",
        "source": {"path": str(root)},
        "build": {"sources": ["kv.c"], "headers": ["kv.h"]},
        "functions": [{
            "name": "kv_parse", "signature": "kv_t * kv_parse(const char * text)",
            "return_type": "kv_t *", "params": [{"name": "text", "type": "const char *"}],
        }],
    }
    path = root / "kv.yaml"
    path.write_text(yaml.safe_dump(bench))
    return path


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Builds and indexes go to a per-session cache unless the caller chose one."""
    import os

    os.environ.setdefault("LOGICFUZZ_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


def harness(body: str) -> str:
    """A kv harness with ``body`` inside LLVMFuzzerTestOneInput."""
    return textwrap.dedent("""\
        #include <stdint.h>
        #include <stdlib.h>
        #include <string.h>
        #include "kv.h"

        int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
          char *text = malloc(size + 1);
          if (!text) return 0;
          memcpy(text, data, size);
          text[size] = '\\0';
        %s
          free(text);
          return 0;
        }
        """) % textwrap.indent(textwrap.dedent(body), "  ")


@pytest.fixture(autouse=True)
def _no_type_table() -> Iterator[None]:
    """Each test starts with no library's Types table active (engine tests activate one)."""
    token = type_table._ACTIVE.set(type_table.EMPTY)
    yield
    type_table._ACTIVE.reset(token)
