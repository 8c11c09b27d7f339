from __future__ import annotations

from pathlib import Path

import pytest

from fuzzkit.api import FunctionDecl, Param
from fuzzkit.detect import detect_build
from fuzzkit.detect_include_order import include_order
from fuzzkit.errors import ToolchainError
from fuzzkit.headers import deprecated_functions, parse_header, parse_headers
from fuzzkit.source import SourceSpec, fetch_source

pytestmark = pytest.mark.toolchain


def _by_name(decls: list[FunctionDecl]) -> dict[str, FunctionDecl]:
    return {d.name: d for d in decls}


def test_cjson_prototypes(cjson_root: Path) -> None:
    decls = parse_header(cjson_root / "cJSON.h", [cjson_root])
    funcs = _by_name(decls)
    assert len(decls) == len(funcs) >= 70
    assert funcs["cJSON_Parse"] == FunctionDecl(
        "cJSON_Parse", "cJSON *", (Param("value", "const char *"),), "cJSON.h"
    )
    assert funcs["cJSON_ParseWithLength"].params == (
        Param("value", "const char *"),
        Param("buffer_length", "size_t"),  # not int: the builtin include dir was found
    )
    assert funcs["cJSON_Delete"].prototype() == "void cJSON_Delete(cJSON *item);"
    assert funcs["cJSON_Version"].params == ()
    assert funcs["cJSON_ParseWithOpts"].params[2] == Param("require_null_terminated", "cJSON_bool")


def test_zlib_prototypes(cache: Path) -> None:
    root = fetch_source(SourceSpec(apt="zlib"), cache=cache)
    funcs = _by_name(parse_header(root / "zlib.h", [root]))
    assert len(funcs) >= 70
    assert funcs["inflate"].params == (Param("strm", "z_streamp"), Param("flush", "int"))
    assert funcs["inflate"].return_type == "int"
    assert "gzprintf" not in funcs  # variadic
    assert "zlibVersion" in funcs and "compress2" in funcs


def test_libyaml_prototypes(cache: Path) -> None:
    root = fetch_source(SourceSpec(apt="libyaml"), cache=cache)
    funcs = _by_name(parse_headers([root / "include" / "yaml.h"], [root / "include"]))
    assert len(funcs) >= 40
    assert funcs["yaml_parser_set_input_string"].params == (
        Param("parser", "yaml_parser_t *"),
        Param("input", "const unsigned char *"),
        Param("size", "size_t"),
    )


def test_only_the_headers_own_api(tmp_path: Path) -> None:
    (tmp_path / "dep.h").write_text("int dep_function(int x);\n")
    header = tmp_path / "mine.h"
    header.write_text(
        '#include <string.h>\n#include "dep.h"\n'
        '#if defined(MINE_SHARED)\n#define MINE_API(t) __attribute__((visibility("default"))) t\n'
        "#else\n#define MINE_API(t) t\n#endif\n"
        "MINE_API(char *) mine_copy(const char *src, size_t n);\n"
        "MINE_API(char *) mine_copy(const char *src, size_t n);\n"
        "int mine_log(const char *fmt, ...);\n"
        "static inline int mine_twice(int v) { return 2 * v; }\n"
        "void mine_each(int (*callback)(void *), void *user);\n"
        "int mine_count(void);\n"
    )
    decls = parse_header(header, [tmp_path], defines=["MINE_SHARED"])
    assert [d.name for d in decls] == ["mine_copy", "mine_each", "mine_count"]
    assert decls[0].params[1] == Param("n", "size_t")
    assert decls[1].params[0] == Param("callback", "int (*)(void *)")
    assert decls[2].prototype() == "int mine_count(void);"


