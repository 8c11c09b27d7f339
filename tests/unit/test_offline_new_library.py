"""Generic rules that let the offline engine handle libraries it was never tuned for.

Each test states one rule on a small API written the way real headers spell it (lz4-style
codecs and opaque contexts, jansson-style values), never a library-specific special case.
"""

from __future__ import annotations

import re

from agents.offline import ckinds
from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.fixer import fix_harness
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.synth_api import ApiIndex
from agents.offline.synth_roles import roles
from agents.offline.synth_vocab import transfers_ownership
from fuzzkit.api import FunctionDecl
from tests.unit.test_offline_data import api as shipped_api

CODEC = """\
int pk_packBound(int inputSize);
int pk_pack(const char *src, char *dst, int srcSize, int dstCapacity);
int pk_unpack(const char *src, char *dst, int compressedSize, int dstCapacity);
int pk_pack_extState(void *state, const char *src, char *dst, int srcSize, int dstCapacity, int level);
int pk_pack_destSize(const char *src, char *dst, int *srcSizePtr, int targetDstSize);
int pk_pack_continue(pk_stream_t *stream, const char *source, char *dest, int inputSize);
pk_stream_t *pk_createStream(void);
int pk_freeStream(pk_stream_t *stream);
size_t pk_packFrameBound(size_t srcSize, const pk_prefs_t *prefs);
size_t pk_packFrame(void *dstBuffer, size_t dstCapacity, const void *srcBuffer, size_t srcSize, const pk_prefs_t *prefs);
unsigned pk_getVersion(void);
unsigned pk_isError(pk_errorCode_t code);
pk_errorCode_t pk_createDecoder(pk_dctx **dctxPtr, unsigned version);
pk_errorCode_t pk_freeDecoder(pk_dctx *dctx);
size_t pk_decode(pk_dctx *dctx, void *dstBuffer, size_t *dstSizePtr, const void *srcBuffer, size_t *srcSizePtr);
"""  # noqa: E501

VALUES = """\
json_t *json_loads(const char *input, size_t flags, json_error_t *error);
json_t *json_loadb(const char *buffer, size_t buflen, size_t flags, json_error_t *error);
json_t *json_load_file(const char *path, size_t flags, json_error_t *error);
json_t *json_string(const char *value);
json_t *json_string_nocheck(const char *value);
json_t *json_object(void);
json_t *json_object_get(const json_t *object, const char *key);
json_t *json_object_iter_value(void *iter);
void json_delete(json_t *json);
size_t json_array_size(const json_t *array);
char *json_dumps(const json_t *json, size_t flags);
int json_object_set_new(json_t *object, const char *key, json_t *value);
int json_array_append_new(json_t *array, json_t *value);
"""


def api(text: str) -> list[FunctionDecl]:
    return parse_prototypes(text)


def fn(text: str, name: str) -> FunctionDecl:
    return next(f for f in api(text) if f.name == name)


def harness(text: str, name: str, headers: tuple[str, ...] = ("pk.h",)) -> str:
    decls = api(text)
    target = fn(text, name)
    analysis = analyze_function(target, decls)
    code = write_harness(
        target,
        decls,
        list(headers),
        analysis.archetype,
        default_skeleton(analysis.archetype),
        rules=analysis.rules,
    ).code
    body = code[code.index("int LLVMFuzzerTestOneInput") :]
    return re.sub(r"/\*.*?\*/", "", body, flags=re.S)


def kinds(text: str, name: str) -> list[tuple[str, str, int | None]]:
    idx = ApiIndex(api(text))
    return [(r.kind, r.param.name, r.pair) for r in roles(fn(text, name), idx)]


# ----- buffers and their lengths ---------------------------------------------------------------


def test_buffers_listed_before_their_lengths_pair_by_name_then_order() -> None:
    assert kinds(CODEC, "pk_unpack") == [
        ("bytes", "src", 2), ("outbuf", "dst", 3), ("len", "compressedSize", 0), ("outlen", "dstCapacity", 1),
    ]  # fmt: skip
    b = harness(CODEC, "pk_unpack")
    assert "pk_unpack((const char *)data, (char *)out_buf, (int)size, (int)out_cap)" in b
    assert "lf_strndup" not in b  # the input has a length: no NUL-terminated copy


def test_a_work_area_before_the_buffers_gets_no_length() -> None:
    assert kinds(CODEC, "pk_pack_extState")[:5] == [
        ("scratch", "state", None), ("bytes", "src", 3), ("outbuf", "dst", 4),
        ("len", "srcSize", 1), ("outlen", "dstCapacity", 2),
    ]  # fmt: skip


