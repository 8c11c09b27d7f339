"""Prototype parsing and C type classification of the offline engine."""

from __future__ import annotations

import pytest

from agents.offline import ckinds, type_table
from agents.offline.cdecl import parse_prototype, parse_prototypes
from agents.offline.type_table import read_types, using
from fuzzkit.api import FunctionDecl, Param
from tests.types_text import render_types
from tests.unit.test_offline_data import types_text


@pytest.fixture()
def real_types() -> None:
    """The Types tables of the three shipped libraries' headers, as prepare renders them."""
    merged = render_types("\n".join(types_text(n) for n in ("cjson", "zlib", "yaml")))  # one block per kind
    type_table._ACTIVE.set(read_types(merged))


@pytest.mark.parametrize(
    ("line", "name", "ret", "params"),
    [
        ("cJSON * cJSON_Parse(const char * value);", "cJSON_Parse", "cJSON *", [("value", "const char *")]),
        (
            "cJSON *cJSON_ParseWithLength(const char *value, size_t buffer_length);",
            "cJSON_ParseWithLength",
            "cJSON *",
            [("value", "const char *"), ("buffer_length", "size_t")],
        ),
        (
            "int inflate(z_streamp strm, int flush);",
            "inflate",
            "int",
            [("strm", "z_streamp"), ("flush", "int")],
        ),
        (
            "int yaml_parser_initialize(yaml_parser_t * parser);",
            "yaml_parser_initialize",
            "int",
            [("parser", "yaml_parser_t *")],
        ),
        (
            "uLong crc32(uLong crc, const Bytef * buf, uInt len);",
            "crc32",
            "uLong",
            [("crc", "uLong"), ("buf", "const Bytef *"), ("len", "uInt")],
        ),
        (
            "cJSON *cJSON_GetObjectItem(const cJSON *const object, const char *const string);",
            "cJSON_GetObjectItem",
            "cJSON *",
            [("object", "const cJSON *const"), ("string", "const char *const")],
        ),
        (
            "cJSON_bool cJSON_ParseWithOpts(const char *value, const char **return_parse_end, "
            "cJSON_bool require_null_terminated);",
            "cJSON_ParseWithOpts",
            "cJSON_bool",
            [
                ("value", "const char *"),
                ("return_parse_end", "const char **"),
                ("require_null_terminated", "cJSON_bool"),
            ],
        ),
        ("const char *zlibVersion(void);", "zlibVersion", "const char *", []),
        (
            "gzFile gzopen(const char *, const char *);",
            "gzopen",
            "gzFile",
            [("arg0", "const char *"), ("arg1", "const char *")],
        ),
        (
            "CJSON_PUBLIC(cJSON *) cJSON_Duplicate(const cJSON *item, cJSON_bool recurse);",
            "cJSON_Duplicate",
            "cJSON *",
            [("item", "const cJSON *"), ("recurse", "cJSON_bool")],
        ),
        (
            "void f(struct foo *p, unsigned int n, char buf[16]);",
            "f",
            "void",
            [("p", "struct foo *"), ("n", "unsigned int"), ("buf", "char[16]")],  # as clang spells it
        ),
    ],
)
def test_parse_prototype_reads_names_and_clang_spelled_types(
    line: str, name: str, ret: str, params: list[tuple[str, str]]
) -> None:
    decl = parse_prototype(line)
    assert decl.name == name
    assert decl.return_type == ret
    assert [(p.name, p.type) for p in decl.params] == params


def test_function_pointer_params_keep_their_name_and_signature() -> None:
    decl = parse_prototype("void set_alloc(void *(*malloc_fn)(size_t sz), void (*free_fn)(void *));")
    assert [p.name for p in decl.params] == ["malloc_fn", "free_fn"]
    assert decl.params[0].type == "void * (*)(size_t sz)"
    assert ckinds.is_function_pointer(decl.params[1].type)


def test_variadic_dots_are_dropped() -> None:
    decl = parse_prototype("int gzprintf(gzFile file, const char *format, ...);")
    assert [p.name for p in decl.params] == ["file", "format"]


def test_round_trip_through_fuzzkit_rendering() -> None:
    original = FunctionDecl(
        "compress2",
        "int",
        (
            Param("dest", "Bytef *"),
            Param("destLen", "uLongf *"),
            Param("source", "const Bytef *"),
            Param("sourceLen", "uLong"),
            Param("level", "int"),
        ),
    )
    assert parse_prototype(original.prototype()) == original


def test_not_a_prototype_says_what_was_wrong() -> None:
    with pytest.raises(ValueError, match="not a C function prototype"):
        parse_prototype("typedef int foo;")


def test_parse_prototypes_skips_noise_and_duplicates() -> None:
    text = """
    /* comment */
    #define X 1
    - cJSON *cJSON_Parse(const char *value);
    int  inflate ( z_streamp strm ,int flush ) ;
    cJSON *cJSON_Parse(const char *value);
    typedef struct z_stream_s z_stream;
    """
    assert [d.name for d in parse_prototypes(text)] == ["cJSON_Parse", "inflate"]


