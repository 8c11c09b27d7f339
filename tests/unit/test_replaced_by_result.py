"""A call that hands its first argument back, maybe moved, leaves only the result to release.

``gs gs_catlen(gs s, const void *t, size_t len)`` (an invented string library, ``typedef char
*gs``): like ``realloc``, it may free ``s`` and return the grown string. A harness that released
both ``s`` and the result freed the string twice (heap-use-after-free on every input of a
string library's append, copy and escape functions); a follow-up on ``s`` read freed memory.
"""

from __future__ import annotations

import re

from agents.offline import type_table
from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from tests.types_text import render_types

API = parse_prototypes("""
gs gs_catlen(gs s, const void *t, size_t len);
gs gs_newlen(const void *init, size_t initlen);
gs gs_empty(void);
void gs_free(gs s);
size_t gs_alloc_size(gs s);
gs gs_dup(const gs s);
gs gs_join_pair(gs a, gs b);
gs gs_join(char **argv, int argc, char *sep);
gs gs_join_gs(gs *argv, int argc, const char *sep, size_t seplen);
""")
BY = {f.name: f for f in API}
TYPES = render_types("typedef char *gs; /* char * */\nRelease functions:\n"
                     "- gs_free releases gs (parameter type)")


def draft(name: str) -> str:
    with type_table.using(type_table.read_types(TYPES)):
        a = analyze_function(BY[name], API)
        return write_harness(BY[name], API, ["gs.h"], a.archetype, default_skeleton(a.archetype),
                             rules=a.rules).code


def test_the_argument_is_given_up_once_the_call_hands_it_back() -> None:
    code = draft("gs_catlen")
    call = re.search(r"(\w+) = gs_catlen\((\w+), ", code)
    assert call, code
    result, arg = call.groups()
    assert re.search(rf"gs {arg} = NULL;", code)  # declared as the typedef, not `gs *`
    assert f"if ({result} != NULL) {arg} = NULL;" in code
    assert f"gs_alloc_size({arg})" not in code  # a follow-up works on the result
    assert f"gs_free({result});" in code and f"gs_free({arg});" in code  # each once, whichever is live


def test_a_call_taking_two_of_them_keeps_both() -> None:
    code = draft("gs_join_pair")
    assert not re.search(r"if \(\w+ != NULL\) \w+ = NULL;", code), code


def test_the_string_to_grow_is_made_by_simple_constructors_only() -> None:
    code = draft("gs_catlen")
    # `char **argv, int argc`: strings from the input, at most as many as there are
    assert re.search(r"gs_join\(\(char \*\*\)strings\w*, ", code), code
    # an array of the library's own strings would need each made by it: not a simple constructor
    assert "gs_join_gs(" not in code
