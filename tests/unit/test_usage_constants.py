"""The header constants the library's own code passes, as the offline engine takes them."""

from __future__ import annotations

from pathlib import Path

from agents.offline.usage import usage_constants
from fuzzkit.api import FunctionDecl, Param
from fuzzkit.usage_index import header_macro_names
from fuzzkit.usage_models import Arg, ObjectProtocol, Step, TargetProtocol, UsageFacts

API = [
    FunctionDecl("ab_create", "ab *", [Param("abi", "const char *")]),
    FunctionDecl("ab_create_ex", "ab *", [Param("abi", "const char *"), Param("flags", "int")]),
    FunctionDecl("ab_open", "int", [Param("a", "ab *"), Param("mode", "int")]),
    FunctionDecl("ab_other", "int", [Param("abi", "int")]),
]


def _facts() -> UsageFacts:
    make = Step(call="ab_create", args=[Arg(text="AB_VERSION", kind="constant", constants=["AB_VERSION"],
                                            public=True)])
    open_read = Step(call="ab_open", args=[Arg(text="a", kind="object", var="a"),
                                           Arg(text="AB_READ | AB_FAST", kind="constant",
                                               constants=["AB_READ", "AB_FAST"], public=True)])
    open_local = Step(call="ab_open", args=[Arg(text="a", kind="object", var="a"),
                                            Arg(text="TEST_MODE", kind="constant", constants=["TEST_MODE"])])
    return UsageFacts(objects=[ObjectProtocol(type="ab *", make=[make])],
                      targets=[TargetProtocol(function="ab_open", seen_in="t.c:main",
                                              sequence=[open_read, open_local, open_read])])


def test_only_the_headers_constants_are_taken_each_once() -> None:
    found = usage_constants(_facts(), API)
    assert found["ab_open"] == {1: ["AB_READ | AB_FAST"]}  # a test's own macro would not compile
    assert found["ab_create"] == {0: ["AB_VERSION"]}


def test_a_parameter_of_the_same_name_and_type_elsewhere_gets_them() -> None:
    found = usage_constants(_facts(), API)
    assert found["ab_create_ex"] == {0: ["AB_VERSION"]}  # the same `const char *abi`
    assert "ab_other" not in found  # `int abi` is another parameter


def test_no_usage_no_constants() -> None:
    assert usage_constants(UsageFacts(), API) == {}


def test_header_macro_names_are_object_like_defines(tmp_path: Path) -> None:
    header = tmp_path / "ab.h"
    header.write_text('#define AB_VERSION "1.2"\n# define AB_READ (1 << 0)\n#define ab_min(a, b) a\n'
                      "#define AB_EMPTY\n")
    assert header_macro_names([str(header), str(tmp_path / "missing.h")]) == {"AB_VERSION", "AB_READ",
                                                                             "AB_EMPTY"}


def _replay_facts(init_args: list[Arg]) -> UsageFacts:
    steps = [Step(call="ab_init", args=init_args),
             Step(call="ab_feed", args=[Arg(text="&s", kind="variable", var="s", address=True),
                                        Arg(text="buf", kind="data", var="buf"),
                                        Arg(text="n", kind="size", var="n")])]
    return UsageFacts(targets=[TargetProtocol(function="ab_feed", seen_in="t.c:main", sequence=steps,
                                              variables={"s": "ab_stream", "buf": "const unsigned char *",
                                                         "n": "size_t"})])


def test_a_call_whose_macro_lost_its_arguments_is_not_replayed() -> None:
    from agents.offline.usage import usage_draft

    api = [FunctionDecl("ab_init", "int", [Param("s", "ab_stream *"), Param("version", "const char *")]),
           FunctionDecl("ab_feed", "int", [Param("s", "ab_stream *"), Param("data", "const unsigned char *"),
                                           Param("size", "size_t")])]
    whole = [Arg(text="&s", kind="variable", var="s", address=True), Arg(text="AB_V", kind="constant")]
    assert usage_draft(_replay_facts(whole), api[1], api, ["ab.h"]) is not None
    lost = [Arg(text=""), Arg(text="")]  # `ab_init_(, )`: what a macro's lost arguments read as
    assert usage_draft(_replay_facts(lost), api[1], api, ["ab.h"]) is None
    assert usage_draft(_replay_facts(whole[:1]), api[1], api, ["ab.h"]) is None  # one argument short


