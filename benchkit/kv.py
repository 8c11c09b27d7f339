"""``kv``: a tiny C library (a key=value parser) built for real by the graph tests and the benches' probes.

``kv_check`` writes past a small allocation when its text starts with ``!!``: a real bug for the
crash-handling paths to find.
"""

from __future__ import annotations

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
