"""A buffer read through a pointer the function advances (``unsigned char **p`` with its end or
length) gets a local pointer at the buffer's start, passed by address, and that buffer's end or
length; it is neither an out-parameter left NULL nor freed. Invented API."""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.synth_api import ApiIndex
from agents.offline.synth_roles import roles
from agents.offline.type_table import read_types, using
from tests.types_text import render_types

API = """
typedef struct asn_ctx asn_ctx;
void asn_init(asn_ctx *ctx);
void asn_free(asn_ctx *ctx);
int asn_read_params(asn_ctx *ctx, unsigned char **p, const unsigned char *end);
int asn_read_group(asn_ctx *ctx, const unsigned char **buf, size_t len);
int asn_take_all(unsigned char **out, size_t *out_len);
int asn_join(const char **names, size_t len);
int asn_dup_all(char **out, size_t len);
"""
TYPES = render_types("""```c
typedef struct asn_ctx asn_ctx;
struct asn_ctx { int version; int depth; };
```
Release functions:
- asn_free releases asn_ctx * (parameter type)
""")


def _draft(name: str) -> str:
    with using(read_types(TYPES)):
        api = parse_prototypes(API)
        target = next(d for d in api if d.name == name)
        arche = analyze_function(target, api).archetype
        code = write_harness(target, api, ["asn.h"], arche, default_skeleton(arche)).code
    return code[code.index("LLVMFuzzerTestOneInput"):]


def test_a_cursor_and_its_end_point_into_the_same_buffer() -> None:
    code = _draft("asn_read_params")
    call = re.search(r"asn_read_params\(&ctx, &(\w+), \(const unsigned char \*\)(\w+) \+ size\)", code)
    assert call, code
    cur, buf = call.groups()
    assert re.search(rf"{cur} = \(unsigned char \*\){buf};", code), code
    assert buf in ("data", "text") and "lf_strndup(data, size)" in code  # a writable copy of the input
    assert not re.search(rf"free\({cur}\)", code), code  # it points into the buffer


def test_a_const_cursor_reads_the_input_with_its_length() -> None:
    code = _draft("asn_read_group")
    call = re.search(r"asn_read_group\(&ctx, &(\w+), \(size_t\)size\)", code)
    assert call, code
    assert re.search(rf"{call.group(1)} = \(const unsigned char \*\)data;", code), code


def test_a_pointer_handed_back_with_its_length_is_still_an_output() -> None:
    code = _draft("asn_take_all")
    assert re.search(r"asn_take_all\(&(\w+), &\w+\)", code), code
    assert re.search(r"free\(\w+\)", code), code


def test_a_list_of_strings_with_its_length_is_no_cursor() -> None:
    with using(read_types(TYPES)):
        api = parse_prototypes(API)
        target = next(d for d in api if d.name == "asn_join")
        assert "cursor" not in [r.kind for r in roles(target, ApiIndex(api))]
        dup = next(d for d in api if d.name == "asn_dup_all")  # hands a buffer back
        assert "cursor" not in [r.kind for r in roles(dup, ApiIndex(api))]
