"""A decoder made by its constructor, set up by the target with a reader callback, then driven.

An invented audio library: ``sd_decoder`` is a record the library allocates
(``sd_decoder_new()``, its private parts behind a pointer) and releases (``sd_decoder_delete``).
``sd_decoder_init_stream(dec, read, error, client)`` registers a reader that is handed the user
pointer last and the size it may fill by pointer (``size_t *bytes``: asked in, served out), and
answers with a status enum whose members say "continue" and "end of stream". Nothing is read
until ``sd_decoder_process_until_end_of_stream(dec)``: the library's own tests call it, then
``sd_decoder_finish(dec)``, after the init. A stack ``sd_decoder`` set up by another initializer
(``sd_decoder_init_FILE``) would leave the private parts NULL.
"""

from __future__ import annotations

import re
from pathlib import Path

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from agents.offline.usage import usage_followups, usage_hints
from fuzzkit.api import FunctionDecl
from fuzzkit.select_io import reads_through_callback
from fuzzkit.usage_models import Arg, ObjectProtocol, Step, TargetProtocol, UsageFacts
from tests.types_text import render_types

API = """
typedef unsigned char sd_byte;
typedef struct { struct sd_private *private_; } sd_decoder;
typedef enum { SD_READ_STATUS_CONTINUE, SD_READ_STATUS_END_OF_STREAM, SD_READ_STATUS_ABORT } sd_read_status;
typedef enum { SD_INIT_STATUS_OK, SD_INIT_STATUS_ERROR } sd_init_status;
typedef sd_read_status (*sd_read_cb)(const sd_decoder *dec, sd_byte buffer[], size_t *bytes, void *client);
typedef void (*sd_error_cb)(const sd_decoder *dec, int status, void *client);
sd_decoder *sd_decoder_new(void);
void sd_decoder_delete(sd_decoder *dec);
sd_init_status sd_decoder_init_stream(sd_decoder *dec, sd_read_cb read, sd_error_cb error, void *client);
sd_init_status sd_decoder_init_FILE(sd_decoder *dec, FILE *file, sd_error_cb error, void *client);
int sd_decoder_process_until_end_of_stream(sd_decoder *dec);
int sd_decoder_finish(sd_decoder *dec);
unsigned sd_decoder_get_channels(const sd_decoder *dec);
"""
TYPES = render_types("""```c
typedef unsigned char sd_byte;
typedef struct { struct sd_private *private_; } sd_decoder;
typedef enum { SD_READ_STATUS_CONTINUE = 0, SD_READ_STATUS_END_OF_STREAM = 1 } sd_read_status;
typedef enum { SD_INIT_STATUS_OK = 0, SD_INIT_STATUS_ERROR = 1 } sd_init_status;
typedef sd_read_status (*sd_read_cb)(const sd_decoder *, sd_byte *, size_t *, void *);
typedef void (*sd_error_cb)(const sd_decoder *, int, void *);
```
Release functions:
- sd_decoder_delete releases sd_decoder * (parameter type)
""")
CANONICAL = {"sd_read_cb": "sd_read_status (*)(const sd_decoder *, unsigned char *, unsigned long *, void *)"}


def _facts() -> UsageFacts:
    dec = Arg(text="dec", kind="object", var="dec")
    init = Step(call="sd_decoder_init_stream",
                args=[dec, Arg(text="read_cb", kind="callback"), Arg(text="error_cb", kind="callback"),
                      Arg(text="&client", kind="variable", var="client")])
    return UsageFacts(
        objects=[ObjectProtocol(type="sd_decoder *", make=[Step(call="sd_decoder_new", result="dec")],
                                feed=[init], release="sd_decoder_delete", uses=3)],
        targets=[TargetProtocol(
            function="sd_decoder_init_stream", seen_in="tests/decode.c:decode_stream", origin="test",
            complete=False, variables={"dec": "sd_decoder *"},
            sequence=[Step(call="sd_decoder_new", result="dec"), init,
                      Step(call="sd_decoder_process_until_end_of_stream", args=[dec]),
                      Step(call="sd_decoder_finish", args=[dec]),
                      Step(call="sd_decoder_delete", args=[dec])])])


def _draft(facts: UsageFacts) -> str:
    decls = parse_prototypes(API)
    target = next(d for d in decls if d.name == "sd_decoder_init_stream")
    with using(read_types(TYPES, decls)):
        arche = analyze_function(target, decls).archetype
        return write_harness(target, decls, ["sd.h"], arche, default_skeleton(arche),
                             usage=usage_hints(facts, target, decls)).code


def test_a_reader_handed_the_size_by_pointer_is_a_way_in_for_choosing_targets() -> None:
    decl = FunctionDecl.from_dict({
        "name": "sd_decoder_init_stream", "return_type": "sd_init_status",
        "params": [{"name": "dec", "type": "sd_decoder *"}, {"name": "read", "type": "sd_read_cb"},
                   {"name": "client", "type": "void *"}]})
    assert reads_through_callback(decl, CANONICAL)
    no_buffer = {"sd_read_cb": "int (*)(const sd_decoder *, unsigned long *, void *)"}
    assert not reads_through_callback(decl, no_buffer)