def test_umbrella_header_declares_what_its_parts_declare(tmp_path: Path) -> None:
    """Parts in a directory below the umbrella (refusing to be included alone) are its API."""
    (tmp_path / "pk").mkdir()
    guard = '#ifndef PK_H_INSIDE\n#error "include <pk.h> instead"\n#endif\n'
    (tmp_path / "pk" / "base.h").write_text(guard + "typedef struct { int n; } pk_stream;\n"
                                            "PK_API(int) pk_code(pk_stream *s, int action);\n")
    (tmp_path / "pk" / "check.h").write_text(
        guard + "PK_API(unsigned) pk_crc(const unsigned char *b, unsigned long n);\n")
    (tmp_path / "other.h").write_text("int other_sibling(int x);\n")
    umbrella = tmp_path / "pk.h"
    umbrella.write_text('#define PK_H_INSIDE\n#define PK_API(t) extern t\n#include "other.h"\n'
                        '#include "pk/base.h"\n#include "pk/check.h"\nint pk_version(void);\n')
    assert [d.name for d in parse_header(umbrella, [tmp_path])] == ["pk_version"]
    decls = parse_header(umbrella, [tmp_path], parts=True)
    assert sorted(d.name for d in decls) == ["pk_code", "pk_crc", "pk_version"]  # not the sibling's
    assert {d.header for d in decls} == {"pk.h"}  # what a harness includes
    assert parse_header(tmp_path / "pk" / "base.h", [tmp_path]) == []  # a part alone declares nothing
    # Listed on their own, a part's declarations stay its own; the umbrella adds only the rest.
    (tmp_path / "pk" / "own.h").write_text("int pk_own(int x);\n")
    umbrella.write_text(umbrella.read_text() + '#include "pk/own.h"\n')
    listed = parse_headers([umbrella, tmp_path / "pk" / "own.h"], [tmp_path])
    assert [(d.name, d.header) for d in listed] == [
        ("pk_version", "pk.h"), ("pk_own", "own.h"), ("pk_code", "pk.h"), ("pk_crc", "pk.h")]


def test_missing_header_is_a_toolchain_error(tmp_path: Path) -> None:
    with pytest.raises(ToolchainError):
        parse_header(tmp_path / "nope.h")
    broken = tmp_path / "broken.h"
    broken.write_text('#include "not_there.h"\n')
    with pytest.raises(ToolchainError, match="not_there.h"):
        parse_header(broken)


def test_wrapper_calls_come_from_inline_bodies_and_macros(tmp_path: Path) -> None:
    from fuzzkit.header_facts_collect import collect_facts

    header = tmp_path / "qz.h"
    header.write_text(
        "#define QZ_ABI_VERSION 0x0203\n"
        "typedef struct qz_cfg { int threads; } qz_cfg;\n"
        "int qz_cfg_init_internal(qz_cfg *cfg, int);\n"
        "static inline int qz_cfg_init(qz_cfg *cfg) {\n"
        "  return qz_cfg_init_internal(cfg, QZ_ABI_VERSION);  /* { checked } */\n"
        "}\n"
        "int qz_open_internal(int flags, const char *version, int size);\n"
        "#define qz_open(flags) qz_open_internal((flags), \"1.2\", (int)sizeof(qz_cfg))\n"
    )
    api = parse_header(header, [tmp_path])
    facts = collect_facts([header], [tmp_path], [], api)
    fixed = {w.function: w.fixed() for w in facts.wrappers}
    assert fixed == {"qz_cfg_init_internal": {1: "QZ_ABI_VERSION"},
                     "qz_open_internal": {1: '"1.2"', 2: "(int)sizeof(qz_cfg)"}}
    assert "- function: qz_cfg_init_internal\n  args: [cfg, QZ_ABI_VERSION]\n  caller: qz_cfg_init\n" \
        in facts.render()


def test_releasers_taking_a_pointer_typedef_are_found(tmp_path: Path) -> None:
    """``void kv_doc_free(kv_doc_p d)`` releases a ``struct kv_doc *``: the parameter is a pointer
    only once its typedef is resolved, and its aliases (``kv_html_doc_p``) name the same type."""
    from fuzzkit.header_facts_collect import collect_facts

    header = tmp_path / "kv.h"
    header.write_text(
        "typedef struct kv_doc kv_doc;\ntypedef kv_doc *kv_doc_p;\ntypedef kv_doc_p kv_html_doc_p;\n"
        "kv_html_doc_p kv_html_read(const char *buf, int size);\n"
        "void kv_doc_free(kv_doc_p doc);\n"
        "void kv_set_level(int level);\n"
    )
    api = parse_header(header, [tmp_path])
    facts = collect_facts([header], [tmp_path], [], api)
    assert ("kv_doc_free", "kv_doc_p") in {(r.function, r.releases) for r in facts.releasers}
    assert "kv_set_level" not in {r.function for r in facts.releasers}


