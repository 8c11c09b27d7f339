"""A parameter of a type the library constructs is an object to build, not a record to fill step
by step: ``dtd = sx_io_parse_dtd(state, input, enc)`` reads from an input the library made with
``sx_input_create_mem``; a zeroed ``struct sx_input`` on the stack, stepped and then handed to
``sx_input_free``, crashed in the library. Invented API."""

from __future__ import annotations

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.synth_api import ApiIndex
from agents.offline.synth_roles import roles
from agents.offline.type_table import read_types, using
from tests.types_text import render_types

API = """
typedef struct sx_state sx_state;
typedef struct sx_input sx_input;
typedef struct sx_dtd sx_dtd;
typedef struct sx_event sx_event;
void sx_state_init(sx_state *h, int warning);
int sx_user_parse_memory(sx_state *h, void *user_data, const char *buffer, int size);
sx_dtd *sx_io_parse_dtd(sx_state *h, sx_input *input, int enc);
int sx_parse_next(sx_state *h, sx_event *event);
sx_input *sx_input_create_mem(const char *mem, int size, int enc);
void sx_input_free(sx_input *in);
void sx_dtd_free(sx_dtd *d);
"""
TYPES = render_types("""```c
struct sx_state { int flags; };
struct sx_input { const char *content; int size; };
struct sx_event { int type; int start; };
```
Release functions:
- sx_input_free releases sx_input * (parameter type)
- sx_dtd_free releases sx_dtd * (parameter type)
""")


def test_a_constructed_type_is_no_out_record_but_a_plain_event_struct_is() -> None:
    with using(read_types(TYPES)):
        api = parse_prototypes(API)
        idx = ApiIndex(api)
        by_name = {f.name: f for f in api}
        assert [r.kind for r in roles(by_name["sx_io_parse_dtd"], idx)][1] == "object"
        assert [r.kind for r in roles(by_name["sx_parse_next"], idx)][1] == "out_object"


def test_no_stack_record_of_a_constructed_type_is_stepped_or_released() -> None:
    with using(read_types(TYPES)):
        api = parse_prototypes(API)
        target = next(d for d in api if d.name == "sx_user_parse_memory")
        arche = analyze_function(target, api).archetype
        code = write_harness(target, api, ["sx.h"], arche, default_skeleton(arche)).code
    assert "struct sx_input input;" not in code, code
    assert "sx_input_free(&" not in code, code
