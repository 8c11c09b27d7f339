"""A call given an object of a kind its documentation does not accept is the harness's misuse.

``ak_comment_count`` is documented (``\\assert ... o->type == AK_TYPE_COMMENT``) for comment
objects only; it reads the object's union as a comment list. A harness making the object from a
type drawn from the input hands it a picture now and then, and the call reads a pixel count as a
pointer: a SEGV inside the library that is no library bug. The prepare step reads the condition
from the header's comment (the toolchain's facts), the crash report carries it, the offline
feasibility judge says harness misuse, and the repair checks the kind on the harness's argument,
after which the harness runs clean. The same crash with a harness that makes comment objects only
stays a library bug. Real clang builds and libFuzzer runs; invented library.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.crash_analyzer import report_text, stack_text
from agents.offline.crash_roles import judge_feasibility
from agents.offline.fixer_precondition import guard_precondition
from agents.offline.prompt_reader import read_prompt
from fuzzkit.api import FunctionDecl
from fuzzkit.crash import CrashReport
from fuzzkit.toolchain import Fuzzkit
from tests.toolchain.conftest import crash_of, header_facts, tiny_library

pytestmark = pytest.mark.toolchain

HEADER = """\
#ifndef AK_H
#define AK_H
#include <stddef.h>
typedef enum { AK_TYPE_PICTURE = 0, AK_TYPE_COMMENT = 1, AK_TYPE_PADDING = 2 } ak_type;
typedef struct { char **entries; unsigned count; } ak_comments;
typedef struct { unsigned long pixels; unsigned width; } ak_picture;
typedef struct ak_object {
  ak_type type;
  union { ak_comments comments; ak_picture picture; } data;
} ak_object;
/** Make an empty object of the given type; free it with ak_object_free(). */
ak_object *ak_object_new(ak_type type);
void ak_object_free(ak_object *object);
/** Add a comment to a COMMENT object.
 * \\param o     A COMMENT object.
 * \\assert
 *    \\code o != NULL \\endcode
 *    \\code o->type == AK_TYPE_COMMENT \\endcode
 */
int ak_comment_add(ak_object *o, const char *text, size_t length);
/** Count the non-empty comments of a COMMENT object.
 * \\assert
 *    \\code o != NULL \\endcode
 *    \\code o->type == AK_TYPE_COMMENT \\endcode
 */
unsigned ak_comment_count(const ak_object *o);
#endif
"""

SOURCE = """\
#include "ak.h"
#include <stdlib.h>
#include <string.h>
ak_object *ak_object_new(ak_type type) {
  ak_object *o = calloc(1, sizeof *o);
  if (o == NULL) return NULL;
  o->type = type;
  if (type == AK_TYPE_PICTURE) { o->data.picture.pixels = 0x4141414141ul; o->data.picture.width = 7; }
  return o;
}
void ak_object_free(ak_object *o) {
  if (o == NULL) return;
  if (o->type == AK_TYPE_COMMENT) {
    for (unsigned i = 0; i < o->data.comments.count; i++) free(o->data.comments.entries[i]);
    free(o->data.comments.entries);
  }
  free(o);
}
int ak_comment_add(ak_object *o, const char *text, size_t length) {
  char **grown = realloc(o->data.comments.entries, (o->data.comments.count + 1) * sizeof *grown);
  if (grown == NULL) return -1;
  o->data.comments.entries = grown;
  grown[o->data.comments.count] = malloc(length + 1);
  if (grown[o->data.comments.count] == NULL) return -1;
  memcpy(grown[o->data.comments.count], text, length);
  grown[o->data.comments.count][length] = 0;
  o->data.comments.count++;
  return 0;
}
unsigned ak_comment_count(const ak_object *o) {
  unsigned n = 0;
  for (unsigned i = 0; i < o->data.comments.count; i++) n += o->data.comments.entries[i][0] != 0;
  return n;
}
"""

ANY_KIND = """\
#include <stdint.h>
#include <stddef.h>
#include "ak.h"
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ak_object *obj = NULL;
  if (size < 1) return 0;
  obj = ak_object_new((ak_type)(data[0] % 3));
  if (obj == NULL) goto lf_cleanup;
  (void)ak_comment_count(obj);
  lf_cleanup: ;
  ak_object_free(obj);
  return 0;
}
"""


def _crash_record(crash: CrashReport, conditions: dict[str, list[str]]) -> dict[str, object]:
    """The run's crash record as the execution node keeps it (the documented conditions beside)."""
    return {**crash.to_dict(), "documented_conditions": conditions}


def _verdict(record: dict[str, object], code: str, api: list[FunctionDecl]) -> dict[str, object]:
    called = "\n".join(d.prototype() for d in api if f"{d.name}(" in code)
    prompt = (f"## Target function\n{api[3].prototype()}\n\n## Crash triage\n{report_text(record)}\n\n"
              f"## Stack\n{stack_text(record)}\n\n## Library functions in the stack\n```c\n"
              f"{api[3].prototype()}\n```\n\n## Library functions the harness calls\n```c\n{called}\n```\n\n"
              f"## Current harness\n```c\n{code}```\n")
    reply, _code = judge_feasibility(read_prompt("ROLE: crash_feasibility_analyzer", prompt))
    return json.loads(json.dumps(reply))


def test_a_call_given_an_object_of_another_kind_is_misuse_and_repaired(tmp_path: Path, cache: Path) -> None:
    lib = tiny_library(tmp_path / "ak", "ak", HEADER, SOURCE, cache)
    api = Fuzzkit().parse_api(lib)
    assert [d.name for d in api] == ["ak_object_new", "ak_object_free", "ak_comment_add", "ak_comment_count"]
    facts = header_facts(lib)  # the prepare step's facts, from the header's comments
    assert facts.conditions["ak_comment_count"] == ["o != NULL", "o->type == AK_TYPE_COMMENT"]
    assert facts.notes().object_kinds == {"ak_comment_add": ["o->type == AK_TYPE_COMMENT"],
                                          "ak_comment_count": ["o->type == AK_TYPE_COMMENT"]}
    conditions = {fn: facts.conditions[fn] for fn in ("ak_comment_count",)}

    crash = crash_of(ANY_KIND, lib, tmp_path / "v1")
    assert crash is not None and crash.kind == "SEGV" and crash.entry_function == "ak_comment_count", crash
    record = _crash_record(crash, conditions)
    shown = "documented conditions of ak_comment_count: o != NULL; o->type == AK_TYPE_COMMENT"
    assert shown in report_text(record)
    verdict = _verdict(record, ANY_KIND, api)
    assert verdict["verdict"] == "harness_misuse", verdict
    assert "o->type == AK_TYPE_COMMENT" in str(verdict["reasoning"])
    # Without the documented condition the same crash reads as the library's.
    assert _verdict(crash.to_dict(), ANY_KIND, api)["verdict"] == "library_bug"

    triage = report_text(record) + "\nstack:\n" + stack_text(record)
    fixed, how = guard_precondition(ANY_KIND, triage, api)
    assert how and "documentation asserts it" in how
    assert "if (!((obj)->type == AK_TYPE_COMMENT)) goto lf_cleanup;" in fixed, fixed
    assert crash_of(fixed, lib, tmp_path / "v2") is None
    assert guard_precondition(fixed, triage, api) == (fixed, None)  # it names the kind now: once

    # A harness that makes comment objects only, and still crashes inside the call: the library's.
    assert _verdict(record, ANY_KIND.replace("(ak_type)(data[0] % 3)", "AK_TYPE_COMMENT"), api)[
        "verdict"] == "library_bug"