def test_a_follow_up_on_an_object_the_slice_never_makes_is_left_out() -> None:
    from fuzzkit.usage_models import CallSite, UsageFunction
    from fuzzkit.usage_protocols import target_slice

    chain, it = Arg(text="chain", kind="object", var="chain"), Arg(text="it", kind="object", var="it")
    calls = [CallSite(function="ch_new", result="chain", result_var="chain"),
             CallSite(function="ch_read", args=[chain, Arg(text="buf", kind="data", var="buf")]),
             CallSite(function="ch_count", args=[chain]),
             CallSite(function="it_init", args=[it, chain]),  # `it` is made in another function
             CallSite(function="ch_delete", args=[chain])]
    fn = UsageFunction(file="t.c", name="t", calls=calls,
                       variables={"chain": "ch *", "it": "ch_it *", "buf": "const char *"},
                       inits={"chain": "NULL", "it": "NULL"})  # declared NULL: no value yet
    steps, complete = target_slice(fn, "ch_read")
    assert [c.function for c in steps] == ["ch_new", "ch_read", "ch_count", "ch_delete"]
    assert complete


def test_a_file_name_is_replayed_as_the_input_s_file_or_not_at_all() -> None:
    from agents.offline.usage import usage_draft

    api = [FunctionDecl("ch_new", "ch *", []),
           FunctionDecl("ch_read", "int", [Param("c", "ch *"), Param("filename", "const char *")]),
           FunctionDecl("ch_delete", "void", [Param("c", "ch *")])]
    chain = Arg(text="chain", kind="object", var="chain")
    steps = [Step(call="ch_new", result="chain"),
             Step(call="ch_read", args=[chain, Arg(text="path", kind="data", var="path")]),
             Step(call="ch_delete", args=[chain])]
    facts = UsageFacts(targets=[TargetProtocol(function="ch_read", seen_in="t.c:main", sequence=steps,
                                               variables={"chain": "ch *", "path": "const char *"})])
    file_skeleton = "\n".join(["int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {",
                               "  char lf_path[64]; int lf_fd = lf_tmpfile(data, size, lf_path, 64);",
                               *(f"  /* @LF:{s} */" for s in ("INCLUDES", "GLOBALS", "GUARD", "SETUP",
                                                              "CALL", "USE", "CLEANUP")), "}"])
    replayed = usage_draft(facts, api[1], api, ["ch.h"], file_skeleton)
    assert replayed is not None and "ch_read(chain, lf_path)" in replayed[0], replayed
    assert usage_draft(facts, api[1], api, ["ch.h"]) is None  # no file to name: the synthesizer drafts


def test_the_maker_of_an_object_far_above_the_target_stays_in_the_slice() -> None:
    from fuzzkit.usage_models import CallSite, UsageFunction
    from fuzzkit.usage_protocols import MAX_STEPS, target_slice

    block = Arg(text="block", kind="object", var="block")
    kind = Arg(text="OBJ_COMMENT", kind="constant", constants=["OBJ_COMMENT"], public=True)
    calls = [CallSite(function="obj_new", args=[kind], result="block", result_var="block"),
             *(CallSite(function=f"obj_set{i}", args=[block]) for i in range(MAX_STEPS)),
             CallSite(function="obj_remove", args=[block, Arg(text='"x"', kind="string")])]
    fn = UsageFunction(file="t.c", name="t", calls=calls, variables={"block": "obj *"},
                       inits={"block": "NULL"})
    steps, complete = target_slice(fn, "obj_remove")
    assert steps[0].function == "obj_new" and complete
    assert len(steps) == 1 + MAX_STEPS // 2 + 1


def test_the_target_s_setup_constant_is_the_only_value_its_maker_gets() -> None:
    from agents.offline.usage import usage_setup_constants

    api = [FunctionDecl("obj_new", "obj *", [Param("type", "obj_type")]),
           FunctionDecl("obj_remove", "int", [Param("o", "obj *"), Param("name", "const char *")]),
           FunctionDecl("obj_delete", "void", [Param("o", "obj *")])]
    block = Arg(text="block", kind="object", var="block")
    steps = [Step(call="obj_new", result="block", args=[Arg(text="OBJ_COMMENT", kind="constant",
                                                            constants=["OBJ_COMMENT"], public=True)]),
             Step(call="obj_remove", args=[block, Arg(text='"x"', kind="string")]),
             Step(call="obj_new", args=[Arg(text="OBJ_PAD", kind="constant", constants=["OBJ_PAD"],
                                            public=True)])]
    facts = UsageFacts(targets=[TargetProtocol(function="obj_remove", seen_in="t.c:t", sequence=steps,
                                               fed=False, variables={"block": "obj *"})])
    setup = usage_setup_constants(facts, api[1])
    assert setup == {"obj_new": {0: "OBJ_COMMENT"}}  # not the OBJ_PAD made after it
    from agents.offline.analysis import analyze_function
    from agents.offline.synth import default_skeleton, write_harness
    from agents.offline.synth_types import UsageHints

    arche = analyze_function(api[1], api).archetype
    code = write_harness(api[1], api, ["obj.h"], arche, default_skeleton(arche),
                         usage=UsageHints(setup=setup, constants=usage_constants(facts, api))).code
    assert "obj_new((obj_type)OBJ_COMMENT)" in code, code
    assert "OBJ_PAD" not in code, code