@pytest.mark.parametrize(
    ("ctype", "expected"),
    [
        ("const char *", {"string", "pointer", "bytes"}),
        ("char *", {"string", "pointer", "bytes"}),
        ("const Bytef *", {"bytes", "pointer"}),
        ("voidpc", {"bytes", "pointer"}),
        ("unsigned char *", {"bytes", "pointer"}),
        ("z_streamp", {"struct", "pointer"}),
        ("yaml_parser_t *", {"struct", "pointer"}),
        ("const cJSON *const", {"struct", "pointer"}),
        ("FILE *", {"file", "pointer"}),
        ("uInt", {"integer"}),
        ("cJSON_bool", {"integer", "bool"}),
        ("yaml_encoding_t", {"enum"}),
        ("double", {"float"}),
        ("yaml_read_handler_t *", {"fnptr"}),
        ("in_func", {"fnptr"}),
        ("int (*)(void *, unsigned char *, size_t)", {"fnptr"}),
    ],
)
@pytest.mark.usefixtures("real_types")
def test_type_helpers_classify_harness_relevant_kinds(ctype: str, expected: set[str]) -> None:
    found = {
        name
        for name, check in {
            "string": ckinds.is_string,
            "pointer": ckinds.is_pointer,
            "bytes": ckinds.is_bytes,
            "struct": ckinds.is_struct_pointer,
            "file": ckinds.is_file,
            "integer": ckinds.is_integer,
            "bool": ckinds.is_bool,
            "enum": ckinds.is_enum_like,
            "float": ckinds.is_float,
            "fnptr": ckinds.is_function_pointer,
        }.items()
        if check(ctype)
    }
    assert found == expected


@pytest.mark.usefixtures("real_types")
def test_pointee_struct_type_and_const_target() -> None:
    assert ckinds.pointee("const char *") == "const char"
    assert ckinds.struct_type("z_streamp") == "z_stream"
    assert ckinds.struct_type("const cJSON *const") == "cJSON"
    assert ckinds.struct_type("const char *") is None
    assert ckinds.is_const_target("const cJSON *const")
    assert not ckinds.is_const_target("cJSON *")


@pytest.mark.usefixtures("real_types")
def test_length_and_out_params() -> None:
    assert ckinds.is_length(Param("buffer_length", "size_t"))
    assert ckinds.is_length(Param("len", "uInt"))
    assert not ckinds.is_length(Param("flush", "int"))
    assert not ckinds.is_length(Param("recurse", "cJSON_bool"))
    assert ckinds.is_out_param(Param("destLen", "uLongf *"))
    assert ckinds.is_out_param(Param("return_parse_end", "const char **"))
    assert not ckinds.is_out_param(Param("value", "const char *"))


INVENTED_TYPES = """\
```c
typedef unsigned char acme_u8;
typedef long acme_ssize;
typedef acme_u8 acme_byte;  /* unsigned char */
typedef int acme_bool;
typedef struct acme_ctx acme_ctx;
typedef acme_ctx *acme_ctx_p;  /* struct acme_ctx * */
typedef struct acme_file_s *acme_file;
typedef int (*acme_read_cb)(void *, acme_u8 *, acme_ssize);
typedef enum acme_mode_e acme_mode;
struct acme_ctx { const acme_u8 *next_in; acme_ssize avail_in; };
struct acme_ttl { int ttl; };
enum acme_mode_e { ACME_FAST = 0, ACME_SLOW = 1 };
```
"""


@pytest.mark.parametrize(
    ("ctype", "unknown", "known"),
    [
        ("const acme_u8 *", {"pointer", "struct"}, {"bytes", "pointer"}),
        ("acme_byte *", {"pointer", "struct"}, {"bytes", "pointer"}),
        ("acme_ssize", set(), {"integer"}),
        ("acme_bool", set(), {"integer", "bool"}),
        ("acme_ctx_p", set(), {"struct", "pointer"}),
        ("acme_read_cb", {"fnptr"}, {"fnptr"}),
        ("acme_mode", {"enum"}, {"enum"}),
    ],
)
def test_library_typedefs_are_known_only_from_the_types_section(
    ctype: str, unknown: set[str], known: set[str]
) -> None:
    checks = {"pointer": ckinds.is_pointer, "bytes": ckinds.is_bytes, "struct": ckinds.is_struct_pointer,
              "integer": ckinds.is_integer, "bool": ckinds.is_bool, "enum": ckinds.is_enum_like,
              "fnptr": ckinds.is_function_pointer}
    assert {n for n, c in checks.items() if c(ctype)} == unknown
    with using(read_types(render_types(INVENTED_TYPES))):
        assert {n for n, c in checks.items() if c(ctype)} == known


def test_pointer_typedefs_expand_but_handle_typedefs_stay() -> None:
    with using(read_types(render_types(INVENTED_TYPES))):
        assert ckinds.resolve("acme_ctx_p") == "acme_ctx *"
        assert ckinds.struct_type("acme_ctx_p") == "acme_ctx"
        assert ckinds.resolve("acme_file") == "acme_file"
        assert ckinds.is_length(Param("len", "acme_ssize"))
    assert ckinds.resolve("acme_ctx_p") == "acme_ctx_p"
