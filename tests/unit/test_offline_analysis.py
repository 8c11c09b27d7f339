"""Archetype classification, constraints, lifecycles and related functions of real APIs."""

from __future__ import annotations

import pytest

from agents.offline.analysis import ARCHETYPES, analyze_function
from agents.offline.cdecl import parse_prototypes
from tests.types_text import render_types
from tests.unit.test_offline_data import api, fn


@pytest.mark.parametrize(
    ("lib", "name", "archetype"),
    [
        ("cjson", "cJSON_Parse", "stateless_parser"),
        ("cjson", "cJSON_ParseWithLength", "stateless_parser"),
        ("cjson", "cJSON_Minify", "stateless_parser"),
        ("cjson", "cJSON_Print", "round_trip"),
        ("cjson", "cJSON_PrintBuffered", "round_trip"),
        ("cjson", "cJSON_Duplicate", "object_lifecycle"),
        ("cjson", "cJSON_GetArraySize", "object_lifecycle"),
        ("cjson", "cJSON_AddItemToObject", "object_builder"),
        ("cjson", "cJSON_ReplaceItemInArray", "object_builder"),
        ("cjson", "cJSON_InitHooks", "callback_driven"),
        ("zlib", "inflate", "stream_processor"),
        ("zlib", "deflate", "stream_processor"),
        ("zlib", "compress2", "buffer_codec"),
        ("zlib", "uncompress", "buffer_codec"),
        ("zlib", "crc32", "incremental_digest"),
        ("zlib", "adler32", "incremental_digest"),
        ("zlib", "gzopen", "file_based"),
        ("zlib", "gzread", "file_based"),
        ("zlib", "inflateBack", "callback_driven"),
        ("zlib", "inflateEnd", "object_lifecycle"),
        ("yaml", "yaml_parser_parse", "state_machine"),
        ("yaml", "yaml_parser_scan", "state_machine"),
        ("yaml", "yaml_parser_load", "state_machine"),
        ("yaml", "yaml_parser_set_input", "callback_driven"),
        ("yaml", "yaml_parser_set_input_file", "file_based"),
        ("yaml", "yaml_emitter_emit", "round_trip"),
        ("yaml", "yaml_document_add_scalar", "object_builder"),
        ("yaml", "yaml_parser_initialize", "object_lifecycle"),
    ],
)
def test_archetype_of_real_functions(lib: str, name: str, archetype: str) -> None:
    result = analyze_function(fn(lib, name), list(api(lib)))
    assert result.archetype == archetype, result.reasoning
    assert result.archetype in ARCHETYPES
    assert result.confidence in ("HIGH", "MEDIUM", "LOW")
    assert name in result.reasoning


def test_parser_constraints_and_lifecycle() -> None:
    result = analyze_function(fn("cjson", "cJSON_Parse"), list(api("cjson")))
    assert result.confidence == "HIGH"
    assert "value must be a NUL-terminated string" in result.constraints
    assert "the returned cJSON must be freed with cJSON_Delete" in result.constraints
    assert result.lifecycle["cJSON"]["destroy"] == ["cJSON_Delete"]
    assert "cJSON_Parse" in result.lifecycle["cJSON"]["create"]
    # printers first: they reach the most code on the parsed tree
    assert result.related[0].startswith("cJSON_Print")
    assert "cJSON_Delete" not in result.related


def test_length_bound_constraint() -> None:
    result = analyze_function(fn("cjson", "cJSON_ParseWithLength"), list(api("cjson")))
    assert "buffer_length bounds the read of value" in result.constraints


def test_stream_constraints_name_the_matching_init_and_end() -> None:
    result = analyze_function(fn("zlib", "inflate"), list(api("zlib")))
    text = " ".join(result.constraints)
    assert "initialised with inflateInit" in text and "released with inflateEnd" in text
    assert "deflateInit" not in text
    assert result.lifecycle["z_stream"]["destroy"][0] == "inflateEnd"
    deflate = analyze_function(fn("zlib", "deflate"), list(api("zlib")))
    assert "initialised with deflateInit" in " ".join(deflate.constraints)


def test_state_machine_constraints_mention_event_release() -> None:
    result = analyze_function(fn("yaml", "yaml_parser_parse"), list(api("yaml")))
    assert any("yaml_event_delete" in c for c in result.constraints)
    assert any("yaml_parser_initialize" in c for c in result.constraints)
    assert set(result.lifecycle) == {"yaml_parser_t", "yaml_event_t"}


