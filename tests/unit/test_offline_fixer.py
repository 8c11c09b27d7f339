"""The compile-error fixer on real clang 14 / GNU ld messages (captured from real builds)."""

from __future__ import annotations

from agents.offline.fixer import fix_harness, parse_diagnostics
from agents.offline.synth_guide import read_guidance
from fuzzkit.guidance_facts import Rule
from tests.unit.test_offline_data import api

CJSON_BROKEN = """\
#include <stdint.h>
#include "cJSON.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0;
  cJSON *json = cJSON_Pars(text);
  cJSON *j2 = cJSON_ParseWithLength(data, size);
  cJSON *j3 = cJSON_ParseWithLength(text);
  char *p = cJSON_Print(json, 1);
  bool ok = cJSON_IsObject(json);
  cJSON_Delete(j2); cJSON_Delete(j3);
  cJSON_free(p);
  cJSON_Delete(json);
  free(text);
  return ok;
}
"""
CJSON_ERRORS = """\
harness.c:5:16: warning: implicitly declaring library function 'malloc' with type 'void *(unsigned long)' [-Wimplicit-function-declaration]
  char *text = malloc(size + 1);
               ^
harness.c:5:16: note: include the header <stdlib.h> or explicitly provide a declaration for 'malloc'
harness.c:7:3: warning: implicitly declaring library function 'memcpy' with type 'void *(void *, const void *, unsigned long)' [-Wimplicit-function-declaration]
harness.c:9:17: warning: implicit declaration of function 'cJSON_Pars' is invalid in C99 [-Wimplicit-function-declaration]
harness.c:9:10: warning: incompatible integer to pointer conversion initializing 'cJSON *' (aka 'struct cJSON *') with an expression of type 'int' [-Wint-conversion]
harness.c:10:37: warning: passing 'const uint8_t *' (aka 'const unsigned char *') to parameter of type 'const char *' converts between pointers to integer types where one is of the unique plain 'char' type and the other is not [-Wpointer-sign]
harness.c:11:41: error: too few arguments to function call, expected 2, have 1
cJSON.h:149:23: note: 'cJSON_ParseWithLength' declared here
harness.c:12:31: error: too many arguments to function call, expected single argument 'item', have 2 arguments
harness.c:13:3: error: use of undeclared identifier 'bool'
harness.c:17:3: warning: implicitly declaring library function 'free' with type 'void (void *)' [-Wimplicit-function-declaration]
6 warnings and 3 errors generated.
"""  # noqa: E501


def cjson_fix() -> tuple[str, list[str], list[str]]:
    r = fix_harness(CJSON_BROKEN, CJSON_ERRORS, list(api("cjson")), ["cJSON.h"])
    return r.code, r.fixes, r.unresolved


def test_missing_libc_includes_are_added_from_the_table() -> None:
    code, fixes, _ = cjson_fix()
    for header in ("<stdlib.h>", "<string.h>", "<stdbool.h>"):
        assert f"#include {header}" in code
    assert "add #include <stdlib.h> for malloc" in fixes
    assert "add #include <stdbool.h> for bool" in fixes


def test_misspelled_api_name_becomes_the_closest_one() -> None:
    code, fixes, unresolved = cjson_fix()
    assert "cJSON_Parse(text)" in code and "cJSON_Pars(" not in code
    assert "replace cJSON_Pars with cJSON_Parse (closest API name)" in fixes
    assert unresolved == []  # the int-conversion warning goes away with the rename


def test_argument_counts_are_rebuilt_from_the_prototype() -> None:
    code, fixes, _ = cjson_fix()
    assert "cJSON_ParseWithLength(text, (size_t)strlen(text))" in code
    assert "cJSON_Print(json);" in code
    assert any(f.startswith("call cJSON_Print with its 1 declared arguments") for f in fixes)


