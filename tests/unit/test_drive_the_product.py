"""What the enhancer is offered next: the functions that work on what the target produced.

An invented database library: ``kv_prepare(kv_db *db, const char *sql, int n, kv_stmt **out)``
compiles a statement, and ``kv_step(kv_stmt *)`` runs it. The library runs statements of its
own while it opens a database, so coverage reports ``kv_step`` as reached before the harness
ever calls it on the fuzz input's statement; and a large API of functions on the database
handle, whose names share more of the target's, came first in header order and filled both the
API list and the uncovered list a prompt shows. The statement's functions come first now.
"""

from __future__ import annotations

import re

from agents.offline.improver import improve_harness
from agents.sections import MAX_API, ranked_api, relevant_api
from fuzzkit.api import FunctionDecl, Param
from nodes.enhancer import uncovered_text

TARGET = FunctionDecl("kv_prepare", "int", (Param("db", "kv_db *"), Param("sql", "const char *"),
                                            Param("n", "int"), Param("out", "kv_stmt **")))
STEP = FunctionDecl("kv_step", "int", (Param("s", "kv_stmt *"),))
BIND = FunctionDecl("kv_bind_int", "int", (Param("s", "kv_stmt *"), Param("i", "int"), Param("v", "int")))
FINALIZE = FunctionDecl("kv_finalize", "int", (Param("s", "kv_stmt *"),))
OPEN = FunctionDecl("kv_open", "int", (Param("path", "const char *"), Param("out", "kv_db **")))
CLOSE = FunctionDecl("kv_close", "int", (Param("db", "kv_db *"),))
# Functions on the database handle, named closer to the target than the statement's are.
ON_DB = [FunctionDecl(f"kv_pre_setting{i:03d}", "int", (Param("db", "kv_db *"), Param("x", "int")))
         for i in range(2 * MAX_API)]
API = [OPEN, CLOSE, *ON_DB, TARGET, BIND, FINALIZE, STEP]

HARNESS = """#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "kv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* @LF:SETUP */
  kv_db *db = NULL;
  kv_stmt *stmt = NULL;
  char *text = NULL;
  int result = 0;
  if (kv_open(":memory:", &db) != 0) goto lf_cleanup;
  text = (char *)malloc(size + 1);
  if (text == NULL) goto lf_cleanup;
  memcpy(text, data, size);
  text[size] = 0;
  /* @LF:CALL */
  result = kv_prepare(db, text, (int)size, &stmt);
  (void)result;
  /* @LF:USE */
  /* @LF:CLEANUP */
  lf_cleanup: ;
  if (stmt != NULL) kv_finalize(stmt);
  free(text);
  if (db != NULL) kv_close(db);
  return 0;
}
"""


def _state(uncovered: list[str], harness: str = HARNESS) -> dict:
    return {"target": TARGET.to_dict(), "api": [d.to_dict() for d in API], "harness_code": harness,
            "run": {"uncovered_functions": uncovered}}


def test_functions_on_the_targets_result_are_in_the_api_list_of_a_large_library() -> None:
    shown = {d.name for d in relevant_api(_state([]))}
    assert len(shown) == MAX_API
    assert {"kv_step", "kv_bind_int", "kv_finalize"} <= shown
    ranked = [d.name for d in ranked_api(_state([]))]
    assert ranked.index("kv_step") < ranked.index("kv_pre_setting000")


def test_a_function_on_the_result_is_offered_though_the_library_reached_it_itself() -> None:
    uncovered = [d.name for d in ON_DB] + ["kv_bind_int"]  # kv_step: reached by the library
    text = uncovered_text(_state(uncovered))
    lines = [line for line in text.splitlines() if line.startswith("- ")]
    assert lines[0] == "- int kv_step(kv_stmt *s);"  # needs nothing but the result: first
    assert lines[1] == "- int kv_bind_int(kv_stmt *s, int i, int v);"
    assert "kv_finalize" not in text  # the harness calls it already
    assert "Never reached:" in text and len(lines) == 25


def test_a_function_the_harness_already_calls_on_the_result_is_not_offered_again() -> None:
    called = HARNESS.replace("/* @LF:USE */", "/* @LF:USE */\n  if (stmt) kv_step(stmt);")
    text = uncovered_text(_state(["kv_bind_int"], called))
    assert "kv_step" not in text and "kv_bind_int" in text


def test_the_offline_improver_runs_the_compiled_result() -> None:
    names = [line[2:] for line in uncovered_text(_state([d.name for d in ON_DB])).splitlines()
             if line.startswith("- ")]
    decls = {d.prototype(): d.name for d in API}
    made = improve_harness(HARNESS, TARGET, API, [decls[n] for n in names])
    assert "kv_step" in made.added_calls
    assert re.search(r"\bkv_step\(\s*stmt\s*\)", made.code)


def test_a_function_that_makes_another_object_of_the_results_type_is_not_driving_it() -> None:
    """``kv_stmt_decode(kv_stmt **out, const uint8_t *bytes)`` reads bytes, not the result."""
    decode = FunctionDecl("kv_stmt_decode", "int",
                          (Param("out", "kv_stmt **"), Param("bytes", "const uint8_t *")))
    state = _state(["kv_stmt_decode", "kv_bind_int"])
    state["api"] = [*state["api"], decode.to_dict()]
    text = uncovered_text(state)
    product = text.split("Never reached:")[0]
    assert "kv_stmt_decode" not in product and "kv_stmt_decode" in text


def test_a_printer_known_by_its_shape_comes_before_another_parse_into_the_same_object() -> None:
    """``kv_stmt_info(char *buf, size_t size, const char *prefix, const kv_stmt *s)`` describes
    the whole statement; its name has no printing verb, its shape says what it does."""
    info = FunctionDecl("kv_stmt_info", "int", (
        Param("buf", "char *"), Param("size", "size_t"), Param("prefix", "const char *"),
        Param("s", "const kv_stmt *")))
    reparse = FunctionDecl("kv_prepare_again", "int", (Param("s", "kv_stmt *"), Param("sql", "const char *")))
    api = [*API, reparse, info]
    made = improve_harness(HARNESS, TARGET, api, ["kv_prepare_again", "kv_stmt_info"], max_new_calls=1)
    assert made.added_calls == ["kv_stmt_info"], made.code