def test_codec_related_starts_with_the_inverse() -> None:
    result = analyze_function(fn("zlib", "compress2"), list(api("zlib")))
    assert result.related[:1] == ["uncompress2"]


def test_target_missing_from_api_is_still_analyzed() -> None:
    others = [f for f in api("cjson") if f.name != "cJSON_Duplicate"]
    result = analyze_function(fn("cjson", "cJSON_Duplicate"), others)
    assert result.archetype == "object_lifecycle"


def test_analysis_is_deterministic_and_serializable() -> None:
    a = analyze_function(fn("yaml", "yaml_emitter_dump"), list(api("yaml")))
    b = analyze_function(fn("yaml", "yaml_emitter_dump"), list(api("yaml")))
    assert a == b
    assert a.to_dict()["archetype"] == "round_trip"


def test_a_running_value_folded_over_bytes_is_a_digest_whatever_its_name() -> None:
    decls = parse_prototypes("""\
unsigned long lib_wump32(unsigned long sum, const unsigned char *buf, unsigned int len);
int lib_tally(int flags, const unsigned char *buf, unsigned int len);
""")
    assert analyze_function(decls[0], decls).archetype == "incremental_digest"
    assert analyze_function(decls[1], decls).archetype != "incremental_digest"


PIECES_API = """
typedef struct vx_dec_config vx_dec_config;
typedef struct vx_idec vx_idec;
typedef struct vx_ctx vx_ctx;
int vx_init_dec_config(vx_dec_config *config, int version);
vx_idec *vx_incr_decode(const unsigned char *data, size_t data_size, vx_dec_config *config);
void vx_idec_delete(vx_idec *idec);
int vx_decode(const unsigned char *data, size_t data_size, vx_dec_config *config);
vx_ctx *vx_ctx_new(void);
int vx_ctx_decode(vx_ctx *ctx, const unsigned char *buf, size_t len);
void vx_ctx_free(vx_ctx *ctx);
"""


@pytest.mark.parametrize(
    ("name", "archetype"),
    [
        ("vx_incr_decode", "object_lifecycle"),  # a new object per call: never called per piece
        ("vx_decode", "object_lifecycle"),  # options last: one call on the whole input
        ("vx_ctx_decode", "stream_processor"),  # the object first: it keeps what came before
    ],
)
def test_only_method_style_calls_are_fed_in_pieces(name: str, archetype: str) -> None:
    decls = parse_prototypes(PIECES_API)
    target = next(d for d in decls if d.name == name)
    assert analyze_function(target, decls).archetype == archetype


def test_an_object_made_from_input_bytes_is_owned_whatever_the_verb() -> None:
    decls = parse_prototypes(PIECES_API)
    target = next(d for d in decls if d.name == "vx_incr_decode")
    result = analyze_function(target, decls)
    assert "the returned vx_idec must be freed with vx_idec_delete" in result.constraints


WHOLE_API = """
typedef struct vx_cert vx_cert;
typedef struct vx_reader vx_reader;
void vx_cert_init(vx_cert *crt);
int vx_cert_parse(vx_cert *crt, const unsigned char *buf, size_t buflen);
int vx_cert_parse_more(vx_cert *crt, const char *chunk, int size, int terminate);
void vx_cert_free(vx_cert *crt);
vx_reader *vx_reader_new(void);
int vx_reader_parse(vx_reader *r, const unsigned char *buf, size_t len);
void vx_reader_free(vx_reader *r);
"""
WHOLE_TYPES = """```c
struct vx_cert { int version; unsigned char *raw; size_t raw_len; struct vx_cert *next; };
struct vx_reader;  /* opaque: only pointers, made by the API */
```"""


@pytest.mark.parametrize(("name", "archetype"), [
    ("vx_cert_parse", "object_lifecycle"),  # a struct the caller sees into: whole messages
    ("vx_reader_parse", "stream_processor"),  # an opaque context keeps state between pieces
    # a flag saying the piece is the last one (`terminate`, `is_final`, `eof`): made for pieces
    ("vx_cert_parse_more", "stream_processor"),
])
def test_a_parse_into_a_visible_struct_takes_the_whole_input(name: str, archetype: str) -> None:
    from agents.offline.type_table import read_types, using

    decls = parse_prototypes(WHOLE_API)
    target = next(d for d in decls if d.name == name)
    with using(read_types(render_types(WHOLE_TYPES))):
        assert analyze_function(target, decls).archetype == archetype