def test_memory_from_a_named_allocator_is_released_by_its_releaser(tmp_path: Path) -> None:
    """``memory obtained from kv_malloc64(); the caller is responsible for freeing it``: released
    by what releases kv_malloc's memory, though the producer's own text names no releaser. A
    string the library keeps, whose text names the allocator only in passing and speaks of
    "releasing" a lock, has no releaser (freeing it was a bad free on every input)."""
    from fuzzkit.header_facts_collect import collect_facts

    header = tmp_path / "kv.h"
    header.write_text(
        "typedef struct kv_store kv_store;\n"
        "/** Allocate n bytes; release them with kv_free(). */\nvoid *kv_malloc(int n);\n"
        "/** Give back memory. */\nvoid kv_free(void *p);\n"
        "/** Copy the store into memory obtained from kv_malloc64() and return it. The caller is\n"
        "    responsible for freeing the returned value. */\n"
        "unsigned char *kv_dump(kv_store *s, long *n);\n"
        "/** Copy the store into memory obtained from kv_malloc64(). */\n"
        "unsigned char *kv_peek(kv_store *s);\n"
        "/** The name of table n. Space for it is managed by the store itself and may be reused\n"
        "    after calls to kv_malloc(). Threads copy it before releasing the store's lock. */\n"
        "const char *kv_table_name(kv_store *s, int n);\n"
    )
    api = parse_header(header, [tmp_path])
    released = {(r.function, r.releases) for r in collect_facts([header], [tmp_path], [], api).releasers}
    assert ("kv_free", "what kv_dump allocates") in released
    borrowed = {"what kv_peek allocates", "what kv_table_name allocates"}
    assert not any(what in borrowed for _fn, what in released)


def test_deprecated_and_internal_functions_are_told_apart(tmp_path: Path) -> None:
    header = tmp_path / "pix.h"
    header.write_text(
        "/** Decode a picture. */\nint pix_decode(const unsigned char *d, int n);\n"
        "/*! \\internal */\nvoid pix_utf16_to_utf8(char *out, const unsigned char *in, int maxlen);\n"
        "/** @internal Swap bytes. */\nvoid pix_swap(unsigned char *b, int n);\n"
        "/** Set up a cipher.\n * \\internal Currently, it also clears the structure. */\n"
        "int pix_setup(unsigned char *ctx);\n"
        "__attribute__((deprecated)) int pix_decode_fast(const unsigned char *d);\n"
        "/** Internal errors are reported through the log. */\nint pix_check(const char *s);\n"
    )
    assert deprecated_functions(header) == {"pix_utf16_to_utf8", "pix_swap", "pix_decode_fast"}


def test_a_releaser_of_what_a_maker_returns_says_the_library_allocates_it(tmp_path: Path) -> None:
    """``ob_buf_free`` frees what ``ob_buf_new`` makes, ``ob_pix_close`` what ``ob_alloc_pix`` makes
    (a pointer typedef, the same spelling on both sides): the note keeps a stack struct from them;
    ``cx_free`` clears a context only ever initialized in place, so it gets no note."""
    from fuzzkit.header_facts_collect import collect_facts

    header = tmp_path / "ob.h"
    header.write_text(
        "typedef struct ob_buf ob_buf_t;\ntypedef struct cx { int n; } cx_ctx_t;\n"
        "typedef struct ob_pix ob_pix;\ntypedef ob_pix *ob_pix_p;\n"
        "ob_buf_t *ob_buf_new(void);\nvoid ob_buf_free(ob_buf_t *buf);\n"
        "ob_pix_p ob_alloc_pix(void);\nint ob_pix_close(ob_pix_p pix);\n"
        "void cx_init(cx_ctx_t *cx);\nvoid cx_free(cx_ctx_t *cx);\n"
    )
    api = parse_header(header, [tmp_path])
    found = {r.function: (r.evidence, r.heap) for r in collect_facts([header], [tmp_path], [], api).releasers}
    assert found["ob_buf_free"] == found["ob_pix_close"] == ("parameter type", True)
    assert found["cx_free"] == ("parameter type", False)


