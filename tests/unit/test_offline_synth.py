"""Harness synthesis: type-driven argument construction, guidance, skeleton handling."""

from __future__ import annotations

import re

import pytest

from agents.offline.analysis import ARCHETYPES, analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import SLOTS, default_skeleton, marker, write_harness
from fuzzkit.guidance_facts import Rule
from tests.unit.test_offline_data import api, fn

HEADERS = {"cjson": ["cJSON.h"], "zlib": ["zlib.h"], "yaml": ["yaml.h"]}


def draft(lib: str, name: str, **kw: object):  # noqa: ANN201 - a HarnessDraft
    target = fn(lib, name)
    arche = str(kw.pop("archetype", analyze_function(target, list(api(lib))).archetype))
    return write_harness(target, list(api(lib)), HEADERS[lib], arche, default_skeleton(arche), **kw)  # type: ignore[arg-type]


def body(code: str) -> str:
    """The fuzz entry point's body without comments."""
    text = code[code.index("int LLVMFuzzerTestOneInput") :]
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


@pytest.mark.parametrize("archetype", ARCHETYPES)
def test_every_skeleton_has_all_slots_once_on_their_own_lines(archetype: str) -> None:
    text = default_skeleton(archetype)
    for slot in SLOTS:
        lines = [ln.strip() for ln in text.splitlines() if marker(slot) in ln]
        assert lines == [marker(slot)], (archetype, slot)
    assert "int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)" in text
    assert "#include <stdint.h>" in text and "#include <stddef.h>" in text


def test_c_string_parameter_gets_a_nul_terminated_copy_freed_on_every_path() -> None:
    d = draft("cjson", "cJSON_Parse")
    b = body(d.code)
    assert "= lf_strndup(data, size);" in b
    assert re.search(r"= cJSON_Parse\(\(const char \*\)text\);", b)
    assert "goto lf_cleanup;" in b and "lf_cleanup: ;" in b
    assert "if (result != NULL) cJSON_Delete(result);" in b
    assert "free(text);" in b
    assert '#include "cJSON.h"' in d.code and "#include <stdlib.h>" in d.code
    assert d.calls[0] == "cJSON_Parse"


def test_markers_survive_filling() -> None:
    d = draft("cjson", "cJSON_Parse")
    for slot in SLOTS:
        assert d.code.count(marker(slot)) == 1


def test_bytes_with_length_pass_data_and_size_unchanged() -> None:
    b = body(draft("cjson", "cJSON_ParseWithLength").code)
    assert "cJSON_ParseWithLength((const char *)data, (size_t)size)" in b
    assert "lf_strndup" not in b.split("cJSON_ParseWithLength")[0]


def test_nul_terminated_constraint_forces_a_copy() -> None:
    b = body(
        draft("cjson", "cJSON_ParseWithLength", rules=[Rule(kind="nul_terminated", name="value")]).code
    )
    assert "lf_strndup(data, size)" in b
    assert re.search(r"cJSON_ParseWithLength\(\(const char \*\)text, \(size_t\)strlen\(text\)\)", b)


def test_options_come_from_the_input_end_and_are_clamped() -> None:
    d = draft("cjson", "cJSON_ParseWithOpts")
    b = body(d.code)
    assert "lf_input_t lf_in = {data, size};" in b
    assert "require_null_terminated = (cJSON_bool)lf_take_int(&lf_in, 0, 1);" in b
    assert "size = lf_in.size;" in b
    assert "const char *return_parse_end = NULL;" in b
    assert "&return_parse_end" in b
    assert "static int lf_take_int(lf_input_t *in, int lo, int hi)" in d.code


def test_struct_built_by_the_api_parser_and_released_by_its_destructor() -> None:
    b = body(draft("cjson", "cJSON_Duplicate").code)
    assert re.search(r"cjson = cJSON_Parse\(\(const char \*\)text\);\s+if \(cjson == NULL\) goto", b)
    assert "result = cJSON_Duplicate(cjson, recurse);" in b
    assert b.index("cJSON_Delete(result)") < b.index("cJSON_Delete(cjson)")


def test_round_trip_prints_then_parses_the_printed_text_and_compares() -> None:
    d = draft("cjson", "cJSON_Print")
    b = body(d.code)
    assert "printed = cJSON_Print(cjson);" in b
    assert "if (printed != NULL) cJSON_free(printed);" in b
    assert re.search(r"= cJSON_Parse\(\(const char \*\)printed\);", b)
    assert "cJSON_Compare(cjson," in b