def test_the_decoder_is_made_as_the_usage_makes_it_fed_through_its_reader_and_driven() -> None:
    code = _draft(_facts())
    assert re.search(r"= sd_decoder_new\(\);", code), code
    assert "sd_decoder_init_FILE" not in code, code  # no second initializer on a stack record
    assert not re.search(r"sd_decoder \w+;", code), code
    # The reader serves the input from the user pointer (its last argument) and says when it ended.
    reader = re.search(r"static sd_read_status (\w+)\(.*?\n\}", code, re.S)
    assert reader, code
    body = reader.group(0)
    assert "(lf_input_t *)a3" in body and "*a2 = n;" in body, body
    assert "SD_READ_STATUS_CONTINUE" in body and "SD_READ_STATUS_END_OF_STREAM" in body, body
    call = re.search(r"sd_decoder_init_stream\((\w+), " + reader.group(1) + r", \w+, \(void \*\)&\w+\)", code)
    assert call, code
    # Then what the library's own code calls next, in its order, before the object's release.
    process = code.index("sd_decoder_process_until_end_of_stream(")
    assert call.start() < process < code.index("sd_decoder_finish(") < code.index("sd_decoder_delete("), code


def test_without_the_usage_the_draft_neither_makes_nor_drives_it_so() -> None:
    code = _draft(UsageFacts())
    assert "sd_decoder_process_until_end_of_stream(" not in code, code
    assert "sd_decoder_new()" not in code, code


def test_a_call_named_with_end_after_a_verb_of_work_is_a_follow_up_not_a_release() -> None:
    decls = parse_prototypes(API)
    target = next(d for d in decls if d.name == "sd_decoder_init_stream")
    after = usage_followups(_facts(), target)
    assert after == ["sd_decoder_process_until_end_of_stream", "sd_decoder_finish"], after


def test_a_callback_passed_to_several_init_variants_is_listed_once() -> None:
    from fuzzkit.usage_models import CallSite, UsageFunction, UsageIndex
    from fuzzkit.usage_protocols import target_protocol

    dec = Arg(text="dec", kind="object", var="dec")
    reader = Arg(text="read_cb", kind="callback")
    calls = [CallSite(function="sd_decoder_new", result="dec", result_var="dec", line=1),
             CallSite(function="sd_decoder_init_FILE", args=[dec, reader], line=2),
             CallSite(function="sd_decoder_init_stream", args=[dec, reader, Arg(text="data", kind="data")],
                      line=3),
             CallSite(function="sd_decoder_process_until_end_of_stream", args=[dec], line=4)]
    fn = UsageFunction(file="tests/decode.c", name="decode_all", origin="test",
                       variables={"dec": "sd_decoder *"}, calls=calls,
                       callbacks={"read_cb": "static sd_read_status read_cb(...) { ... }"})
    protocol = target_protocol(UsageIndex(functions=[fn]), "sd_decoder_init_stream")
    assert protocol is not None
    assert [cb.name for cb in protocol.callbacks] == ["read_cb"], protocol.callbacks


FILE_HEADER = """\
#include <stdio.h>
typedef struct sd_private sd_private;
typedef struct { sd_private *private_; } sd_decoder;
typedef void (*sd_error_cb)(const sd_decoder *, int, void *);
sd_decoder *sd_decoder_new(void);
void sd_decoder_delete(sd_decoder *dec);
/**
 * Set up a decoder to read a stream.
 * \\param dec  A decoder from sd_decoder_new().
 * \\param file An open file. The file becomes owned by the decoder and is closed by sd_decoder_finish().
 * \\param error Called on a decoding error.
 * \\param client Given to the callbacks.
 */
int sd_decoder_init_FILE(sd_decoder *dec, FILE *file, sd_error_cb error, void *client);
int sd_decoder_finish(sd_decoder *dec);
"""


def test_a_stream_documented_to_become_the_objects_is_not_closed_by_the_harness(tmp_path: Path) -> None:
    from fuzzkit.header_facts_collect import collect_facts

    header = tmp_path / "sd.h"
    header.write_text(FILE_HEADER)
    api = parse_prototypes("\n".join(line for line in FILE_HEADER.splitlines()
                                     if line.startswith(("sd_decoder *", "void sd", "int sd"))))
    facts = collect_facts([header], [tmp_path], api=api)
    assert facts.consumes == ["sd_decoder_init_FILE"], facts.consumes
    target = next(d for d in api if d.name == "sd_decoder_init_FILE")
    with using(read_types("\n".join(facts.render().splitlines()[1:]), api)):
        arche = analyze_function(target, api).archetype
        code = write_harness(target, api, ["sd.h"], arche, default_skeleton(arche)).code
    call = re.search(r"sd_decoder_init_FILE\(\w+, (\w+),", code)
    assert call, code
    fp = call.group(1)
    # Right after the call the harness lets go of the stream: the decoder closes it.
    assert re.search(rf"sd_decoder_init_FILE\([^;]*;\s*(?:\(void\)\w+;\s*)?{fp} = NULL;", code), code