def test_pointer_sign_mismatch_gets_the_parameter_cast() -> None:
    code, fixes, _ = cjson_fix()
    assert "cJSON_ParseWithLength((const char *)(data), size)" in code
    assert "cast argument 1 of cJSON_ParseWithLength to (const char *)" in fixes


ZLIB_BROKEN = """\
#include <stdint.h>
#include <stddef.h>
#include "zlib.h"
int uncompress(Bytef *dest, uLongf *destLen, const Bytef *source, int sourceLen);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uLongf n = 100;
  unsigned char out[100];
  int r = uncompress(out, &n, data, size);
  if (r != Z_OK) goto done;
  r = inflatee(NULL, 0);
  return 0;
}
"""
ZLIB_ERRORS = """\
harness.c:4:5: error: conflicting types for 'uncompress'
zlib.h:1258:21: note: previous declaration is here
harness.c:10:7: warning: implicit declaration of function 'inflatee' is invalid in C99 [-Wimplicit-function-declaration]
harness.c:9:23: error: use of undeclared label 'done'
"""  # noqa: E501


def test_redeclaration_label_and_closest_name() -> None:
    r = fix_harness(ZLIB_BROKEN, ZLIB_ERRORS, list(api("zlib")), ["zlib.h"])
    assert "int uncompress(Bytef" not in r.code
    assert "remove the redeclaration of uncompress (the header declares it)" in r.fixes
    assert "  done: ;\n  return 0;" in r.code
    assert "r = inflate(NULL, 0);" in r.code


def test_missing_return_is_added_to_the_right_function() -> None:
    code = "int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {\n  if (size) {\n"
    code += "    while (size) size--;\n  }\n}\n"
    errors = (
        "harness.c:5:1: warning: non-void function does not return a value in all control "
        "paths [-Wreturn-type]\n"
    )
    r = fix_harness(code, errors, list(api("yaml")), ["yaml.h"])
    assert r.code.endswith("  }\n  return 0;\n}\n")
    assert r.fixes == ["add return 0 at the end of LLVMFuzzerTestOneInput"]


def test_undeclared_library_type_and_macro_bring_the_library_header() -> None:
    code = "#include <stdint.h>\n#include <stddef.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, "
    code += "size_t n) {\n  z_stream strm;\n  int rc = inflateInit(&strm);\n  return rc == Z_OK;\n}\n"
    errors = """\
harness.c:4:3: error: use of undeclared identifier 'z_stream'
harness.c:5:12: warning: implicit declaration of function 'inflateInit' is invalid in C99 [-Wimplicit-function-declaration]
harness.c:5:25: error: use of undeclared identifier 'strm'
harness.c:6:16: error: use of undeclared identifier 'Z_OK'
"""  # noqa: E501
    r = fix_harness(code, errors, list(api("zlib")), ["zlib.h"])
    assert r.code.count('#include "zlib.h"') == 1
    assert "inflateInit(&strm)" in r.code  # a macro of zlib.h: not renamed to inflateInit_
    assert r.fixes == ['add #include "zlib.h" for z_stream']


def test_wrong_header_path_is_replaced_by_the_known_header() -> None:
    code = '#include <stddef.h>\n#include "cjson/cJSON.h"\nint x;\n'
    errors = "harness.c:2:10: fatal error: 'cjson/cJSON.h' file not found\n"
    r = fix_harness(code, errors, list(api("cjson")), ["cJSON.h"])
    assert '#include "cJSON.h"' in r.code and "cjson/" not in r.code
    assert r.fixes == ['include "cJSON.h" instead of "cjson/cJSON.h"']


def test_incompatible_initialization_and_assignment_are_cast() -> None:
    code = """\
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  z_stream strm = {0};
  int *p = &strm;
  strm.next_in = (const Bytef *)data;
  return 0;
}
"""
    errors = """\
h.c:3:8: warning: incompatible pointer types initializing 'int *' with an expression of type 'z_stream *' (aka 'struct z_stream_s *') [-Wincompatible-pointer-types]
h.c:4:16: warning: assigning to 'Bytef *' (aka 'unsigned char *') from 'const Bytef *' (aka 'const unsigned char *') discards qualifiers [-Wincompatible-pointer-types-discards-qualifiers]
"""  # noqa: E501
    r = fix_harness(code, errors, list(api("zlib")), ["zlib.h"])
    assert "int *p = (int *)(&strm);" in r.code
    assert "strm.next_in = (Bytef *)((const Bytef *)data);" in r.code


