"""The header's own inline wrappers and macros: their fixed arguments reach the harness."""

from __future__ import annotations

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from fuzzkit.header_facts import HeaderFacts, Record
from fuzzkit.header_wrappers import (
    Wrapper,
    body_tokens,
    call_arguments,
    fixed_arguments,
    function_wrapper,
    macro_wrapper,
)
from tests.types_text import render_types

HEADER = """\
int qz_cfg_init_internal(qz_cfg *cfg, int preset, float quality, int version);
static inline int qz_cfg_init(qz_cfg *cfg) {
  /* the defaults, checked against the library's ABI */
  return qz_cfg_init_internal(cfg, QZ_PRESET_DEFAULT, 75.f, QZ_ABI_VERSION);
}
static inline int qz_cfg_preset(qz_cfg *cfg, int preset, float quality) {
  return qz_cfg_init_internal(cfg, preset, quality, QZ_ABI_VERSION);
}
"""
API = {"qz_cfg_init_internal", "qz_open_internal"}


def _wrappers() -> list[Wrapper]:
    found = []
    for name, params in (("qz_cfg_init", ["cfg"]), ("qz_cfg_preset", ["cfg", "preset", "quality"])):
        end = HEADER.index(")", HEADER.index(f"int {name}(")) + 1
        found += function_wrapper(name, params, body_tokens(HEADER, end), API)
    return found


def test_a_static_inline_body_is_read_from_the_text_and_its_fixed_arguments_found() -> None:
    first, second = _wrappers()
    assert first == Wrapper("qz_cfg_init_internal", ("cfg", "QZ_PRESET_DEFAULT", "75.f", "QZ_ABI_VERSION"),
                            "qz_cfg_init", ("cfg",))
    assert first.fixed() == {1: "QZ_PRESET_DEFAULT", 2: "75.f", 3: "QZ_ABI_VERSION"}
    assert second.fixed() == {3: "QZ_ABI_VERSION"}
    # A value one wrapper lets its caller choose is an option: only the version is fixed.
    assert fixed_arguments([first, second]) == {"qz_cfg_init_internal": {3: "QZ_ABI_VERSION"}}
    prototype_end = HEADER.index(";") + 1
    assert body_tokens(HEADER, prototype_end - 1) == []  # a prototype has no body


def test_a_function_like_macro_fixes_what_it_does_not_take() -> None:
    tokens = ["qz_open", "(", "h", ",", "flags", ")", "qz_open_internal", "(", "(", "h", ")", ",",
              "(", "flags", ")", ",", "QZ_ABI_VERSION", ",", "(", "int", ")", "sizeof", "(", "qz_h",
              ")", ")"]
    (call,) = macro_wrapper(tokens, True, API)
    assert call.args == ("h", "flags", "QZ_ABI_VERSION", "(int)sizeof(qz_h)")
    assert call.fixed() == {2: "QZ_ABI_VERSION", 3: "(int)sizeof(qz_h)"}
    assert macro_wrapper(tokens, False, API) == []  # `NAME (x)` is an object-like macro
    assert call_arguments("h, f(a, b), 2") == ("h", "f(a,b)", "2")


def test_the_types_section_carries_them_and_the_draft_passes_the_fixed_version() -> None:
    facts = HeaderFacts(records=[Record("struct", "qz_cfg", ("qz_cfg",), (("threads", "int"),), False)],
                        wrappers=_wrappers())
    assert HeaderFacts.from_dict(facts.to_dict()) == facts
    table = read_types(facts.render())
    assert table.fixed_args == {"qz_cfg_init_internal": {3: "QZ_ABI_VERSION"}}
    decls = parse_prototypes(
        "typedef struct qz_cfg qz_cfg;\n"
        "int qz_cfg_init_internal(qz_cfg *cfg, int preset, float quality, int);\n"
        "int qz_run(const qz_cfg *cfg, const unsigned char *data, size_t size);\n"
    )
    target = next(d for d in decls if d.name == "qz_run")
    with using(table):
        arche = analyze_function(target, decls).archetype
        code = write_harness(target, decls, ["qz.h"], arche, default_skeleton(arche)).code
    assert "qz_cfg_init_internal(" in code
    call = code[code.index("qz_cfg_init_internal(") :].split(";")[0]
    assert call.endswith("QZ_ABI_VERSION)"), call


RELEASED = """\
void qz_pool_free(void *p);
void qz_free(void *p);
unsigned char *qz_decode_rgb(const unsigned char *data, size_t size, int *width, int *height);
unsigned char *qz_decode_bgr(const unsigned char *data, size_t size, int *width, int *height);
"""


def test_a_documented_releaser_frees_the_result_of_its_producer_and_of_same_shape_variants() -> None:
    from agents.offline.synth_api import ApiIndex
    from agents.offline.synth_blocks import call_block

    decls = parse_prototypes(RELEASED)
    table = read_types(render_types("Release functions:\n"
                                    "- qz_free releases what qz_decode_rgb allocates (by documentation)\n"))
    bgr = next(d for d in decls if d.name == "qz_decode_bgr")
    with using(table):
        idx = ApiIndex(decls)
        assert idx.returns_owned(bgr) and idx.documented_releaser(bgr) == "qz_free"
        code = write_harness(bgr, decls, ["qz.h"], "stateless_parser",
                             default_skeleton("stateless_parser")).code
        block = call_block(idx, bgr, [], set(), set(), 1)
    assert "qz_free(result)" in code and "qz_pool_free" not in code
    assert block is not None and any("qz_free(" in line for line in block.lines)
    assert not ApiIndex(decls).returns_owned(bgr)  # without the Types section: not known


def test_an_acronym_prefix_is_its_own_word_so_its_free_function_is_a_releaser() -> None:
    from fuzzkit.header_facts import _words

    assert _words("QXFree") == ["qx", "free"] and _words("QXPictureFree") == ["qx", "picture", "free"]
    assert _words("acme_free_reply") == ["acme", "free", "reply"]


def test_out_pointers_of_the_returned_block_s_type_are_views_into_it() -> None:
    decls = parse_prototypes(
        "void qz_free(void *p);\n"
        "unsigned char *qz_decode_yuv(const unsigned char *data, size_t size, int *width, int *height,"
        " unsigned char **u, unsigned char **v);\n")
    table = read_types(render_types("Release functions:\n"
                                    "- qz_free releases what qz_decode_yuv allocates (by documentation)\n"))
    yuv = next(d for d in decls if d.name == "qz_decode_yuv")
    with using(table):
        code = write_harness(yuv, decls, ["qz.h"], "stateless_parser",
                             default_skeleton("stateless_parser")).code
    assert "qz_free(result)" in code
    assert "qz_free(u)" not in code and "qz_free(v)" not in code and "free(u)" not in code