def test_an_improvement_sets_up_a_decoder_made_as_the_usage_makes_it() -> None:
    from agents.offline.improver import improve_harness

    facts = _facts()
    decls = parse_prototypes(API)
    target = next(d for d in decls if d.name == "sd_decoder_init_stream")
    code = ('#include "sd.h"\nint LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {\n'
            "  /* @LF:USE */\n  /* @LF:CLEANUP */\n  return 0;\n}\n")
    with using(read_types(TYPES, decls)):
        hints = usage_hints(facts, target, decls)
        made = improve_harness(code, target, decls, ["sd_decoder_init_FILE"], usage=hints).code
        plain = improve_harness(code, target, decls, ["sd_decoder_init_FILE"]).code
    block = made[made.index("LF improve"):]
    assert "sd_decoder_new()" in block and "sd_decoder_init_FILE(" in block, block
    assert not re.search(r"sd_decoder \w+;", block), block  # no stack record for the initializer
    assert block.index("sd_decoder_init_FILE(") < block.index("sd_decoder_process_until_end_of_stream(")
    assert block.index("sd_decoder_process_until_end_of_stream(") < block.index("sd_decoder_delete(")
    assert re.search(r"sd_decoder \w+;", plain[plain.index("LF improve"):]), plain  # as before, without usage


def test_a_maker_of_the_targets_own_variable_in_another_branch_is_left_out() -> None:
    # `if (ns) p = sd_decoder_new_ns(); else p = sd_decoder_new();`: two makers in a row
    from fuzzkit.usage_models import CallSite, UsageFunction, UsageIndex
    from fuzzkit.usage_protocols import target_protocol

    dec = Arg(text="dec", kind="object", var="dec")
    calls = [CallSite(function="sd_decoder_new_ns", args=[Arg(text="'!'")], result="dec", result_var="dec",
                      line=1),
             CallSite(function="sd_decoder_new", result="dec", result_var="dec", line=2),
             CallSite(function="sd_decoder_process_until_end_of_stream", args=[dec], line=3),
             CallSite(function="sd_decoder_delete", args=[dec], line=4)]
    fn = UsageFunction(file="tests/bench.c", name="main", origin="test",
                       variables={"dec": "sd_decoder *"}, calls=calls)
    protocol = target_protocol(UsageIndex(functions=[fn]), "sd_decoder_new")
    assert protocol is not None
    first = [s.call for s in protocol.sequence][:2]
    assert first == ["sd_decoder_new", "sd_decoder_process_until_end_of_stream"], first
    # read in between, the first object is the test's own: it stays
    calls.insert(1, CallSite(function="sd_decoder_finish", args=[dec], line=1))
    read = fn.model_copy(update={"calls": calls})
    kept = target_protocol(UsageIndex(functions=[read]), "sd_decoder_new")
    assert kept is not None and kept.sequence[0].call == "sd_decoder_new_ns"


def test_a_maker_whose_object_the_usage_then_feeds_is_replayed() -> None:
    from agents.offline.usage import usage_draft

    api = parse_prototypes("""
xp_t xp_create(const char *encoding);
int xp_parse(xp_t p, const char *buf, int len, int final);
void xp_free(xp_t p);
""")
    p = Arg(text="p", kind="object", var="p")
    steps = [Step(call="xp_create", args=[Arg(text="NULL", kind="null")], result="p"),
             Step(call="xp_parse", args=[p, Arg(text="buf", kind="data", var="buf"),
                                         Arg(text="len", kind="size", var="len"),
                                         Arg(text="0", kind="constant")]),
             Step(call="xp_free", args=[p])]
    facts = UsageFacts(
        objects=[ObjectProtocol(type="xp_t", make=[steps[0]], release="xp_free", uses=2)],
        targets=[TargetProtocol(function="xp_create", seen_in="tests/bench.c:main", origin="test",
                                variables={"p": "xp_t", "buf": "char *", "len": "int"}, sequence=steps)])
    with using(read_types(render_types("```c\ntypedef struct xp_s *xp_t;\n```\n"), api)):
        replay = usage_draft(facts, api[0], api, ["xp.h"])
        alone = usage_draft(facts.model_copy(update={"targets": [facts.targets[0].model_copy(
            update={"sequence": [steps[0], steps[2]]})]}), api[0], api, ["xp.h"])
    assert replay is not None and "xp_parse(" in replay[0], replay
    assert alone is None  # made and released, nothing fed: the synthesizer's draft