def test_missing_semicolon_is_inserted_where_clang_points() -> None:
    code = "void f(void) {\n  int a = 1\n  a++;\n}\n"
    r = fix_harness(code, "h.c:2:12: error: expected ';' at end of declaration\n", [], [])
    assert "int a = 1;\n" in r.code


def test_linker_undefined_reference_to_a_non_api_function_is_removed() -> None:
    code = """\
#include <stdint.h>
#include <stddef.h>
int zlib_crc_wrong(int);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  zlib_crc_wrong((int)size);
  return zlib_crc_wrong(1) > 0;
}
"""
    link = (
        "/usr/bin/ld: h.o: in function `LLVMFuzzerTestOneInput':\n"
        "h.c:(.text+0x5f): undefined reference to `zlib_crc_wrong'\n"
        "clang: error: linker command failed with exit code 1 (use -v to see invocation)\n"
    )
    r = fix_harness(code, link, list(api("zlib")), ["zlib.h"])
    assert "zlib_crc_wrong" not in r.code.replace("zlib_crc_wrong is not in the library", "")
    assert "return 0 > 0;" in r.code
    assert r.fixes == ["remove the call to zlib_crc_wrong: not in the linked library"]


def test_unlinked_api_function_is_reported_not_hidden() -> None:
    r = fix_harness("int x;", "undefined reference to `cJSON_Parse'", list(api("cjson")), [])
    assert r.code == "int x;"
    assert "not linked" in r.unresolved[0]


def test_known_fixes_apply_before_diagnostics() -> None:
    code = "#include <stdint.h>\nint f(void) { return cJSON_Pars(0) != 0; }\n"
    r = fix_harness(
        code,
        "",
        list(api("cjson")),
        ["cJSON.h"],
        known_fixes=[
            Rule(kind="include", name="<stdlib.h>", text="add #include <stdlib.h> for malloc"),
            Rule(kind="rename", name="cJSON_Pars", then="cJSON_Parse"),
        ],
    )
    assert "#include <stdlib.h>" in r.code and "cJSON_Parse(0)" in r.code
    assert len(r.fixes) == 2


def test_the_fixes_come_back_as_rules_a_later_draft_repeats() -> None:
    r = fix_harness(CJSON_BROKEN, CJSON_ERRORS, list(api("cjson")), ["cJSON.h"])
    guide = read_guidance(r.rules, list(api("cjson")))
    assert "<stdlib.h>" in guide.includes
    assert guide.renames == {"cJSON_Pars": "cJSON_Parse"}


def test_unknown_messages_are_reported_as_unresolved() -> None:
    r = fix_harness("int x;", "h.c:1:1: error: something clang never says\n", [], [])
    assert r.unresolved == ["line 1: something clang never says"]
    r = fix_harness("int x;", "make: nothing here\n", [], [])
    assert r.unresolved and r.fixes == []


def test_fixer_is_deterministic() -> None:
    first = fix_harness(CJSON_BROKEN, CJSON_ERRORS, list(api("cjson")), ["cJSON.h"])
    again = fix_harness(CJSON_BROKEN, CJSON_ERRORS, list(api("cjson")), ["cJSON.h"])
    assert first == again


def test_parse_diagnostics_keeps_harness_errors_and_serious_warnings() -> None:
    diags, links = parse_diagnostics(CJSON_ERRORS + "harness.c:3:3: warning: unused variable 'x'")
    assert [d.line for d in diags][:3] == [11, 12, 13]  # errors first
    assert all("unused variable" not in d.message for d in diags)
    assert links == []