def test_length_pointers_pair_by_name_too() -> None:
    assert kinds(CODEC, "pk_pack_destSize") == [
        ("bytes", "src", 2), ("outbuf", "dst", 3),
        ("inlen_ptr", "srcSizePtr", 0), ("outlen", "targetDstSize", 1),
    ]  # fmt: skip


def test_one_length_after_input_and_output_measures_the_input() -> None:
    assert kinds(CODEC, "pk_pack_continue") == [
        ("object", "stream", None), ("bytes", "source", 3), ("outbuf", "dest", None), ("len", "inputSize", 1),
    ]  # fmt: skip
    # ... unless its name says it is the output's.
    only_out = "int pk_unpack_fast(const char *source, char *dest, int outputSize);"
    assert kinds(only_out, "pk_unpack_fast")[1:] == [("outbuf", "dest", 2), ("outlen", "outputSize", 1)]


def test_shipped_prototypes_keep_their_pairing() -> None:
    zlib = ApiIndex(list(shipped_api("zlib")))
    compress = [(r.kind, r.pair) for r in roles(zlib.by_name["compress2"], zlib)]
    assert compress[:4] == [("outbuf", 1), ("outlen_ptr", 0), ("bytes", 3), ("len", 2)]


# ----- worst-case output bounds ----------------------------------------------------------------


def test_the_bound_named_for_the_target_sizes_its_output_with_its_own_types() -> None:
    b = harness(CODEC, "pk_pack")
    assert "out_cap = (size_t)pk_packBound((int)size) + 64;" in b
    assert "uLong" not in b
    frame = harness(CODEC, "pk_packFrame")
    assert "out_cap = (size_t)pk_packFrameBound((size_t)size, NULL) + 64;" in frame


def test_a_decompressor_is_not_sized_by_the_compressor_bound() -> None:
    b = harness(CODEC, "pk_unpack")
    assert "Bound(" not in b
    lz = "int LZ4_compressBound(int n);\nint LZ4_decompress_safe(const char *src, char *dst, int compressedSize, int dstCapacity);"  # noqa: E501
    assert "Bound(" not in harness(lz, "LZ4_decompress_safe")


def test_the_inverse_reads_the_length_the_call_returned() -> None:
    b = harness(CODEC, "pk_pack")
    assert "if (rc > 0) {" in b
    assert re.search(r"pk_unpack\(\(const char \*\)out_buf, \(char \*\)out_buf\d*, \(int\)rc, ", b)


def test_fixer_drops_casts_to_a_type_the_library_does_not_have() -> None:
    code = (
        '#include "pk.h"\nint f(unsigned long size) {\n  return pk_packBound((uLong)size) + (uLong) 3;\n}\n'  # noqa: E501
    )
    fixed = fix_harness(code, "h.c:3:22: error: use of undeclared identifier 'uLong'\n", api(CODEC), ["pk.h"])
    assert "return pk_packBound(size) + 3;" in fixed.code
    assert fixed.fixes == ["remove the casts to uLong: the library has no such type"]


# ----- opaque objects and error codes ----------------------------------------------------------


def test_an_opaque_object_comes_from_its_out_pointer_constructor() -> None:
    idx = ApiIndex(api(CODEC))
    assert idx.lifecycle("pk_dctx").create == ["pk_createDecoder"]
    assert idx.out_slot(idx.by_name["pk_createDecoder"]) == 0
    b = harness(CODEC, "pk_decode")
    var = re.search(r"pk_dctx \*(\w+) = NULL;", b)
    assert var, b
    v = var.group(1)
    assert f"pk_createDecoder(&{v}, pk_getVersion());" in b
    assert f"if ({v} == NULL) goto lf_cleanup;" in b
    assert f"if ({v} != NULL) pk_freeDecoder({v});" in b
    assert not re.search(r"pk_dctx \w+;", b)  # never declared by value: the type is incomplete


def test_an_error_code_typedef_is_not_a_handle() -> None:
    assert "pk_errorCode_t" not in ApiIndex(api(CODEC)).handle_types
    assert "gzFile" in ApiIndex(list(shipped_api("zlib"))).handle_types


def test_chunked_calls_pass_each_chunk_length_by_pointer_and_a_fresh_output() -> None:
    b = harness(CODEC, "pk_decode")
    assert "in_len = (size_t)lf_chunk_size;" in b and "out_len = (size_t)out_cap;" in b
    assert "&out_len, (const void *)lf_chunk, &in_len)" in b
    assert "(size_t *)lf_chunk_size" not in b


