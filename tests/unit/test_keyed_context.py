"""A cipher context is keyed before use: its initializer, then its ``setkey``, then the call.

``blk_crypt_cbc(ctx, ...)`` (an invented API) on a context that was only initialised reads a key
schedule nobody wrote: every draft and every improvement on a new context crashed (a development
-set library's block ciphers, SEGV in the cipher round after round). A function that binds a key
to the object (named ``setkey`` or ``set ... key``, the object first, key bytes after, a status
back) is called after the initializer, its key and length drawn from the input's end, its
status checked; a failed keying skips the call.
"""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.synth_api import ApiIndex
from fuzzkit.api import FunctionDecl, Param

CTX = Param("ctx", "blk_ctx *")
CBC = FunctionDecl("blk_crypt_cbc", "int", (CTX, Param("mode", "int"), Param("length", "size_t"),
                                             Param("iv", "unsigned char *"),
                                             Param("input", "const unsigned char *"),
                                             Param("output", "unsigned char *")), "blk.h")
SETKEY = FunctionDecl("blk_setkey_enc", "int", (CTX, Param("key", "const unsigned char *"),
                                                 Param("keybits", "unsigned int")), "blk.h")
SETKEY_DEC = FunctionDecl("blk_setkey_dec", "int", SETKEY.params, "blk.h")
API = [CBC, SETKEY_DEC, SETKEY, FunctionDecl("blk_init", "void", (CTX,), "blk.h"),
       FunctionDecl("blk_free", "void", (CTX,), "blk.h"),
       FunctionDecl("blk_set_mode", "int", (CTX, Param("mode", "int")), "blk.h"),
       FunctionDecl("blk_key_check", "int", (Param("key", "const unsigned char *"),), "blk.h"),
       FunctionDecl("blk_setkey_fixed", "int", (CTX, Param("key", "const unsigned char *")), "blk.h"),
       FunctionDecl("blk_setkey_cb", "int", (CTX, Param("key", "const unsigned char *"), Param("bits", "int"),
                                             Param("cb", "int (*)(void *)")), "blk.h")]


def draft(api: list[FunctionDecl]) -> str:
    analysis = analyze_function(CBC, api)
    return write_harness(CBC, api, ["blk.h"], analysis.archetype, default_skeleton(analysis.archetype),
                         rules=analysis.rules).code


def test_the_keyers_of_an_object_are_its_setkey_functions_encrypting_first() -> None:
    # a fixed-size key (no length) would be read whole from a shorter input, and a callback is
    # more than a key to build: not keyers
    assert [f.name for f in ApiIndex(API).keyers("blk_ctx")] == ["blk_setkey_enc", "blk_setkey_dec"]


def test_the_context_is_keyed_after_its_initializer_and_before_the_call() -> None:
    code = draft(API)
    init, key, call = (code.index(s) for s in ("blk_init(&", "blk_setkey_enc(&", "blk_crypt_cbc(&"))
    assert init < key < call
    keyed = re.search(r"(\w+) = blk_setkey_enc\(&\w+, \(const unsigned char \*\)(\w+), [^;]*\);", code)
    assert keyed, code
    assert re.search(rf"if \(!\({keyed.group(1)} [^)]*\)\) goto lf_cleanup;", code)  # a failed keying skips
    assert f"free({keyed.group(2)});" in code


def test_without_a_keyer_the_draft_is_as_before() -> None:
    code = draft([f for f in API if "setkey" not in f.name])
    assert "setkey" not in code and "blk_crypt_cbc(&" in code


def test_an_improvement_keys_the_new_context_it_calls_the_cipher_on() -> None:
    from agents.offline.improver import improve_harness

    decode = FunctionDecl("blk_decode_text", "int", (Param("text", "const char *"), Param("len", "size_t")),
                          "blk.h")
    api = [decode, *API]
    analysis = analyze_function(decode, api)
    first = write_harness(decode, api, ["blk.h"], analysis.archetype, default_skeleton(analysis.archetype),
                          rules=analysis.rules).code
    made = improve_harness(first, decode, api, ["blk_crypt_cbc"])
    assert made.directions == ["call blk_crypt_cbc on a new blk_ctx"]
    block = made.code[made.code.index("LF improve: call blk_crypt_cbc"):]
    assert block.index("blk_init(&") < block.index("blk_setkey_enc(&") < block.index("blk_crypt_cbc(&")
