# ruff: noqa: E501
"""Shapes from an unseen JSON library whose handles are pointer typedefs.

- ``jq_alloc(const jq_callbacks *cb, jq_alloc_funcs *afs, void *ctx)``: a struct of memory
  functions, zeroed, makes the library reject it and return no handle; NULL means "use yours".
- ``jq_complete_parse(jq_handle h)`` sees the input only once ``jq_parse(h, text, len)`` has
  been called, though a follow-up (``jq_get_error(h, verbose, text, len)``) gets the input;
  that follow-up's string is released with ``jq_free_error(h, str)``, the handle first.
- ``jq_tree_get(jq_val root, const char **path, int type)`` returns a node inside the tree:
  it is not released (the tree's release frees it).
- Option values that are all constants still need the input cursor they are taken from.
"""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from tests.types_text import render_types

API = """
typedef struct jq_handle_t *jq_handle;
typedef struct jq_val_s *jq_val;
typedef void *(*jq_malloc_func)(void *ctx, size_t sz);
typedef void (*jq_free_func)(void *ctx, void *ptr);
typedef void *(*jq_realloc_func)(void *ctx, void *ptr, size_t sz);
typedef struct { jq_malloc_func malloc; jq_realloc_func realloc; jq_free_func free; void *ctx; } jq_alloc_funcs;
typedef struct { int (*jq_null)(void *ctx); int (*jq_boolean)(void *ctx, int v); } jq_callbacks;
jq_handle jq_alloc(const jq_callbacks *callbacks, jq_alloc_funcs *afs, void *ctx);
typedef struct jq_gen_t *jq_gen;
jq_gen jq_gen_alloc(const jq_alloc_funcs *allocFuncs);
void jq_gen_free(jq_gen g);
int jq_gen_array_close(jq_gen g);
int jq_gen_map_close(jq_gen g);
int jq_gen_number(jq_gen g, const char *num, size_t len);
void jq_free(jq_handle handle);
int jq_parse(jq_handle hand, const unsigned char *jsonText, size_t jsonTextLength);
int jq_complete_parse(jq_handle hand);
unsigned char *jq_get_error(jq_handle hand, int verbose, const unsigned char *jsonText, size_t jsonTextLength);
void jq_free_error(jq_handle hand, unsigned char *str);
jq_val jq_tree_parse(const char *input, char *error_buffer, size_t error_buffer_size);
jq_val jq_tree_get(jq_val parent, const char **path, int type);
void jq_tree_free(jq_val v);
"""

TYPES = render_types("""```c
typedef struct jq_handle_t *jq_handle;
typedef struct jq_val_s *jq_val;
typedef void *(*jq_malloc_func)(void *, size_t);
typedef void (*jq_free_func)(void *, void *);
typedef void *(*jq_realloc_func)(void *, void *, size_t);
struct jq_handle_t;  /* opaque: only pointers, made by the API */
struct jq_val_s;  /* opaque: only pointers, made by the API */
typedef struct jq_gen_t *jq_gen;
struct jq_gen_t;  /* opaque: only pointers, made by the API */
typedef struct { jq_malloc_func malloc; jq_realloc_func realloc; jq_free_func free; void *ctx; } jq_alloc_funcs;
typedef struct { int (*jq_null)(void *); int (*jq_boolean)(void *, int); } jq_callbacks;
```
Release functions:
- jq_free releases jq_handle (parameter type)
- jq_tree_free releases jq_val (parameter type)
- jq_gen_free releases jq_gen (parameter type)
- jq_free_error releases what jq_get_error allocates (by documentation)
""")


def _draft(name: str) -> str:
    decls = parse_prototypes(API)
    target = next(d for d in decls if d.name == name)
    with using(read_types(TYPES)):
        arche = analyze_function(target, decls).archetype
        return write_harness(target, decls, ["jq.h"], arche, default_skeleton(arche)).code


def test_a_struct_of_memory_functions_goes_as_null() -> None:
    code = _draft("jq_parse")
    assert "jq_alloc(&callbacks, NULL, " in code, code


def test_a_constructor_taking_only_memory_functions_gets_null() -> None:
    code = _draft("jq_gen_number")
    assert "jq_gen_alloc(NULL)" in code, code
    # Released by the destructor of its constructor's family, not by closing an array in it.
    assert "jq_gen_free(" in code and "_close(" not in code, code


def test_the_input_reaches_the_handle_before_the_target() -> None:
    code = _draft("jq_complete_parse")
    body = code[code.index("LLVMFuzzerTestOneInput"):]
    assert "jq_parse(" in body and body.index("jq_parse(") < body.index("jq_complete_parse("), code
    assert "(const unsigned char *)data" in body[body.index("jq_parse("):body.index("jq_complete_parse(")]
    # The error string a follow-up gets is released with the handle that made it.
    made = re.search(r"(\w+) = jq_get_error\((\w+),", body)
    assert made is not None, code
    assert f"jq_free_error({made.group(2)}, {made.group(1)});" in body, code


def test_a_node_got_from_a_tree_is_not_released() -> None:
    code = _draft("jq_tree_parse")
    assert "jq_tree_get(" in code, code  # the follow-up that reads the tree
    got = code[code.index("jq_tree_get("):]
    got = got[: got.index("}")]
    assert "jq_tree_free" not in got, code
    assert "jq_tree_free(result)" in code, code
