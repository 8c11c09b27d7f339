"""A prototype's unnamed parameters take the names the library's own calls give their arguments.

An invented image reader declares ``int img_read_rgba(img *, uint32_t, uint32_t, uint32_t *,
int)``: nothing says the integers are a width and a height and the pointer a raster of their
product. Its own tool calls ``img_read_rgba(p, w->width, height, (uint32_t *)raster,
ORIENT_TOP)``; named after those arguments, the draft gives the raster room for the width
times the height (unnamed, a single ``uint32_t`` is all it gets, and every input overflows it).
"""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from fuzzkit.api import FunctionDecl, Param
from fuzzkit.usage_models import Arg, CallSite, UsageFunction, UsageIndex
from fuzzkit.usage_names import argument_name, name_unnamed
from tests.types_text import render_types

API = """
typedef struct img img;
img *img_open_memory(const unsigned char *data, size_t size);
void img_close(img *p);
int img_read_rgba(img *, uint32_t, uint32_t, uint32_t *, int);
"""
TYPES = render_types("```c\ntypedef struct img img;\n```\nRelease functions:\n"
                     "- img_close releases img * (parameter type)\n")


def _call(*args: Arg) -> CallSite:
    return CallSite(function="img_read_rgba", args=list(args))


def _index() -> UsageIndex:
    p = Arg(text="p", kind="object", var="p")
    tool = [_call(p, Arg(text="w->width", var="w"), Arg(text="height", kind="variable", var="height"),
                  Arg(text="(uint32_t *)raster", var="raster"),
                  Arg(text="ORIENT_TOP", kind="constant", constants=["ORIENT_TOP"]))]
    # a test passes other spellings once: the names most calls give win
    test = [_call(p, Arg(text="256"), Arg(text="h", kind="variable", var="h"), Arg(text="&buf[0]"),
                  Arg(text="0")),
            _call(p, Arg(text="width", kind="variable", var="width"),
                  Arg(text="height", kind="variable", var="height"),
                  Arg(text="raster", kind="variable", var="raster"), Arg(text="o", kind="variable", var="o"))]
    return UsageIndex(functions=[UsageFunction(file="tools/view.c", name="main", origin="tool", calls=tool),
                                 UsageFunction(file="test/t.c", name="t", origin="test", calls=test)])


def _decls() -> list[FunctionDecl]:
    return [FunctionDecl(d.name, d.return_type, tuple(Param("" if re.fullmatch(r"arg\d+", p.name) else p.name,
                                                            p.type) for p in d.params))
            for d in parse_prototypes(API)]


def test_each_unnamed_parameter_takes_the_name_most_calls_give_it() -> None:
    named = {d.name: d for d in name_unnamed(_decls(), _index())}
    assert [p.name for p in named["img_read_rgba"].params] == ["p", "width", "height", "raster", "o"]
    assert named["img_close"] == next(d for d in _decls() if d.name == "img_close")  # named already
    assert name_unnamed(_decls(), UsageIndex()) == _decls()  # no calls: nothing named


def test_only_a_variable_or_its_field_names_a_parameter() -> None:
    assert argument_name(Arg(text="&st", kind="variable", var="st", address=True)) == "st"
    assert argument_name(Arg(text="img . rows", var="img")) == "rows"
    for text in ("256", "MAX_ROWS", "a + b", "f(x)", "int"):
        assert argument_name(Arg(text=text)) == "", text
    assert argument_name(Arg(text="cb", kind="callback")) == ""


def test_a_name_already_taken_is_not_given_twice() -> None:
    decl = FunctionDecl("cp", "void", (Param("n", "int"), Param("", "int")))
    index = UsageIndex(functions=[UsageFunction(file="t.c", name="t", calls=[
        CallSite(function="cp", args=[Arg(text="n", var="n"), Arg(text="n", var="n")])])])
    assert [p.name for p in name_unnamed([decl], index)[0].params] == ["n", ""]


def _draft(decls: list[FunctionDecl]) -> str:
    target = next(d for d in decls if d.name == "img_read_rgba")
    with using(read_types(TYPES)):
        arche = analyze_function(target, decls).archetype
        return write_harness(target, decls, ["img.h"], arche, default_skeleton(arche)).code