def test_static_inline_helpers_are_read_apart_from_the_librarys_prototypes(tmp_path: Path) -> None:
    """A result record released by an inline helper: callable, though the library has no such symbol."""
    from fuzzkit.headers import inline_functions

    header = tmp_path / "mp.h"
    header.write_text(
        "#include <stddef.h>\n"
        "typedef struct mp_zone mp_zone;\n"
        "typedef struct { mp_zone *zone; int kind; } mp_result;\n"
        "void mp_zone_free(mp_zone *zone);\n"
        "int mp_next(mp_result *result, const char *data, size_t len, size_t *off);\n"
        "static inline void mp_result_init(mp_result *result);\n"
        "static inline void mp_result_destroy(mp_result *result);\n"
        "static inline void mp_result_init(mp_result *result) { result->zone = NULL; }\n"
        "static inline void mp_result_destroy(mp_result *result) {\n"
        "  if (result->zone) mp_zone_free(result->zone);\n}\n"
        "static inline int _mp_private(int x) { return x; }\n"
    )
    assert [d.name for d in parse_header(header)] == ["mp_zone_free", "mp_next"]
    helpers = inline_functions([header], known={"mp_result_init"})
    assert [d.name for d in helpers] == ["mp_result_destroy"]  # once, known names and `_` ones left out
    assert helpers[0].params == (Param("result", "mp_result *"),)


def test_an_inline_helper_in_the_api_is_still_read_as_the_wrapper_it_is(tmp_path: Path) -> None:
    """`mp_init(c)` wraps `mp_init_internal(c, MP_ABI)`: the engine calls the wrapped function with the
    constant, so the helper's presence in the API must not hide the wrapper (or count as wrapped)."""
    from fuzzkit.header_facts_collect import collect_facts
    from fuzzkit.headers import inline_functions

    header = tmp_path / "mp.h"
    header.write_text(
        "#define MP_ABI 0x0203\n"
        "typedef struct { int level; } mp_cfg;\n"
        "int mp_init_internal(mp_cfg *c, int abi);\n"
        "static inline int mp_init(mp_cfg *c) { return mp_init_internal(c, MP_ABI); }\n"
        "static inline int mp_init_default(mp_cfg *c) { return mp_init(c); }\n"
    )
    api = parse_header(header) + inline_functions([header])
    assert [d.name for d in api] == ["mp_init_internal", "mp_init", "mp_init_default"]
    facts = collect_facts([header], api=api, helpers={"mp_init", "mp_init_default"})
    assert {(w.function, w.caller) for w in facts.wrappers} == {("mp_init_internal", "mp_init")}
    assert collect_facts([header], api=api).wrappers == []  # read as library functions, no wrapper shows


def test_a_buffer_documented_as_taken_over_is_listed_with_its_setter(tmp_path: Path) -> None:
    from fuzzkit.header_facts_collect import collect_facts

    header = tmp_path / "yq.h"
    header.write_text(
        "#include <stddef.h>\n"
        "struct yq_parser;\n"
        "/** Parse the given malloced string; ownership is transferred to the parser. */\n"
        "int yq_parser_set_malloc_string(struct yq_parser *p, char *str, size_t len);\n"
        "/** Parse the given string; it must stay valid. */\n"
        "int yq_parser_set_string(struct yq_parser *p, const char *str, size_t len);\n"
    )
    facts = collect_facts([header], api=parse_header(header))
    assert facts.adopts == ["yq_parser_set_malloc_string"]  # a const string is never taken over


def test_a_header_using_the_main_one_s_types_is_included_after_it(tmp_path: Path) -> None:
    root = tmp_path / "toolbox-1.0"  # neither header is named after the project
    root.mkdir()
    # `tl-events.h` uses `tl_interp` without including `tl.h`: alphabetically first, it breaks
    # every harness on its first line.
    (root / "tl.h").write_text("#pragma once\ntypedef struct tl_interp tl_interp;\n"
                               "int tl_eval(tl_interp *in, const char *script);\n")
    (root / "tl-events.h").write_text("int tl_events_run(tl_interp *in, int ms);\n")
    (root / "tl.c").write_text('#include "tl.h"\n'
                               "int tl_eval(tl_interp *in, const char *s) { return !in || !s; }\n")
    (root / "tl-events.c").write_text('#include "tl.h"\n#include "tl-events.h"\n'
                                      "int tl_events_run(tl_interp *in, int ms) { return !in + ms; }\n")
    events, main = root / "tl-events.h", root / "tl.h"
    assert include_order([events, main], [root], []) == [main, events]
    assert include_order([main, events], [root], []) == [main, events]  # the listed order works
    found = detect_build(root, system="sources", cache=tmp_path / "cache")
    assert found.recipe.headers == ["tl.h", "tl-events.h"]
