"""A non-const number pointer followed by its count is a work array, not one out-value."""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from tests.types_text import render_types

API = """
typedef struct qz_code qz_code;
qz_code *qz_compile(const unsigned char *pattern, size_t length, int *errorcode);
void qz_code_free(qz_code *code);
int qz_dfa_match(const qz_code *code, const unsigned char *subject, size_t length, \
int *workspace, size_t wscount);
int qz_get_dims(const unsigned char *data, size_t size, int *width, int *height);
int qz_dfa_match_unnamed(const qz_code *, const unsigned char *, size_t, int *, size_t);
int qz_get_flag(const unsigned char *, size_t, int *, int);
"""


def _draft(name: str) -> str:
    decls = parse_prototypes(API)
    target = next(d for d in decls if d.name == name)
    arche = analyze_function(target, decls).archetype
    return write_harness(target, decls, ["qz.h"], arche, default_skeleton(arche)).code


def test_the_work_array_is_as_large_as_the_count_passed_with_it() -> None:
    code = _draft("qz_dfa_match")
    declared = re.search(r"int (\w+)\[(\d+)\] = \{0\};", code)
    assert declared is not None, code
    array, count = declared.groups()
    assert re.search(rf"qz_dfa_match\([^;]*, {array}, \(size_t\){count}\);", code), code


def test_out_values_without_a_count_stay_single_variables() -> None:
    code = _draft("qz_get_dims")
    assert "&width, &height" in code and "[" not in code[code.index("int width"):code.index("qz_get_dims(")]


def test_an_unnamed_size_t_after_a_number_pointer_counts_it_but_an_int_does_not() -> None:
    code = _draft("qz_dfa_match_unnamed")
    assert re.search(r"int (\w+)\[1000\] = \{0\};", code), code
    assert ", (size_t)1000);" in code
    flag = _draft("qz_get_flag")
    assert "[1000]" not in flag


def test_a_fresh_variable_never_takes_a_type_s_name() -> None:
    from agents.offline.synth_code import Frag
    from agents.offline.type_table import read_types, using

    types = render_types("```c\ntypedef struct qz_conv_ctx qz_conv_ctx;\nstruct qz_conv_ctx;\n```")
    with using(read_types(types)):
        assert Frag().name("qz_conv_ctx") == "qz_conv_ctx2"
    assert Frag().name("qz_conv_ctx") == "qz_conv_ctx"
