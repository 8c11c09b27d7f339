"""Leaks the harness caused through handles and the objects it still holds, never library bugs.

An invented database library: ``db_t`` is a handle (``typedef struct db_s *db_t``), made by
``db_open_ns`` (which makes it through the public ``db_open_mm``) and released by ``db_close``;
``db_prepare(db, sql, n, &stmt, &tail)`` hands back a statement released by ``db_finalize``,
and ``tail`` points into the caller's text. Three reports LogicFuzz once judged library bugs:

- a handle made twice into one variable (``p = db_open_ns(); p = db_open(); db_close(p)``):
  the first is lost by the harness (the handle was not seen as a pointer, so the maker's object
  counted as nothing handed back);
- the database's blocks leaked while a statement was never finalized: the library refuses to
  close a database with a live statement, so its blocks leak under ``db_open``, which the
  harness did release.
A block lost inside the library while the harness releases everything stays a library bug.
"""

from __future__ import annotations

from agents.offline.cdecl import parse_prototypes
from agents.offline.leak_owner import library_leak
from agents.offline.type_table import read_types, using
from tests.types_text import render_types

API = parse_prototypes("""
db_t db_open_ns(const char *name, char sep);
db_t db_open_mm(const char *name, const void *mem, const char *sep);
db_t db_open(const char *name);
int db_close(db_t db);
int db_prepare(db_t db, const char *sql, int n, struct db_stmt **stmt, const char **tail);
int db_step(struct db_stmt *stmt);
int db_finalize(struct db_stmt *stmt);
""")
BY_NAME = {d.name: d for d in API}
TYPES = render_types("""```c
typedef struct db_s *db_t;
```
Release functions:
- db_close releases db_t (parameter type)
- db_finalize releases struct db_stmt * (parameter type)
""")


def _stack(*frames: str) -> str:
    chain = ["malloc", *frames, "LLVMFuzzerTestOneInput"]
    return "\n".join(f"#{i} {f} db.c:{10 + i}" for i, f in enumerate(chain))


def _judge(harness: str, stack: str, public: list[str], called: list[str]) -> str:
    with using(read_types(TYPES, API)):
        return library_leak(harness, stack, [BY_NAME[n] for n in public], [BY_NAME[n] for n in called])


TWICE = """int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  db_t p = db_open_ns(NULL, '!');
  p = db_open(NULL);
  db_close(p);
  return 0;
}
"""


def test_a_handle_made_twice_into_one_variable_is_the_harnesss_leak() -> None:
    stack = _stack("db_alloc", "db_open_mm", "db_open_ns")
    assert _judge(TWICE, stack, ["db_open_mm", "db_open_ns"], ["db_open_ns", "db_open", "db_close"]) == ""
    # the public maker in the stack is no longer needed to see it: the reassignment is enough
    assert _judge(TWICE, _stack("db_alloc", "db_open_ns"), ["db_open_ns"], ["db_open_ns", "db_open"]) == ""
    once = TWICE.replace("  p = db_open(NULL);\n", "")
    assert _judge(once, _stack("db_alloc", "db_open_ns"), ["db_open_ns"], ["db_open_ns", "db_close"]) != ""


PREPARED = """int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  db_t db = NULL;
  struct db_stmt *stmt = NULL;
  const char *tail = NULL;
  db = db_open(":memory:");
  if (db == NULL) return 0;
  db_prepare(db, (const char *)data, (int)size, &stmt, &tail);
  if (stmt != NULL) db_step(stmt);
  FINALIZE
  db_close(db);
  return 0;
}
"""


def test_a_statement_never_finalized_makes_the_databases_leak_the_harnesss() -> None:
    stack = _stack("db_lookaside", "db_open")
    called = ["db_open", "db_prepare", "db_step", "db_close"]
    assert _judge(PREPARED.replace("  FINALIZE\n", ""), stack, ["db_open"], called) == ""
    finalized = PREPARED.replace("FINALIZE", "if (stmt != NULL) db_finalize(stmt);")
    assert _judge(finalized, stack, ["db_open"], [*called, "db_finalize"]) != ""  # lost inside the library


def test_the_repair_finalizes_the_statement_first_in_the_cleanup() -> None:
    from agents.offline.fixer_leak import release_kept_objects

    harness = PREPARED.replace("  FINALIZE\n", "").replace("  db_close(db);\n",
                                                            "  lf_cleanup: ;\n  db_close(db);\n")
    with using(read_types(TYPES, API)):
        fixed, added = release_kept_objects(harness, API, {"db_stmt": "db_finalize"})
    assert added == ["release stmt (from db_prepare) with db_finalize before returning"], added
    cleanup = fixed[fixed.index("lf_cleanup: ;"):]
    assert cleanup.index("db_finalize(stmt)") < cleanup.index("db_close(db)"), fixed  # before its database
    with using(read_types(TYPES, API)):
        again, more = release_kept_objects(fixed, API, {"db_stmt": "db_finalize"})
    assert more == [] and again == fixed  # released already: nothing more
