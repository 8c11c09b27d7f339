"""A length named before its buffers measures the input after it (a block cipher's call).

``blk_crypt_cbc(ctx, mode, length, iv, input, output)`` (invented): left an option value, the
length read past a short input, a heap overflow blamed on the harness, once per cipher of a
development-set library in one improvement after another.
"""

from __future__ import annotations

from agents.offline.analysis import analyze_function
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.synth_api import ApiIndex
from agents.offline.synth_roles import roles
from fuzzkit.api import FunctionDecl, Param

CTX = Param("ctx", "blk_ctx *")
CBC = FunctionDecl("blk_crypt_cbc", "int", (CTX, Param("mode", "int"), Param("length", "size_t"),
                                             Param("iv", "unsigned char *"),
                                             Param("input", "const unsigned char *"),
                                             Param("output", "unsigned char *")), "blk.h")
API = [CBC, FunctionDecl("blk_init", "void", (CTX,), "blk.h"),
       FunctionDecl("blk_free", "void", (CTX,), "blk.h")]


def test_the_length_before_the_buffers_is_the_input_s() -> None:
    found = roles(CBC, ApiIndex(API))
    assert (found[2].kind, found[2].pair) == ("len", 4)
    assert (found[4].kind, found[4].pair) == ("bytes", 2)
    assert found[1].kind == "int"  # the mode stays an option


def test_the_draft_passes_the_payload_and_its_size() -> None:
    analysis = analyze_function(CBC, API)
    code = write_harness(CBC, API, ["blk.h"], analysis.archetype, default_skeleton(analysis.archetype),
                         rules=analysis.rules).code
    assert "blk_crypt_cbc(&ctx, mode, (size_t)size, (unsigned char *)iv, (const unsigned char *)data," in code


def test_an_output_capacity_named_first_is_not_taken_for_the_input_s() -> None:
    fn = FunctionDecl("blk_wrap", "int", (CTX, Param("out_len", "size_t"),
                                          Param("input", "const unsigned char *"),
                                          Param("output", "unsigned char *")), "blk.h")
    found = roles(fn, ApiIndex([fn, *API[1:]]))
    assert found[1].kind != "len" and found[2].pair is None
