"""Flags that give the caller's buffer away, in a library nobody tuned the engine for.

``ql_load(db, mem, n, flags)`` takes ``QL_LOAD_*`` flags, one of which makes the library free
``mem`` itself. A harness that takes the flags from fuzz bytes sets it sooner or later and
crashes in its own cleanup (a double or invalid free), which is the harness's fault, not a bug.
The header says which constants belong to the function (they carry its name); the engine reads
them from the prompt's Types section even when the header has more status codes than the facts
keep, and leaves out the flag that gives the buffer away.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.offline.analysis import analyze_function
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from fuzzkit.harness import build_harness
from fuzzkit.header_facts_collect import collect_facts
from fuzzkit.header_macros import MAX_MACROS
from fuzzkit.headers import parse_header
from fuzzkit.runner import run_fuzzer
from tests.toolchain.conftest import tiny_library

pytestmark = pytest.mark.toolchain

# More status codes than the facts keep, all before the function's own constants.
STATUS = "\n".join(f"#define QL_E{i} (-{i})" for i in range(1, MAX_MACROS + 10))

QL_HEADER = f"""\
#ifndef QL_H
#define QL_H
#include <stddef.h>
#define QL_OK 0
{STATUS}

#define QL_LOAD_FREEONCLOSE 1 /* ql_close() frees mem */
#define QL_LOAD_READONLY 4

typedef struct ql_db ql_db;
ql_db *ql_open(void);
int ql_load(ql_db *db, const char *name, unsigned char *mem, size_t n, unsigned flags);
int ql_count(ql_db *db);
void ql_close(ql_db *db);
#endif
"""

QL_SOURCE = """\
#include "ql.h"
#include <stdlib.h>

struct ql_db { unsigned char *mem; size_t n; unsigned flags; };
ql_db *ql_open(void) { return calloc(1, sizeof(ql_db)); }
int ql_load(ql_db *db, const char *name, unsigned char *mem, size_t n, unsigned flags) {
  if (!db || !mem || !name) return QL_E1;
  db->mem = mem; db->n = n; db->flags = flags;
  return QL_OK;
}
int ql_count(ql_db *db) {
  int k = 0;
  for (size_t i = 0; db && i < db->n; i++) k += db->mem[i] == 'q';
  return k;
}
void ql_close(ql_db *db) {
  if (!db) return;
  if (db->flags & QL_LOAD_FREEONCLOSE) free(db->mem);
  free(db);
}
"""


def test_flags_come_from_the_functions_constants_without_the_one_giving_the_buffer_away(
    tmp_path: Path, cache: Path
) -> None:
    lib = tiny_library(tmp_path / "qllib", "ql", QL_HEADER, QL_SOURCE, cache)
    api = parse_header(Path(lib.headers[0]), lib.include_dirs, lib.defines)
    facts = collect_facts(lib.headers, lib.include_dirs, lib.defines, api)
    macros = {m.name: m.value for m in facts.macros}
    assert macros["QL_LOAD_FREEONCLOSE"] == 1 and macros["QL_LOAD_READONLY"] == 4
    assert f"QL_E{MAX_MACROS + 5}" not in macros  # past the status codes' cap
    target = next(f for f in api if f.name == "ql_load")
    with using(read_types(facts.render())):
        analysis = analyze_function(target, api)
        draft = write_harness(target, api, ["ql.h"], analysis.archetype,
                              default_skeleton(analysis.archetype), rules=analysis.rules)
    assert "{0, 4, 4}" in draft.code, draft.code  # no flag, or read-only; never "free on close"
    source = tmp_path / "h.c"
    source.write_text(draft.code)
    built = build_harness(source, lib, tmp_path / "out")
    assert built.ok, built.log
    run = run_fuzzer(Path(str(built.fuzz_binary)), tmp_path / "work", seconds=3)
    assert run.crash is None, run.crash.excerpt
    assert run.stats.execs > 100