# ----- values, references and names ------------------------------------------------------------


def test_locals_never_shadow_an_api_type_or_function() -> None:
    for name in ("json_dumps", "json_array_size", "json_object_set_new"):
        b = harness(VALUES, name, ("jansson.h",))
        assert not re.search(r"\bjson_t \*json_t\b", b), b
        assert not re.search(r"\bjson_object\s*=", b), b


def test_one_letter_variants_of_a_verb_read_as_the_verb() -> None:
    idx = ApiIndex(api(VALUES))
    assert idx.verbs("json_loadb") == ["load"] and idx.verbs("json_dumps") == ["dump"]
    assert idx.returns_owned(idx.by_name["json_loads"])
    b = harness(VALUES, "json_loadb", ("jansson.h",))
    assert "if (result != NULL) json_delete(result);" in b


def test_a_verbless_constructor_returns_an_owned_object() -> None:
    idx = ApiIndex(api(VALUES))
    assert idx.returns_owned(idx.by_name["json_string"]) and idx.returns_owned(idx.by_name["json_object"])
    assert not idx.returns_owned(idx.by_name["json_object_get"])  # an accessor: borrowed
    assert not idx.returns_owned(idx.by_name["json_object_iter_value"])  # from a cursor: borrowed


def test_a_report_struct_does_not_make_a_reader_a_state_machine() -> None:
    assert analyze_function(fn(VALUES, "json_loadb"), api(VALUES)).archetype != "state_machine"
    assert kinds(VALUES, "json_loadb")[3] == ("object", "error", None)
    b = harness(VALUES, "json_loadb", ("jansson.h",))
    assert "json_loadb((const char *)data, (size_t)size, flags, &error)" in b


def test_objects_come_from_an_in_memory_reader_first() -> None:
    b = harness(VALUES, "json_dumps", ("jansson.h",))
    made = re.search(r"(\w+) = (json_\w+)\(", b)
    assert made and made.group(2) in ("json_loads", "json_loadb"), b
    assert "json_load_file" not in b and "json_string(" not in b.split("json_dumps(")[0]


def test_a_setter_new_form_takes_the_value_even_when_it_fails() -> None:
    assert transfers_ownership("json_object_set_new") and transfers_ownership("json_array_append_new")
    assert not transfers_ownership("json_object") and not transfers_ownership("json_new_thing")
    b = harness(VALUES, "json_array_append_new", ("jansson.h",))
    call = re.search(r"rc = json_array_append_new\(\w+, (\w+)\);\n\s*\(void\)rc;\n\s*(.*)\n", b)
    assert call, b
    assert call.group(2).strip() == f"{call.group(1)} = NULL;"  # unconditional: no double release


def test_unchecked_variants_are_called_only_as_the_target() -> None:
    b = harness(VALUES, "json_array_append_new", ("jansson.h",))
    assert "json_string_nocheck" not in b
    assert "json_string_nocheck(" in harness(VALUES, "json_string_nocheck", ("jansson.h",))


def test_an_integer_version_parameter_gets_the_library_version() -> None:
    assert kinds(CODEC, "pk_createDecoder")[1] == ("version", "version", None)
    plain = "int pk_open(pk_dctx **out, unsigned version);\nvoid pk_close(pk_dctx *d);"
    assert kinds(plain, "pk_open")[1][0] == "int"  # no version function to ask


def test_a_getters_buffer_is_filled_even_when_its_name_has_an_input_verb() -> None:
    decls = parse_prototypes("""\
lib_ctx *lib_new(void);
int lib_getHash(lib_ctx *c, unsigned char *md, unsigned int len);
void lib_free(lib_ctx *c);
""")
    idx = ApiIndex(decls)
    assert [r.kind for r in roles(idx.by_name["lib_getHash"], idx)] == ["object", "outbuf", "outlen"]


def test_a_key_measured_in_bits_is_the_input_with_its_length_in_bits() -> None:
    api = parse_prototypes("""
void acme_cipher_init(acme_cipher *ctx);
int acme_cipher_setkey(acme_cipher *ctx, const unsigned char *key, unsigned int keybits);
void acme_cipher_free(acme_cipher *ctx);
""")
    target = next(f for f in api if f.name == "acme_cipher_setkey")
    analysis = analyze_function(target, api)
    code = write_harness(target, api, ["acme.h"], analysis.archetype,
                         default_skeleton(analysis.archetype)).code
    assert "(const unsigned char *)data, (unsigned int)size * 8)" in code, code


