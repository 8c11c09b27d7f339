"""Input given to an object through a reader callback it is handed after it is made.

An invented decoder: ``rd_create_reader`` makes an opaque reader that holds no input;
``rd_set_read_fn(r, io_ptr, fn)`` registers a callback the library calls with the reader itself
(``void fn(rd_structp, unsigned char *, size_t)``), and the callback finds the pointer it was
registered with through ``rd_get_io_ptr(r)``, the getter named after the setter's parameter.
Every target that reads (``rd_read_info``) reads nothing until that setter has been called.
"""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from tests.types_text import render_types

API = """
typedef struct rd_struct rd_struct;
typedef rd_struct *rd_structp;
typedef void *rd_voidp;
typedef void (*rd_rw_ptr)(rd_structp, unsigned char *, size_t);
rd_structp rd_create_reader(int flags);
void rd_destroy_reader(rd_structp r);
void rd_set_read_fn(rd_structp r, rd_voidp io_ptr, rd_rw_ptr read_data_fn);
rd_voidp rd_get_io_ptr(rd_structp r);
rd_voidp rd_get_error_ptr(rd_structp r);
int rd_read_info(rd_structp r);
"""
TYPES = render_types("""```c
typedef struct rd_struct rd_struct;
typedef rd_struct *rd_structp;
typedef void *rd_voidp;
typedef void (*rd_rw_ptr)(rd_structp, unsigned char *, size_t);
```
Release functions:
- rd_destroy_reader releases rd_structp (parameter type)
""")


def _draft(name: str, api: str = API) -> str:
    decls = parse_prototypes(api)
    target = next(d for d in decls if d.name == name)
    with using(read_types(TYPES)):
        arche = analyze_function(target, decls).archetype
        return write_harness(target, decls, ["rd.h"], arche, default_skeleton(arche)).code


def test_the_setter_gets_the_input_cursor_and_the_callback_reads_it_through_the_named_getter() -> None:
    code = _draft("rd_set_read_fn")
    assert re.search(r"rd_set_read_fn\(\w+, \(rd_voidp\)&\w+, lf_\w+_cb\w*\)", code), code
    assert "(lf_input_t *)rd_get_io_ptr(a0);" in code, code  # not the reader cast as the cursor
    assert not re.search(r"lf_input_t \*in = .*rd_get_error_ptr", code), code


def test_a_reading_target_is_fed_through_the_setter_first() -> None:
    code = _draft("rd_read_info")
    setter = code.find("rd_set_read_fn(")
    assert setter != -1, code
    assert setter < code.find("rd_read_info("), code
    assert "(lf_input_t *)rd_get_io_ptr(a0);" in code, code


def test_without_a_getter_of_that_pointer_the_callback_is_not_given_the_reader_as_the_cursor() -> None:
    code = _draft("rd_set_read_fn", API.replace("rd_voidp rd_get_io_ptr(rd_structp r);\n", ""))
    assert "(lf_input_t *)a0;" not in code, code