def test_stream_struct_is_zeroed_initialized_checked_and_fed_in_chunks() -> None:
    d = draft("zlib", "inflate")
    b = body(d.code)
    assert "memset(&stream, 0, sizeof stream);" in b
    assert re.search(
        r"rc = inflateInit2_\(&stream, windowBits, zlibVersion\(\), "
        r"\(int\)sizeof\(z_stream\)\);",
        b,
    )
    assert "if (!(rc == Z_OK)) goto lf_cleanup;" in b
    assert "stream.next_in = (Bytef *)lf_chunk;" in b
    assert "inflate(&stream, flush)" in b
    assert "if (stream_ready) inflateEnd(&stream);" in b
    assert "lf_chunk_max = (size_t)lf_take_pick" in b


def test_buffer_codec_output_buffer_is_bounded_and_inverse_runs() -> None:
    b = body(draft("zlib", "compress2").code)
    assert "out_cap = (size_t)compressBound((uLong)size) + 64;" in b
    assert "if (out_cap > 1048576u) out_cap = 1048576u;" in b
    assert "out_len = (uLongf)out_cap;" in b
    assert "compress2((Bytef *)out_buf, &out_len, (const Bytef *)data, (uLong)size, level)" in b
    assert "uncompress2(" in b and "if (rc == Z_OK" in b


def test_digest_runs_over_chunks_from_the_documented_start() -> None:
    b = body(draft("zlib", "crc32").code)
    assert "acc = crc32(0, NULL, 0);" in b
    assert "acc = crc32(acc, (const Bytef *)lf_chunk, (uInt)lf_chunk_size);" in b


def test_state_machine_steps_release_each_event_and_stop_at_the_end() -> None:
    b = body(draft("yaml", "yaml_parser_parse").code)
    assert "yaml_parser_set_input_string(&parser, (const unsigned char *)data, (size_t)size);" in b
    assert re.search(r"yaml_event_t event;\s+memset\(&event, 0, sizeof event\);", b)
    assert "event.type == YAML_STREAM_END_EVENT" in b
    assert "yaml_event_delete(&event);" in b
    assert "if (parser_ready) yaml_parser_delete(&parser);" in b


def test_callback_is_generated_with_the_exact_handler_signature() -> None:
    d = draft("yaml", "yaml_parser_set_input")
    assert re.search(
        r"static int lf_reader_cb\w*\(void \*a0, unsigned char \*a1, size_t a2, "
        r"size_t \*a3\)",
        d.code,
    )
    b = body(d.code)
    # the reader's source outlives the block it is set up in: the parser reads through it later
    source = re.search(r"static lf_input_t (\w+);", b)
    assert source and f"{source.group(1)}.data = data;" in b and f"{source.group(1)}.size = size;" in b
    assert "yaml_parser_set_input_string" not in b  # one input source per parser
    assert "yaml_parser_parse(&parser, &event" in b


def test_file_input_uses_the_skeleton_file_and_a_dup_for_owning_opens() -> None:
    b = body(draft("zlib", "gzread").code)
    assert "lf_tmpfile(data, size, lf_path, sizeof lf_path)" in b and "unlink(lf_path);" in b
    assert "fd_dup = dup(lf_fd);" in b
    assert re.search(r"gzfile = gzdopen\(fd_dup, \"rb\"\);\s+if \(gzfile != NULL\) fd_dup = -1;", b)
    assert "if (gzfile != NULL) gzclose(gzfile);" in b


def test_consumed_items_are_released_only_when_the_call_failed() -> None:
    b = body(draft("cjson", "cJSON_AddItemToObject").code)
    assert re.search(r"rc = cJSON_AddItemToObject\(cjson, \(const char \*\)\w+, item\);", b)
    assert "if (rc) item = NULL;" in b
    assert "if (item != NULL) cJSON_Delete(item);" in b
    assert "switch (kind)" in b  # the new item's kind comes from the input


def test_known_fix_include_is_applied_before_any_compile() -> None:
    d = draft("cjson", "cJSON_Parse", rules=[Rule(kind="include", name="<stdio.h>",
                                                  text="add #include <stdio.h> for printf")])
    assert "#include <stdio.h>" in d.code
    assert any("add #include <stdio.h>" in n for n in d.notes)