def test_named_so_the_raster_gets_room_for_width_times_height() -> None:
    named = name_unnamed(_decls(), _index())
    code = _draft(parse_prototypes("\n".join(d.prototype() for d in named)))
    assert re.search(r"= calloc\(\(size_t\)\w+ \* \(size_t\)\w+, sizeof\(uint32_t\)\);", code), code
    assert "calloc((size_t)" not in _draft(parse_prototypes(API))  # unnamed: no raster seen


def test_a_file_calling_it_often_is_one_vote_and_the_library_s_own_tools_count_more() -> None:
    decl = FunctionDecl("x_open", "void *", (Param("", "const char *"),))
    wrapper = [CallSite(function="x_open", args=[Arg(text="m_name", kind="variable", var="m_name")])] * 3
    index = UsageIndex(functions=[
        *[UsageFunction(file="contrib/stream.cpp", name="open_stream", origin="other", calls=wrapper)] * 2,
        UsageFunction(file="tools/conv.c", name="main", origin="tool", calls=[
            CallSite(function="x_open", args=[Arg(text="outfilename", var="outfilename")])])])
    assert name_unnamed([decl], index)[0].params[0].name == "outfilename"


def test_an_unnamed_size_typed_parameter_after_a_pointer_is_the_buffers_length() -> None:
    from fuzzkit.api import FunctionDecl, Param
    from fuzzkit.usage_models import UsageIndex
    from fuzzkit.usage_names import name_unnamed

    decl = FunctionDecl("rx_compile", "rx_code *", (Param("", "RX_SPTR"), Param("", "RX_SIZE"),
                                                    Param("", "uint32_t")))
    canonical = {"RX_SPTR": "const unsigned char *", "RX_SIZE": "unsigned long"}
    named = name_unnamed([decl], UsageIndex(), canonical)
    assert [p.name for p in named[0].params] == ["", "length", ""]
    # not after a value, nor when the type names no size
    plain = FunctionDecl("rx_set", "int", (Param("", "uint32_t"), Param("", "RX_SIZE")))
    assert [p.name for p in name_unnamed([plain], UsageIndex())[0].params] == ["", ""]


def test_a_macros_letters_passed_on_name_nothing() -> None:
    from fuzzkit.api import FunctionDecl, Param
    from fuzzkit.usage_models import Arg, CallSite, UsageFunction, UsageIndex
    from fuzzkit.usage_names import name_unnamed

    decl = FunctionDecl("rx_compile", "rx_code *", (Param("", "RX_SPTR"), Param("", "RX_SIZE"),
                                                    Param("", "uint32_t")))
    letters = CallSite(function="rx_compile", args=[Arg(text=t, kind="variable", var=t) for t in "abc"])
    index = UsageIndex(functions=[UsageFunction(file="src/rxtest.c", name="main", origin="test",
                                                calls=[letters])])
    named = name_unnamed([decl], index, {"RX_SPTR": "const unsigned char *"})
    assert [p.name for p in named[0].params] == ["", "length", ""], named


def test_cast_and_wrapped_letters_of_a_macro_name_nothing_either() -> None:
    # `#define CONVERT(a,b,c,d,e,f,g) a = rx_convert(G(b,8),c,d,(RX_UCHAR **)e,f,G(g,8))`
    types = ("RX_SPTR", "RX_SIZE", "uint32_t", "unsigned char **", "RX_SIZE *", "rx_context *")
    decl = FunctionDecl("rx_convert", "int", tuple(Param("", t) for t in types))
    texts = ["G(b,8)", "c", "d", "(RX_UCHAR **)e", "f", "G(g,8)"]
    call = CallSite(function="rx_convert", args=[Arg(text=t, kind="variable", var=t[-1]) for t in texts])
    index = UsageIndex(functions=[UsageFunction(file="src/rxtest.c", name="main", origin="test",
                                                calls=[call])])
    named = name_unnamed([decl], index, {"RX_SPTR": "const unsigned char *"})
    assert [p.name for p in named[0].params] == ["", "length", "", "", "", ""], named
