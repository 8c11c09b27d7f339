"""A typedef of a pointer to a record with listed fields, that no function hands out, is a spelling.

``typedef struct pic_image *pic_imagep;`` with ``struct pic_image { ...; unsigned version; ... }``
and ``int pic_image_begin_read_from_memory(pic_imagep image, const void *memory, size_t size)``
(an invented API, shaped like a simplified image reader): the caller owns the record and passes
its address. Read as an opaque handle, the draft declared ``pic_imagep image;`` zeroed, a NULL
pointer, and the library returned at once on every input. A handle of that shape that a
constructor returns stays a handle.
"""

from __future__ import annotations

import re

from agents.offline import ckinds, type_table
from agents.offline.analysis import analyze_function
from agents.offline.synth import default_skeleton, write_harness
from fuzzkit.api import FunctionDecl, Param
from tests.types_text import render_types

TYPES = ("typedef struct pic_image *pic_imagep;  /* pic_image * */\n"
         "typedef struct pic_control *pic_controlp;\n"
         "struct pic_image { pic_controlp opaque; unsigned int version; unsigned int width; "
         "unsigned int height; char message[64]; };\n"
         "struct pic_control;  /* opaque: only pointers, made by the API */\n")
IMG = Param("image", "pic_imagep")
BEGIN = FunctionDecl("pic_image_begin_read_from_memory", "int",
                     (IMG, Param("memory", "const void *"), Param("size", "size_t")), "pic.h")
FREE = FunctionDecl("pic_image_free", "void", (IMG,), "pic.h")
API = [BEGIN, FREE]


def draft(target: FunctionDecl, api: list[FunctionDecl]) -> str:
    with type_table.using(type_table.read_types(render_types(TYPES), api)):
        analysis = analyze_function(target, api)
        return write_harness(target, api, ["pic.h"], analysis.archetype,
                             default_skeleton(analysis.archetype), rules=analysis.rules).code


def test_the_caller_record_is_declared_and_its_address_passed() -> None:
    code = draft(BEGIN, API)
    var = re.search(r"pic_image (\w+);", code)
    assert var, code
    assert f"pic_image_begin_read_from_memory(&{var.group(1)}," in code
    assert f"pic_image_free(&{var.group(1)});" in code
    assert "pic_imagep image;" not in code


def test_a_typedef_a_constructor_returns_stays_a_handle() -> None:
    new = FunctionDecl("pic_image_new", "pic_imagep", (), "pic.h")
    with type_table.using(type_table.read_types(render_types(TYPES), [*API, new])):
        assert ckinds.resolve("pic_imagep") == "pic_imagep"
    with type_table.using(type_table.read_types(render_types(TYPES), API)):
        assert ckinds.resolve("pic_imagep") == "pic_image *"
        assert ckinds.resolve("pic_controlp") == "pic_controlp"  # opaque: a handle
    code = draft(BEGIN, [*API, new])
    assert "pic_image_new()" in code and not re.search(r"\bpic_image \w+;", code), code


def test_without_the_api_the_typedef_reads_as_before() -> None:
    with type_table.using(type_table.read_types(render_types(TYPES))):
        assert ckinds.resolve("pic_imagep") == "pic_imagep"


def test_a_tagless_record_is_declared_by_its_typedef_name() -> None:
    """``typedef struct { ... } pic_image, *pic_imagep``: there is no ``struct pic_image`` to declare.

    The Types section gives the pointer typedef as ``struct pic_image *`` with the canonical
    ``/* pic_image * */``; declared with the tag, the draft did not compile (incomplete type).
    """
    code = draft(BEGIN, API)
    var = re.search(r"\bpic_image (\w+);", code)
    assert var and "struct pic_image " not in code, code
    assert f"pic_image_begin_read_from_memory(&{var.group(1)}," in code
