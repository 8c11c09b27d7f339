"""An object opened on an empty file (the input goes to the target, not the file) is opened to write.

An invented tag store: ``ts_open(const char *path, const char *mode)`` opens a store file;
``ts_field_by_name(ts *s, const char *name)`` looks a field up by the name the input gives. The
store is opened on an empty file, since the input is the name; read, an empty file is no store at
all and the target is never reached, so the draft opens it for writing (a new, empty store). A
store given the input as its file is still opened to read.
"""

from __future__ import annotations

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from tests.types_text import render_types

API = parse_prototypes("""
typedef struct ts ts;
ts *ts_open(const char *path, const char *mode);
void ts_close(ts *s);
const char *ts_field_by_name(ts *s, const char *name);
int ts_count(ts *s);
""")
TYPES = render_types("```c\ntypedef struct ts ts;\n```\nRelease functions:\n"
                     "- ts_close releases ts * (parameter type)\n")


def _draft(name: str) -> str:
    target = next(d for d in API if d.name == name)
    with using(read_types(TYPES)):
        arche = analyze_function(target, API).archetype
        return write_harness(target, API, ["ts.h"], arche, default_skeleton(arche)).code


def test_a_store_opened_on_nothing_is_opened_to_write() -> None:
    code = _draft("ts_field_by_name")
    assert "lf_tmpfile(data, 0," in code and 'ts_open(empty_path, "wb")' in code, code


def test_a_store_given_the_input_is_opened_to_read() -> None:
    code = _draft("ts_count")
    assert "lf_tmpfile(data, size," in code and 'ts_open(path, "rb")' in code, code
