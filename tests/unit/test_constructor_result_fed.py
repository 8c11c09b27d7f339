"""A constructor target whose object only gets the input from another function.

An image decoder's second constructor takes an allocator and flags
(``pq_ctx *pq_ctx_new2(struct pq_alloc *alloc, int flags)``); the bytes reach the context only
through ``pq_set_buffer(ctx, buf, size)``. The harness called the constructor, then size and
header getters on a context that had never been given any input: it ran, and the fuzzer
explored nothing (0.1% of the library's lines). The input is handed to what the target made,
before the uses after the call. And the constructor, given NULL for its allocator suite,
returned no context at all: a suite whose function fields have the C library's own types is
filled with ``malloc``, ``realloc``, ``calloc`` and ``free``.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from fuzzkit.input_flow import input_reaches_api
from tests.types_text import render_types

API = """
typedef struct pq_ctx pq_ctx;
typedef void * pq_m_fn(size_t);
typedef void * pq_r_fn(void *, size_t);
typedef void * pq_c_fn(size_t, size_t);
typedef void pq_f_fn(void *);
struct pq_alloc { pq_m_fn *malloc_fn; pq_r_fn *realloc_fn; pq_c_fn *calloc_fn; pq_f_fn *free_fn; };
pq_ctx *pq_ctx_new(int flags);
pq_ctx *pq_ctx_new2(struct pq_alloc *alloc, int flags);
void pq_ctx_free(pq_ctx *ctx);
int pq_set_buffer(pq_ctx *ctx, const void *buf, size_t size);
int pq_decoded_size(pq_ctx *ctx, int fmt, size_t *len);
int pq_get_width(pq_ctx *ctx, unsigned *width);
"""

RAW_TYPES = """```c
typedef struct pq_ctx pq_ctx;
typedef unsigned long size_t;
typedef void * pq_m_fn(size_t);
typedef void * pq_r_fn(void *, size_t);
typedef void * pq_c_fn(size_t, size_t);
typedef void pq_f_fn(void *);
struct pq_alloc { pq_m_fn *malloc_fn; pq_r_fn *realloc_fn; pq_c_fn *calloc_fn; pq_f_fn *free_fn; };
```
Release functions:
- pq_ctx_free releases pq_ctx * (parameter type)
"""
TYPES = render_types(RAW_TYPES)


def _draft(api: str = API, types: str = TYPES) -> str:
    decls = parse_prototypes(api)
    target = next(d for d in decls if d.name == "pq_ctx_new2")
    with using(read_types(render_types(types))):
        arche = analyze_function(target, decls).archetype
        return write_harness(target, decls, ["pq.h"], arche, default_skeleton(arche)).code


def test_the_constructed_context_is_given_the_input_before_its_uses() -> None:
    code = _draft()
    made = re.search(r"(\w+) = pq_ctx_new2\(", code)
    assert made, code
    var = made.group(1)
    fed = re.search(rf"pq_set_buffer\({var}, \(const void \*\)data, \(size_t\)size\);", code)
    assert fed and made.start() < fed.start() < code.index("pq_decoded_size("), code
    assert input_reaches_api(code, [d.name for d in parse_prototypes(API)])


def test_the_harness_compiles_without_shadowed_names(tmp_path: Path) -> None:
    (tmp_path / "pq.h").write_text("#include <stddef.h>\n" + API)
    (tmp_path / "harness.c").write_text(_draft())
    cmd = ["clang", "-fsyntax-only", "-Wall", "-Wshadow", "-Werror", f"-I{tmp_path}",
           str(tmp_path / "harness.c")]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_a_suite_of_c_library_shaped_functions_is_filled() -> None:
    code = _draft()
    made = re.search(r"= pq_ctx_new2\(&(\w+), ", code)
    assert made, code
    for field, fn in [("malloc_fn", "malloc"), ("realloc_fn", "realloc"), ("calloc_fn", "calloc"),
                      ("free_fn", "free")]:
        assert f"{made.group(1)}.{field} = {fn};" in code, code


def test_a_suite_taking_a_user_pointer_stays_null() -> None:
    """``zalloc(opaque, items, size)`` is no ``calloc``: the library's defaults, through NULL."""
    odd = ("typedef void * pq_m_fn(void *, size_t);\n"
           "typedef void pq_f_fn(void *, void *);\n"
           "struct pq_alloc { pq_m_fn *malloc_fn; pq_f_fn *free_fn; void *opaque; };")
    api = re.sub(r"typedef void \* pq_m_fn.*?};", lambda _m: odd, API, flags=re.S)
    types = re.sub(r"typedef void \* pq_m_fn.*?};", lambda _m: odd, RAW_TYPES, flags=re.S)
    assert "opaque" in api and "opaque" in types
    code = _draft(api, types)
    assert "pq_ctx_new2(NULL, " in code, code