def test_avoid_list_keeps_functions_out_of_the_harness() -> None:
    d = draft("cjson", "cJSON_Parse", avoid=["cJSON_PrintBuffered"])
    assert "cJSON_PrintBuffered" not in d.code
    assert "cJSON_PrintBuffered" not in d.calls
    banned = draft("cjson", "cJSON_Parse", rules=[Rule(kind="avoid", name="cJSON_PrintUnformatted")])
    assert "cJSON_PrintUnformatted(" not in body(banned.code)


def test_release_constraint_overrides_the_destructor() -> None:
    text = "thing *thing_new(const char *s);\nvoid thing_free(thing *t);\nvoid thing_drop(thing *t);"
    api_ = parse_prototypes(text)
    target = api_[0]
    d = write_harness(
        target,
        api_,
        ["thing.h"],
        "stateless_parser",
        default_skeleton("stateless_parser"),
        rules=[Rule(kind="release_with", name="thing_drop")],
    )
    assert "thing_drop(result)" in d.code and "thing_free(" not in d.code


def test_unknown_archetype_or_broken_skeleton_falls_back_with_a_note() -> None:
    target = fn("cjson", "cJSON_Parse")
    d = write_harness(target, list(api("cjson")), ["cJSON.h"], "nonsense", "int x;")
    assert any("unknown archetype" in n for n in d.notes)
    assert marker("SETUP") in d.code and "cJSON_Parse(" in d.code


def test_same_input_gives_the_same_harness() -> None:
    assert draft("zlib", "deflate").code == draft("zlib", "deflate").code
    assert draft("yaml", "yaml_emitter_emit").code == draft("yaml", "yaml_emitter_emit").code


@pytest.mark.parametrize("lib", ["cjson", "zlib", "yaml"])
def test_every_api_function_gets_a_harness_calling_it(lib: str) -> None:
    for target in api(lib):
        d = draft(lib, target.name)
        assert re.search(rf"\b{target.name}\s*\(", body(d.code)) or f"lf_va_{target.name}" in d.code, (
            target.name
        )
        assert d.code.count("{") == d.code.count("}"), target.name


def test_call_before_guidance_orders_plain_calls_and_picks_initializers() -> None:
    d = draft("yaml", "yaml_parser_parse",
              rules=[Rule(kind="call_before", name="yaml_parser_set_encoding", then="yaml_parser_parse")])
    b = body(d.code)
    assert b.index("yaml_parser_set_encoding(&parser, encoding)") < b.index("yaml_parser_parse(")
    z = body(
        draft(
            "zlib", "inflate", rules=[Rule(kind="call_before", name="inflateInit_", then="inflate")]
        ).code
    )
    assert "inflateInit_(&stream, zlibVersion(), (int)sizeof(z_stream))" in z
    assert "inflateInit2_" not in z


ODD_API = """
typedef struct XML_ParserStruct *XML_Parser;
XML_Parser XML_ParserCreate(const XML_Char *encoding);
void XML_ParserFree(XML_Parser parser);
enum XML_Status XML_Parse(XML_Parser parser, const char *s, int len, int isFinal);
void XML_SetElementHandler(XML_Parser parser, XML_StartElementHandler start, XML_EndElementHandler end);
int SHA256_Init(SHA256_CTX *c);
int SHA256_Update(SHA256_CTX *c, const void *data, size_t len);
int SHA256_Final(unsigned char *md, SHA256_CTX *c);
struct point make_point(int x, int y);
double dist(struct point a, struct point b);
int weird(int (*cb)(void *, const char *, int), void *ctx);
char **split(const char *s, char sep, size_t *count);
int vlog(const char *fmt, va_list ap);
"""


@pytest.mark.parametrize("archetype", ARCHETYPES)
def test_unfamiliar_apis_never_break_the_synthesizer(archetype: str) -> None:
    odd = parse_prototypes(ODD_API)
    for target in odd:
        d = write_harness(target, odd, ["odd.h"], archetype, default_skeleton(archetype))
        assert target.name in d.code
        assert d.code.count("{") == d.code.count("}")


