"""A control record its caller fills before the call: the usage's field assignments, learned and replayed.

The invented image library rejects a descriptor whose ``version`` is not ``ZQ_VERSION``: its own
test sets ``version``, ``width``, ``height`` and ``format`` before ``zq_write_to_memory(&image,
...)``. The index records those assignments, the usage facts keep the fields most usage
functions set (constants as written, the test's own sizes drawn from the input), and both the
synthesized draft and the replay of the usage set them on the zeroed record before the call.
"""

from __future__ import annotations

from pathlib import Path

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from agents.offline.usage import usage_draft, usage_hints
from agents.usage_section import read_usage, usage_section
from fuzzkit.api import FunctionDecl
from fuzzkit.usage_index import build_index
from fuzzkit.usage_models import Arg, CallSite, FieldAssignment, UsageFacts, UsageFunction, UsageIndex
from fuzzkit.usage_protocols import target_usage
from tests.types_text import render_types

API = """
typedef struct zq_desc zq_desc;
int zq_write_to_memory(zq_desc *image, void *mem, size_t *len, int flags, const void *buffer, int stride,
                       const void *colormap);
int zq_begin_read(zq_desc *image, const void *data, size_t size);
int zq_finish_read(zq_desc *image, void *out, int stride);
void zq_free(zq_desc *image);
"""
TYPES = """```c
typedef struct zq_desc zq_desc;
struct zq_desc { unsigned version; unsigned width; unsigned height; unsigned format; void *opaque; };
#define ZQ_VERSION 3
#define ZQ_FORMAT_RGBA 2
```"""
RECORDS = {"zq_desc": {"version": "unsigned int", "width": "unsigned int", "height": "unsigned int",
                       "format": "unsigned int", "opaque": "void *"}}
HEADER = ("#include <stddef.h>\n#define ZQ_VERSION 3\n#define ZQ_FORMAT_RGBA 2\n"
          "typedef struct zq_desc { unsigned version; unsigned width; unsigned height; unsigned format;"
          " void *opaque; } zq_desc;\n" + API.replace("typedef struct zq_desc zq_desc;\n", ""))
TEST = """#include <string.h>
#include "zq.h"
#define SIDE 16
static unsigned char px[SIDE * SIDE * 4];
int main(void) {
  zq_desc image;
  size_t len = 0;
  memset(&image, 0, sizeof image);
  image.version = ZQ_VERSION;
  image.width = SIDE;
  image.height = SIDE;
  image.format = ZQ_FORMAT_RGBA;
  image.opaque = NULL;
  if (!zq_write_to_memory(&image, NULL, &len, 0, px, 0, NULL)) return 1;
  return 0;
}
"""
DOC = """Writing an image:

```c
zq_desc img;
memset(&img, 0, sizeof img);
img.version = ZQ_VERSION;
img.width = w;
zq_write_to_memory(&img, mem, &len, 0, pixels, 0, NULL);
```
"""


def _decls() -> list[FunctionDecl]:
    return parse_prototypes(API)


def _index(tmp_path: Path) -> UsageIndex:
    (tmp_path / "tests").mkdir()
    (tmp_path / "zq.h").write_text(HEADER)
    (tmp_path / "zq.c").write_text('#include "zq.h"\n')
    (tmp_path / "tests" / "t.c").write_text(TEST)
    (tmp_path / "README.md").write_text(DOC)
    return build_index(tmp_path, _decls(), [str(tmp_path)], [], [str(tmp_path / "zq.c")],
                       constants=["ZQ_VERSION", "ZQ_FORMAT_RGBA"])


def test_the_index_records_the_fields_set_before_the_call(tmp_path: Path) -> None:
    index = _index(tmp_path)
    test = next(f for f in index.functions if f.file == "tests/t.c")
    assert test.parsed_by == "libclang"
    assert [(f.var, f.field, f.value, f.kind) for f in test.fields] == [
        ("image", "version", "ZQ_VERSION", "constant"), ("image", "width", "SIDE", "other"),
        ("image", "height", "SIDE", "other"), ("image", "format", "ZQ_FORMAT_RGBA", "constant"),
        ("image", "opaque", "NULL", "other")]
    doc = next(f for f in index.functions if f.file == "README.md#1")
    assert doc.parsed_by == "lexical"
    assert [(f.field, f.kind) for f in doc.fields] == [("version", "constant"), ("width", "other")]


def test_the_facts_keep_what_most_usages_set_and_read_back(tmp_path: Path) -> None:
    decls = _decls()
    usage = target_usage(_index(tmp_path), decls[0], decls, {}, RECORDS)
    record = usage.facts.record("zq_desc *")
    assert record is not None and record.call == "zq_write_to_memory" and record.uses == 2
    # every usage sets version and width; height and format half of them (kept); the pointer never
    assert [(f.field, f.kind, f.value, f.low, f.high) for f in record.fields] == [
        ("version", "constant", "ZQ_VERSION", 0, 0), ("width", "input", "", 1, 64),
        ("height", "input", "", 1, 64), ("format", "constant", "ZQ_FORMAT_RGBA", 0, 0)]
    section = usage_section({"library_usage": usage.model_dump(mode="json")})
    assert read_usage(section).records == usage.facts.records


