"""A const pointer to a struct that is just a buffer and its length carries the fuzz input."""

from __future__ import annotations

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.ckinds import blob_fields
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from tests.types_text import render_types

API = """
typedef struct qz_blob qz_blob;
typedef struct qz_box qz_box;
qz_box *qz_box_load(const qz_blob *input, int flags);
void qz_box_delete(qz_box *box);
int qz_box_count(const qz_box *box);
int qz_box_write(qz_box *box, qz_blob *out);
"""
TYPES = """```c
typedef struct qz_blob qz_blob;
struct qz_blob { const unsigned char *bytes; size_t size; };
struct qz_box;  /* opaque: only pointers, made by the API */
```"""


def test_the_input_goes_into_the_blob_and_the_object_made_from_it_is_released() -> None:
    decls = parse_prototypes(API)
    target = next(d for d in decls if d.name == "qz_box_load")
    with using(read_types(render_types(TYPES))):
        assert blob_fields("qz_blob") == ("bytes", "size") and blob_fields("qz_box") is None
        arche = analyze_function(target, decls).archetype
        code = write_harness(target, decls, ["qz.h"], arche, default_skeleton(arche)).code
    assert ".bytes = (const unsigned char *)data;" in code and ".size = (size_t)size;" in code
    assert "if (result != NULL) qz_box_delete(result);" in code


def test_without_its_fields_the_struct_stays_an_object() -> None:
    decls = parse_prototypes(API)
    target = next(d for d in decls if d.name == "qz_box_load")
    code = write_harness(target, decls, ["qz.h"], "object_lifecycle",
                         default_skeleton("object_lifecycle")).code
    assert ".bytes =" not in code


def test_the_input_flow_gate_sees_the_input_through_the_blob() -> None:
    from fuzzkit.input_flow import input_reaches_api

    decls = parse_prototypes(API)
    target = next(d for d in decls if d.name == "qz_box_load")
    with using(read_types(render_types(TYPES))):
        code = write_harness(target, decls, ["qz.h"], "stateless_parser",
                             default_skeleton("stateless_parser")).code
    assert input_reaches_api(code, [d.name for d in decls])


def test_init_benchmark_ranks_a_function_taking_a_blob_as_a_data_entry_point() -> None:
    from fuzzkit.header_facts import HeaderFacts, Record, blob_types
    from fuzzkit.param_kinds import archetype
    from fuzzkit.select_functions import score

    facts = HeaderFacts(records=[
        Record("struct", "qz_blob", ("qz_blob",),
               (("bytes", "const unsigned char *"), ("size", "size_t")), False),
        Record("struct", "qz_pair", ("qz_pair",), (("a", "int"), ("b", "int")), False)])
    assert blob_types(facts) == {"qz_blob"}
    load = next(d for d in parse_prototypes(API) if d.name == "qz_box_load")
    assert archetype(load) == "object" and archetype(load, streams=blob_types(facts)) == "buffer"
    assert score(load, streams=blob_types(facts)) > score(load)