def test_a_string_handed_back_is_released_with_the_librarys_generic_free() -> None:
    api = parse_prototypes("""
int acme_to_ascii(const char *input, char **output, int flags);
void acme_free(void *ptr);
""")
    target = api[0]
    analysis = analyze_function(target, api)
    code = write_harness(target, api, ["acme.h"], analysis.archetype,
                         default_skeleton(analysis.archetype)).code
    assert re.search(r"if \(output\w* != NULL\) acme_free\(output\w*\);", code), code


def test_error_codes_named_after_a_parameter_are_not_its_values() -> None:
    from agents.offline.synth_choices import int_choices
    from agents.offline.type_table import read_types, using
    from tests.types_text import render_types

    types = ("```c\n#define ACME_OK 0\n#define ACME_INVALID_FLAGS -3\n#define ACME_NOMEM -4\n\n"
             "#define ACME_MODE_FAST 1\n#define ACME_MODE_SLOW 2\n```\n")
    with using(read_types(render_types(types))):
        assert -3 not in int_choices("flags", "acme_to_ascii")
        assert int_choices("mode", "acme_open") == (1, 2, 2)


def test_a_handle_typedef_comes_from_its_constructor_and_is_passed_by_value() -> None:
    from agents.offline.type_table import read_types, using
    from tests.types_text import render_types

    api = parse_prototypes("""
acme_parser acme_parser_create(const char *encoding);
void acme_set_start_handler(acme_parser parser, acme_start_handler start);
int acme_parse(acme_parser parser, const char *s, int len, int isFinal);
void acme_parser_free(acme_parser parser);
""")
    types = ("```c\ntypedef struct acme_parser_s *acme_parser;\n"
             "typedef void (*acme_start_handler)(void *, const char *);\n"
             "struct acme_parser_s;  /* opaque: only pointers, made by the API */\n"
             "enum acme_status { ACME_STATUS_ERROR = 0, ACME_STATUS_OK = 1 };\n```\n")
    target = next(f for f in api if f.name == "acme_parse")
    with using(read_types(render_types(types))):
        analysis = analyze_function(target, api)
        code = write_harness(target, api, ["acme.h"], analysis.archetype,
                             default_skeleton(analysis.archetype)).code
    assert "acme_parser_create(NULL)" in code, code
    assert "memset(&" not in code and "acme_set_start_handler(&" not in code, code
    assert re.search(r"acme_parse\(acme_parser\w*, ", code), code


def test_custom_allocator_hooks_get_null_so_the_library_allocates_for_itself() -> None:
    api = parse_prototypes("""
acme_gctx *acme_gctx_create(void *(*)(size_t, void *), void (*)(void *, void *), void *data);
acme_cctx *acme_cctx_create(acme_gctx *g);
acme_code *acme_compile(const unsigned char *pattern, size_t length, acme_cctx *cctx);
void acme_code_free(acme_code *code);
void acme_cctx_free(acme_cctx *c);
void acme_gctx_free(acme_gctx *g);
""")
    target = next(f for f in api if f.name == "acme_compile")
    analysis = analyze_function(target, api)
    code = write_harness(target, api, ["acme.h"], analysis.archetype,
                         default_skeleton(analysis.archetype)).code
    assert "acme_gctx_create(NULL, NULL, " in code or "acme_gctx_create" not in code, code


def test_a_pointer_typedef_alias_chain_resolves_and_its_result_is_freed() -> None:
    from agents.offline.type_table import read_types, using
    from tests.types_text import render_types

    api = parse_prototypes("""
acme_doc_p acme_read_memory(const char *buffer, int size, const char *url, const char *encoding, int options);
void acme_free_doc(acme_node_doc_p cur);
""")
    types = ("```c\ntypedef struct _acme_doc acme_doc;\n"
             "typedef acme_doc *acme_node_doc_p;  /* struct _acme_doc * */\n"
             "typedef acme_node_doc_p acme_doc_p;  /* struct _acme_doc * */\n"
             "struct _acme_doc { int type; };\n```\n")
    target = api[0]
    with using(read_types(render_types(types))):
        assert ckinds.resolve("acme_doc_p") == "acme_doc *"
        analysis = analyze_function(target, api)
        code = write_harness(target, api, ["acme.h"], analysis.archetype,
                             default_skeleton(analysis.archetype)).code
    assert "acme_free_doc(result)" in code, code
    assert "(const char *)NULL, options)" in code or ", NULL, options)" in code, code