def _facts() -> UsageFacts:
    image = Arg(text="&image", kind="object", var="image", address=True)
    data = Arg(text="buf", kind="data", var="buf")
    size = Arg(text="n", kind="size", var="n")
    fn = UsageFunction(
        file="tests/t.c", name="main", origin="test",
        variables={"image": "zq_desc", "w": "int", "h": "int", "buf": "const unsigned char *", "n": "size_t",
                   "out": "unsigned char *"},
        fields=[FieldAssignment(var="image", field="version", value="ZQ_VERSION", kind="constant", line=3),
                FieldAssignment(var="image", field="width", value="w", line=4),
                FieldAssignment(var="image", field="height", value="h", line=5),
                FieldAssignment(var="image", field="format", value="ZQ_FORMAT_RGBA", kind="constant",
                                line=9)],
        calls=[CallSite(function="zq_begin_read", args=[image, data, size], line=6),
               CallSite(function="zq_write_to_memory", args=[image], line=7),
               CallSite(function="zq_finish_read", args=[image, Arg(text="out", kind="variable", var="out"),
                                                         Arg(text="0", kind="null")], line=10)])
    return target_usage(UsageIndex(functions=[fn]), _decls()[0], _decls(), {}, {}).facts


def test_the_synthesized_draft_sets_the_fields_on_the_zeroed_record_before_the_call() -> None:
    decls = _decls()
    target = decls[0]
    facts = _facts()
    with using(read_types(render_types(TYPES))):
        arche = analyze_function(target, decls).archetype
        code = write_harness(target, decls, ["zq.h"], arche, default_skeleton(arche),
                             usage=usage_hints(facts, target, decls)).code
    body = code[code.index("LLVMFuzzerTestOneInput"):]
    zeroed = body.index("memset(&image, 0, sizeof image);")
    version = body.index("image.version = ZQ_VERSION;")
    width = body.index("image.width = width_v;")
    height = body.index("image.height = height_v;")
    call = body.index("zq_write_to_memory(&image")
    assert zeroed < version < width < height < call  # in the usage's order, before the call
    assert "width_v = (unsigned)lf_take_int(&lf_in, 1, 64);" in body
    assert "image.format" not in body  # the usage sets it after the target: not for it


def test_without_fields_the_first_draft_is_unchanged() -> None:
    decls = _decls()
    target = decls[0]
    facts = _facts().model_copy(update={"records": []})
    with using(read_types(render_types(TYPES))):
        arche = analyze_function(target, decls).archetype
        plain = write_harness(target, decls, ["zq.h"], arche, default_skeleton(arche)).code
        hinted = write_harness(target, decls, ["zq.h"], arche, default_skeleton(arche),
                               usage=usage_hints(facts, target, decls)).code
    assert plain == hinted and "image.version" not in plain


def test_the_replay_sets_the_fields_with_option_bytes_before_its_first_call() -> None:
    decls = _decls()
    target = next(d for d in decls if d.name == "zq_finish_read")
    usage = target_usage(UsageIndex(functions=[_usage_of_reading()]), target, decls, {}, {})
    assert usage.facts.records
    with using(read_types(render_types(TYPES))):
        replayed = usage_draft(usage.facts, target, decls, ["zq.h"])
    assert replayed is not None
    code = replayed[0]
    assert "lf_opt[lf_k] = data[--size];" in code
    setup = code.index("image.version = ZQ_VERSION;")
    assert setup < code.index("image.width = 1 + (int)(lf_opt[0] % 64u);") < code.index("zq_begin_read(")
    assert code.index("image.format = ZQ_FORMAT_RGBA;") < code.index("zq_begin_read(")


def _usage_of_reading() -> UsageFunction:
    image = Arg(text="&image", kind="object", var="image", address=True)
    return UsageFunction(
        file="tests/read.c", name="main", origin="test",
        variables={"image": "zq_desc", "w": "int", "buf": "const unsigned char *", "n": "size_t",
                   "out": "unsigned char *"},
        fields=[FieldAssignment(var="image", field="version", value="ZQ_VERSION", kind="constant", line=3),
                FieldAssignment(var="image", field="width", value="w", line=4),
                FieldAssignment(var="image", field="format", value="ZQ_FORMAT_RGBA", kind="constant",
                                line=7)],
        calls=[CallSite(function="zq_begin_read", args=[image, Arg(text="buf", kind="data", var="buf"),
                                                        Arg(text="n", kind="size", var="n")], line=6),
               CallSite(function="zq_finish_read", args=[image, Arg(text="out", kind="variable", var="out"),
                                                         Arg(text="0", kind="null")], line=8),
               CallSite(function="zq_free", args=[image], line=9)])


def test_a_pointer_typedef_parameter_finds_the_record_another_call_takes() -> None:
    # `int zq_begin(zq_descp image, ...)`, `typedef zq_desc *zq_descp`: the usage never calls the target
    # but sets the record's version before another call taking it.
    image = Arg(text="&image", kind="object", var="image", address=True)
    fn = UsageFunction(
        file="examples/x.c", name="main", origin="example", variables={"image": "zq_desc"},
        fields=[FieldAssignment(var="image", field="version", value="ZQ_VERSION", kind="constant", line=2),
                FieldAssignment(var="image", field="opaque", value="NULL", line=3)],
        calls=[CallSite(function="zq_begin_read_from_file", args=[image], line=4)])
    target = parse_prototypes("typedef struct zq_desc *zq_descp;\n"
                              "int zq_begin(zq_descp image, const void *data, size_t size);")[0]
    api = [target, *_decls()]
    found = target_usage(UsageIndex(functions=[fn]), target, api, {"zq_descp": "zq_desc *"}, RECORDS).facts
    record = found.record("zq_desc")  # as the usage declares it
    assert record is not None and record.call == "zq_begin_read_from_file"
    assert [(f.field, f.value) for f in record.fields] == [("version", "ZQ_VERSION")]  # not the pointer
