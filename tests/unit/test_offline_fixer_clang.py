"""The offline fixer applies clang's fix-its first, then repairs tags, ``T **`` and opaque structs.

Diagnostics are the ones clang 14 printed for these harnesses (see ``test_clang_fixits``); the
test marked ``toolchain`` compiles the repaired harness again.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.offline.fixer import fix_harness
from fuzzkit.api import FunctionDecl
from fuzzkit.harness import DIAGNOSTIC_FLAGS
from tests.unit.test_clang_fixits import API, TAGLESS, TAGLESS_CLANG, prompt_errors, run_clang


def fix(code: str, errors: str, api: list[FunctionDecl] | None = None) -> tuple[str, list[str], list[str]]:
    r = fix_harness(code, errors, list(API if api is None else api), ["x.h"])
    return r.code, r.fixes, r.unresolved


def test_fixits_repair_every_tagless_declaration_in_one_round() -> None:
    code, fixes, unresolved = fix(TAGLESS, prompt_errors(TAGLESS_CLANG))
    assert "  struct x_ttl ttl;\n  struct x_ttl spare;\n  enum x_mode mode = X_FAST;" in code
    assert "x_query((const char *)data, size, &reply);" in code
    assert fixes == [
        "insert \"struct \" before x_ttl at line 5 (clang's fix-it)",
        "insert \"struct \" before x_ttl at line 6 (clang's fix-it)",
        "insert \"enum \" before x_mode at line 7 (clang's fix-it)",
        "insert \"&\" before reply at line 12 (clang's fix-it)",
    ]
    assert unresolved == []


def test_raw_clang_output_is_read_too() -> None:
    code, _, _ = fix(TAGLESS, TAGLESS_CLANG)
    assert code.count("struct x_ttl ") == 2 and "&reply" in code


def test_tags_without_fixits_come_from_the_message_and_the_prototypes() -> None:
    code = TAGLESS.replace("x_ttl_set(&spare, 1);", "void *p = malloc(sizeof(x_ttl));\n  free(p);")
    code = code.replace("x_mode_set(mode);", "x_mode_set((x_mode)data[0]);")
    errors = """\
harness.c:5:3: error: must use 'struct' tag to refer to type 'x_ttl'
harness.c:6:3: error: must use 'struct' tag to refer to type 'x_ttl'
harness.c:7:3: error: must use 'enum' tag to refer to type 'x_mode'
harness.c:10:27: error: use of undeclared identifier 'x_ttl'
harness.c:12:15: error: use of undeclared identifier 'x_mode'
harness.c:12:22: error: expected expression
"""
    fixed, fixes, unresolved = fix(code, errors)
    assert "struct x_ttl ttl;" in fixed and "sizeof(struct x_ttl)" in fixed
    assert "x_mode_set((enum x_mode)data[0]);" in fixed
    assert "add the struct tag to x_ttl at line 10 (it is struct x_ttl)" in fixes
    assert unresolved == []


def test_pointer_passed_for_a_double_pointer_gets_its_address_not_a_cast() -> None:
    errors = (
        "harness.c:12:37: warning: incompatible pointer types passing 'struct x_reply *' to parameter "
        "of type 'struct x_reply **' [-Wincompatible-pointer-types]\n"
    )
    code, fixes, _ = fix(TAGLESS, errors)
    assert "x_query((const char *)data, size, &reply);" in code
    assert fixes == ["pass &reply to x_query: the parameter is struct x_reply **, an out-parameter"]


def test_opaque_struct_by_value_becomes_a_pointer_from_its_constructor() -> None:
    code = TAGLESS.replace("  x_query((const char *)data, size, reply);\n", "").replace(
        "struct x_reply *reply = NULL;", "struct x_reply held;\n  int n = x_reply_count(&held);\n"
        "  struct x_reply *reply = NULL;")
    errors = "harness.c:8:18: error: variable has incomplete type 'struct x_reply'\n"
    fixed, fixes, unresolved = fix(code, errors)
    assert (
        "  struct x_reply *held = x_reply_new();\n  if (!held) return 0;\n"
        "  int n = x_reply_count(held);\n" in fixed
    )
    assert fixed.endswith("  x_reply_free(reply);\n  x_reply_free(held);\n  return 0;\n}\n")
    assert fixes[0] == (
        "declare held as struct x_reply * made by x_reply_new and release it with x_reply_free "
        "(struct x_reply is opaque)"
    )
    assert unresolved == []


def test_opaque_struct_filled_through_a_double_pointer_keeps_its_address() -> None:
    code = TAGLESS.replace("struct x_reply *reply = NULL;", "struct x_reply reply;").replace(
        "size, reply);", "size, &reply);").replace("x_reply_free(reply);", "x_reply_count(&reply);")
    errors = "harness.c:8:18: error: variable has incomplete type 'struct x_reply'\n"
    fixed, _, unresolved = fix(code, errors)
    assert "struct x_reply *reply = NULL;" in fixed and "size, &reply);" in fixed
    assert "x_reply_count(reply);" in fixed
    assert "if (reply) x_reply_free(reply);\n  return 0;" in fixed and "x_reply_new" not in fixed
    assert unresolved == []


def test_unsafe_warning_fixits_and_overlapping_ones_are_not_applied() -> None:
    code = 'int f(long n, int *p) {\n  printf("%d", n);\n  return *p;\n}\n'
    warn = (
        "h.c:2:16: warning: implicitly declaring library function 'printf' with type 'int (const char *, "
        "...)' [-Wimplicit-function-declaration]\n"
        '  fix-it: replace 2:11-2:13 with "%ld"\n'
    )
    fixed, fixes, _ = fix(code, warn, [])
    assert '"%d"' in fixed and "#include <stdio.h>" in fixed
    assert fixes == ["add #include <stdio.h> for printf"]
    both = (
        'h.c:3:10: error: e\n  fix-it: insert "(" at 3:10\n'
        'h.c:3:10: error: f\n  fix-it: replace 3:10-3:12 with "q"\n'
    )
    fixed, fixes, unresolved = fix(code, both, [])
    assert "return (*p;" in fixed and fixes == ["insert \"(\" at line 3 (clang's fix-it)"]
    assert unresolved == ["line 3: f"]


@pytest.mark.toolchain
def test_fixed_harness_passes_clang_after_one_round(tmp_path: Path) -> None:
    broken = TAGLESS.replace("struct x_reply *reply", "x_reply held;\n  struct x_reply *reply")
    broken = broken.replace("  return 0;", "  (void)sizeof(x_ttl);\n  return 0;")
    out = run_clang(tmp_path, broken, *DIAGNOSTIC_FLAGS)
    assert "error:" in out
    fixed, _, unresolved = fix(broken, prompt_errors(out))
    assert unresolved == []
    after = run_clang(tmp_path, fixed, *DIAGNOSTIC_FLAGS, "-Werror=incompatible-pointer-types")
    assert after == "", after


def test_tag_name_used_as_a_value_gets_no_tag() -> None:
    code = "int f(void) {\n  return x_ttl + 1;\n}\n"
    fixed, fixes, _ = fix(code, "h.c:2:10: error: use of undeclared identifier 'x_ttl'\n")
    assert "return x_ttl + 1;" in fixed
    assert not any("tag" in f for f in fixes)