def test_a_folder_named_with_a_test_word_holds_usage() -> None:
    from fuzzkit.usage_sources import origin_of

    assert origin_of(Path("src/test_libab/metadata.c")) == "test"
    assert origin_of(Path("api-examples/a.c")) == "example"
    assert origin_of(Path("src/libab/metadata.c")) is None
    assert origin_of(Path("src/latest/x.c")) is None  # a word, not a substring


def test_a_replayed_setjmp_lands_on_the_cleanup() -> None:
    from agents.offline.usage import usage_draft

    api = [FunctionDecl("sj_create", "sj_p", []),
           FunctionDecl("sj_set_jmp", "jmp_buf *", [Param("p", "sj_p"), Param("fn", "sj_jmp_fn"),
                                                    Param("size", "size_t")]),
           FunctionDecl("sj_read", "int", [Param("p", "sj_p"), Param("data", "const unsigned char *"),
                                           Param("size", "size_t")]),
           FunctionDecl("sj_free", "void", [Param("p", "sj_p")])]
    p = Arg(text="p", kind="object", var="p")
    steps = [Step(call="sj_create", result="p"),
             Step(call="setjmp", args=[Arg(text="(*sj_set_jmp((p), longjmp, sizeof(jmp_buf)))", kind="size",
                                           var="p")]),
             Step(call="sj_read", args=[p, Arg(text="buf", kind="data", var="buf"),
                                        Arg(text="n", kind="size", var="n")]),
             Step(call="sj_free", args=[p])]
    facts = UsageFacts(targets=[TargetProtocol(function="sj_read", seen_in="t.c:main", sequence=steps,
                                               variables={"p": "sj_p", "buf": "const unsigned char *",
                                                          "n": "size_t"})])
    replayed = usage_draft(facts, api[2], api, ["sj.h"])
    assert replayed is not None
    code = replayed[0]
    assert ("if (setjmp((*sj_set_jmp((p), longjmp, sizeof(jmp_buf))))) { if (lf_jumps++) return 0; "
            "goto lf_cleanup; }") in code, code
    assert code.index("setjmp(") < code.index("sj_read(") < code.index("lf_cleanup: ;"), code
    assert "#include <setjmp.h>" in code, code


def test_a_flag_that_hands_a_buffer_over_is_never_offered() -> None:
    flags = Arg(text="DB_RESIZEABLE | DB_FREEONCLOSE", kind="constant",
                constants=["DB_RESIZEABLE", "DB_FREEONCLOSE"], public=True)
    facts = UsageFacts(targets=[TargetProtocol(function="ab_open", seen_in="t.c:t", sequence=[
        Step(call="ab_open", args=[Arg(text="a", kind="object", var="a"), flags])])])
    assert usage_constants(facts, API) == {}


def test_the_jump_guard_names_the_harness_s_object_and_never_cleans_twice() -> None:
    from agents.offline.usage import with_jump_guard

    jump = Step(call="setjmp", args=[Arg(text="(*sj_set_jmp((p), longjmp, sizeof(jmp_buf)))", kind="size",
                                         var="reader")])
    facts = UsageFacts(objects=[ObjectProtocol(type="sj_p", configure=[jump])])
    harness = "\n".join([
        "/* @LF:INCLUDES */", "int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {",
        "  sj_p sj2 = NULL;", "  sj2 = sj_create();", "  /* @LF:CALL */", "  sj_read(sj2, data, size);",
        "  /* @LF:CLEANUP */", "  sj_free(sj2);", "  return 0;", "}"])
    code, notes = with_jump_guard(harness, facts)
    assert "if (setjmp((*sj_set_jmp((sj2), longjmp, sizeof(jmp_buf))))) { if (lf_jumps++) return 0; " \
           "goto lf_cleanup; }" in code, code
    assert "lf_cleanup: ;" in code and "#include <setjmp.h>" in code and notes
    assert with_jump_guard(code, facts) == (code, [])  # one guard
    looped = harness.replace("  /* @LF:CALL */", "  for (int lf_round = 0; lf_round < 4; lf_round++) {\n"
                             "    /* @LF:CALL */").replace("  /* @LF:CLEANUP */", "  }\n  /* @LF:CLEANUP */")
    code, _notes = with_jump_guard(looped, facts)
    assert code.index("setjmp(") < code.index("for (int lf_round"), code  # set once, before the loop
    # a call SETUP makes on the object after making it may jump too: the guard goes before it
    read_first = harness.replace("  sj2 = sj_create();", "  sj2 = sj_create();\n"
                                 "  if (sj2 == NULL) goto lf_cleanup;\n  sj_read_header(sj2);")
    code, _notes = with_jump_guard(read_first, facts)
    assert code.index("sj_create()") < code.index("setjmp(") < code.index("sj_read_header(sj2)"), code