def test_odd_api_shapes_get_sensible_arguments() -> None:
    odd = parse_prototypes(ODD_API)
    by = {f.name: f for f in odd}
    xml = write_harness(
        by["XML_Parse"], odd, ["odd.h"], "stream_processor", default_skeleton("stream_processor")
    )
    b = body(xml.code)
    assert "xml_parser = XML_ParserCreate(" in b and "XML_ParserFree(xml_parser)" in b
    assert "XML_Parse(xml_parser, (const char *)lf_chunk, (int)lf_chunk_size, lf_is_last)" in b
    dist = body(
        write_harness(
            by["dist"], odd, ["odd.h"], "object_lifecycle", default_skeleton("object_lifecycle")
        ).code
    )
    assert re.search(r"struct point a;\s+memset\(&a, 0, sizeof a\);", dist)
    sha = body(
        write_harness(
            by["SHA256_Update"], odd, ["odd.h"], "incremental_digest", default_skeleton("incremental_digest")
        ).code
    )
    assert "SHA256_Init(&ctx)" in sha
    assert "SHA256_Update(&ctx, (const void *)lf_chunk, (size_t)lf_chunk_size)" in sha
    assert re.search(r"SHA256_Final\(\(unsigned char \*\)\w+, &ctx\)", sha)
    vlog = write_harness(by["vlog"], odd, ["odd.h"], "stateless_parser", default_skeleton("stateless_parser"))
    assert "static int lf_va_vlog(const char *fmt, ...)" in vlog.code and "#include <stdarg.h>" in vlog.code


def test_a_buffer_of_numbers_handed_back_is_released() -> None:
    # `unsigned int **output`: code points the library allocated; they leak unless released.
    for extra, releaser in (("void acme_free(void *ptr);", "acme_free"), ("", "free")):
        decls = parse_prototypes(
            f"int acme_to_points(const char *input, unsigned int **output, int flags);\n{extra}")
        target = decls[0]
        analysis = analyze_function(target, decls)
        code = write_harness(target, decls, ["acme.h"], analysis.archetype,
                             default_skeleton(analysis.archetype), rules=analysis.rules).code
        assert f"if (output != NULL) {releaser}(output);" in code
    # A cursor into the input is not the library's to free.
    decls = parse_prototypes("int acme_scan(const char *input, const unsigned int **rest);")
    skeleton = default_skeleton("stateless_parser")
    code = write_harness(decls[0], decls, ["acme.h"], "stateless_parser", skeleton).code
    assert "free(rest)" not in code


def test_an_unsized_output_beside_numbers_gets_room_not_the_input() -> None:
    # `to_text(const uint32_t *in, size_t len, char *output, int flags)`: the library writes the
    # text into `output`; handing it a copy of the input overflows on short inputs.
    decls = parse_prototypes(
        "int acme_to_text(const uint32_t *input, size_t inlen, char *output, int flags);")
    skeleton = default_skeleton("stateless_parser")
    code = write_harness(decls[0], decls, ["acme.h"], "stateless_parser", skeleton).code
    call = re.search(r"acme_to_text\((.*)\);", code)
    assert call and "out_buf" in call.group(1).split(",")[2]


def test_only_a_callback_with_a_buffer_to_fill_its_size_and_a_count_out_is_a_reader() -> None:
    from agents.offline.synth_io import _signature

    reader = _signature("int (*)(void *, unsigned char *, size_t, size_t *)")
    assert reader is not None and reader.shape == "reader"
    # (context, a token the library hands over, two user pointers): told something, fills nothing
    told = _signature("void (*)(rx_exec_t *, const unsigned char *, void *, void *)")
    assert told is not None and told.shape == "sink"


def test_a_fed_parser_is_finished_after_the_chunks_and_its_result_released() -> None:
    # A streaming parser builds its result as chunks come in; its end call hands the result
    # back. Without it, what the constructor set up for the result leaks.
    decls = parse_prototypes("""
typedef struct acme_parser acme_parser;
typedef struct acme_tree acme_tree;
acme_parser *acme_parser_new(int options);
void acme_parser_feed(acme_parser *parser, const char *buffer, size_t len);
acme_tree *acme_parser_finish(acme_parser *parser);
void acme_parser_free(acme_parser *parser);
void acme_tree_free(acme_tree *tree);
""")
    by = {f.name: f for f in decls}
    code = body(write_harness(by["acme_parser_feed"], decls, ["acme.h"], "stream_processor",
                              default_skeleton("stream_processor")).code)
    finish = re.search(r"(\w+) = acme_parser_finish\((\w+)\);", code)
    assert finish and code.index("acme_parser_feed(") < finish.start()
    assert f"acme_tree_free({finish.group(1)})" in code
    assert f"acme_parser_free({finish.group(2)})" in code
