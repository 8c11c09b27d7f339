"""Clang's fix-its: parsed with their diagnostic and shown in the enhancer's prompt.

The tests marked ``toolchain`` run clang 14 on a small C file and use its real output; the
others use text captured from those runs, so they fail the same way without a compiler.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from agents.offline.cdecl import parse_prototypes
from agents.offline.fixer import parse_diagnostics
from fuzzkit.diagnostics import Diagnostic, FixIt, parse_compiler_output
from fuzzkit.harness import DIAGNOSTIC_FLAGS
from nodes.build import errors_text

LIB_H = """\
#include <stddef.h>
struct x_ttl { int seconds; };
struct x_reply;
enum x_mode { X_FAST, X_SAFE };
int x_ttl_set(struct x_ttl *ttl, int seconds);
int x_query(const char *name, size_t len, struct x_reply **out);
struct x_reply *x_reply_new(void);
int x_reply_count(const struct x_reply *reply);
void x_reply_free(struct x_reply *reply);
int x_mode_set(enum x_mode mode);
"""

API = parse_prototypes("\n".join(line for line in LIB_H.splitlines() if "(" in line))

# Three type names written without their tag, a T * for a T **, and an opaque struct by value.
TAGLESS = """\
#include <stdint.h>
#include <stddef.h>
#include "x.h"
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  x_ttl ttl;
  x_ttl spare;
  x_mode mode = X_FAST;
  struct x_reply *reply = NULL;
  x_ttl_set(&ttl, (int)size);
  x_ttl_set(&spare, 1);
  x_mode_set(mode);
  x_query((const char *)data, size, reply);
  x_reply_free(reply);
  return 0;
}
"""

# clang 14 -fdiagnostics-parseable-fixits on TAGLESS (excerpts and carets as clang prints them).
TAGLESS_CLANG = """\
/build/v0/harness.c:5:3: error: must use 'struct' tag to refer to type 'x_ttl'
  x_ttl ttl;
  ^
  struct 
fix-it:"/build/v0/harness.c":{5:3-5:3}:"struct "
/build/v0/harness.c:6:3: error: must use 'struct' tag to refer to type 'x_ttl'
  x_ttl spare;
  ^
  struct 
fix-it:"/build/v0/harness.c":{6:3-6:3}:"struct "
/build/v0/harness.c:7:3: error: must use 'enum' tag to refer to type 'x_mode'
  x_mode mode = X_FAST;
  ^
  enum 
fix-it:"/build/v0/harness.c":{7:3-7:3}:"enum "
/build/v0/harness.c:12:37: warning: incompatible pointer types passing 'struct x_reply *' to parameter of type 'struct x_reply **'; take the address with & [-Wincompatible-pointer-types]
  x_query((const char *)data, size, reply);
                                    ^~~~~
                                    &
fix-it:"/build/v0/harness.c":{12:37-12:37}:"&"
/build/x.h:6:55: note: passing argument to parameter 'out' here
int x_query(const char *name, size_t len, struct x_reply **out);
                                                      ^
1 warning and 3 errors generated.
"""  # noqa: E501, W291


def prompt_errors(clang_output: str) -> str:
    """The Compile errors section the enhancer gets for this output."""
    return errors_text(parse_compiler_output(clang_output), clang_output, "harness.c")


def run_clang(tmp_path: Path, code: str, *flags: str) -> str:
    (tmp_path / "x.h").write_text(LIB_H)
    source = tmp_path / "harness.c"
    source.write_text(code)
    cmd = ["clang", *flags, "-fsyntax-only", f"-I{tmp_path}", str(source)]
    return subprocess.run(cmd, capture_output=True, text=True).stderr


# ----- parsing -----


def test_fixits_stay_with_their_diagnostic_and_name_only_the_file() -> None:
    diags = parse_compiler_output(TAGLESS_CLANG)
    assert [len(d.fixits) for d in diags] == [1, 1, 1, 1, 0]
    assert diags[0].fixits == (FixIt("harness.c", 5, 3, 5, 3, "struct "),)
    assert diags[3].fixits[0].text == "&"
    assert diags[4].severity == "note" and diags[4].fixits == ()
    again = Diagnostic.from_dict(json.loads(json.dumps(diags[0].to_dict())))
    assert again == diags[0]


def test_fixit_text_is_unescaped_and_each_kind_is_described() -> None:
    out = 'h.c:3:9: error: x\nfix-it:"h.c":{3:9-3:12}:"a\\"b\\\\n"\nfix-it:"h.c":{4:1-4:5}:""\n'
    (diag,) = parse_compiler_output(out)
    assert diag.fixits[0].text == 'a"b\\n'
    assert diag.fixits[0].describe("h.c") == 'fix-it: replace 3:9-3:12 with "a\\"b\\\\n"'
    assert diag.fixits[1].describe("/elsewhere/h.c") == "fix-it: remove 4:1-4:5"
    assert FixIt("x.h", 2, 1, 2, 1, "int ").describe("h.c") == 'fix-it: insert "int " at x.h:2:1'


def test_prompt_shows_fixits_under_their_error_and_serious_warnings_after() -> None:
    text = prompt_errors(TAGLESS_CLANG)
    assert text.splitlines()[:2] == [
        "harness.c:5:3: error: must use 'struct' tag to refer to type 'x_ttl'",
        '  fix-it: insert "struct " at 5:3',
    ]
    assert "/build" not in text
    # A T * passed for a T ** breaks at run time: the same round must see it.
    assert "harness.c:12:37: warning: incompatible pointer types" in text
    assert text.endswith('  fix-it: insert "&" at 12:37')
    assert "note:" not in text


def test_offline_reader_keeps_harness_fixits_only() -> None:
    header_fix = 'h.c:2:1: error: e\nfix-it:"x.h":{1:1-1:1}:"int "\n  fix-it: insert "(" at 2:1\n'
    (diag,), _ = parse_diagnostics(header_fix)
    assert diag.fixits == [FixIt("h.c", 2, 1, 2, 1, "(")]
    diags, _ = parse_diagnostics(prompt_errors(TAGLESS_CLANG))
    assert [d.fixits[0].text for d in diags] == ["struct ", "struct ", "enum ", "&"]


@pytest.mark.toolchain
def test_build_flags_make_clang_print_parseable_fixits(tmp_path: Path) -> None:
    out = run_clang(tmp_path, TAGLESS, *DIAGNOSTIC_FLAGS)
    diags = parse_compiler_output(out)
    errors = [d for d in diags if d.severity == "error"]
    assert [(d.line, d.fixits) for d in errors] == [
        (5, (FixIt("harness.c", 5, 3, 5, 3, "struct "),)),
        (6, (FixIt("harness.c", 6, 3, 6, 3, "struct "),)),
        (7, (FixIt("harness.c", 7, 3, 7, 3, "enum "),)),
    ]
    assert parse_compiler_output(run_clang(tmp_path, TAGLESS)) == [
        Diagnostic(d.file, d.line, d.column, d.severity, d.message) for d in diags
    ]
