# ruff: noqa: E501
"""Shapes from an unseen compression library's buffer API (invented names, no library named).

- ``(const uint8_t *in, size_t *in_pos, size_t in_size)``: a buffer, a cursor into it (starting
  at 0, advanced by the library) and its length. The cursor was taken for the length pointer
  and the length drawn from option bytes: every input read past the fuzz buffer.
- ``xq_ret`` is a tagless enum (``typedef enum { ... } xq_ret;``); the documentation's "set
  allocator to NULL to use malloc() and free()" read as "free() releases the result", so every
  harness called ``free()`` on the status code: a SEGV on the first input.
"""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from fuzzkit.header_facts import Enum, HeaderFacts
from fuzzkit.header_releasers import find_releasers
from tests.types_text import render_types

API = """
typedef unsigned long size_t;
xq_ret xq_vli_decode(unsigned long *vli, size_t *vli_pos, const unsigned char *in, size_t *in_pos, size_t in_size);
xq_ret xq_buffer_decode(const xq_allocator *allocator, const unsigned char *in, size_t *in_pos, size_t in_size, unsigned char *out, size_t *out_pos, size_t out_size);
"""
ENUM = Enum("xq_ret", (("XQ_OK", 0), ("XQ_STREAM_END", 1), ("XQ_DATA_ERROR", 9)), typedef=True)
DOC = ("\\brief Single-call decoder\n\\param allocator An allocator for custom allocator functions. "
       "Set to NULL to use malloc() and free().\n\\return XQ_OK: decoding was successful.")


def types() -> str:
    releasers = find_releasers(parse_prototypes(API), {"xq_buffer_decode": DOC}, [], {})
    return HeaderFacts(enums=[ENUM], releasers=releasers).render()


def draft(name: str) -> str:
    decls = parse_prototypes(API)
    target = next(d for d in decls if d.name == name)
    with using(read_types(render_types(types()))):
        arche = analyze_function(target, decls).archetype
        code = write_harness(target, decls, ["xq.h"], arche, default_skeleton(arche)).code
    return code[code.index("LLVMFuzzerTestOneInput"):]


def test_a_tagless_enum_is_shown_as_its_typedef() -> None:
    assert "- name: xq_ret\n  typedef: true\n" in types()  # no tag: `enum xq_ret` would not compile
    table = read_types(render_types(types()))  # and it reads back as the enum it is
    assert table.enum_members["xq_ret"] == ["XQ_OK", "XQ_STREAM_END", "XQ_DATA_ERROR"]
    assert "xq_ret" not in table.canonical


def test_the_default_allocator_s_description_is_no_release_instruction() -> None:
    assert "free releases" not in types()


def test_a_status_code_result_is_never_freed() -> None:
    for name in ("xq_vli_decode", "xq_buffer_decode"):
        code = draft(name)
        assert not re.search(r"free\((rc|result)\)", code), code


def test_the_position_starts_at_zero_and_the_length_is_the_input_s() -> None:
    code = draft("xq_vli_decode")
    call = re.search(r"xq_vli_decode\(([^;]*)\);", code)
    assert call is not None, code
    args = [a.strip() for a in call.group(1).split(",")]
    assert args[2].endswith("data") and args[3] == "&in_pos" and args[4] == "(size_t)size", args
    assert "size_t in_pos = 0;" in code


def test_an_output_buffer_gets_its_own_position_and_its_capacity() -> None:
    code = draft("xq_buffer_decode")
    call = re.search(r"xq_buffer_decode\(([^;]*)\);", code)
    assert call is not None, code
    args = [a.strip() for a in call.group(1).split(",")]
    assert args[2:4] == ["&in_pos", "(size_t)size"] and args[5] == "&out_pos", args
    assert "out_cap" in args[6], args


def test_a_list_of_records_named_in_the_plural_gets_room_for_several() -> None:
    """``const xq_filter *filters`` is read up to a terminator (or a limit): one zeroed record on
    the stack was read past (a stack-buffer-overflow judged harness misuse, on three targets)."""
    api = parse_prototypes(API + "xq_ret xq_raw_decode(const xq_filter *filters, const xq_options *options, "
                                 "const unsigned char *in, size_t *in_pos, size_t in_size);\n")
    text = ("```c\ntypedef struct { unsigned long id; void *options; } xq_filter;\n"
            "typedef struct { int level; int mode; } xq_options;\n```\n" + types())
    target = next(d for d in api if d.name == "xq_raw_decode")
    with using(read_types(render_types(text))):
        arche = analyze_function(target, api).archetype
        code = write_harness(target, api, ["xq.h"], arche, default_skeleton(arche)).code
    assert "xq_filter filters[8];" in code and "xq_raw_decode(filters, " in code, code
    assert "options[8]" not in code, code  # one record: options are not a list
