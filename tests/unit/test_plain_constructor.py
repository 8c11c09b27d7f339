"""A context made without the input comes from the constructor that needs no other object.

A schema library has ``ya_ctx_new(const char *search_dir, uint16_t options, struct ya_ctx
**ctx)`` and, in a plugin header, ``ya_ext_create_context(const struct ya_ext_instance *ext,
struct ya_ctx **ctx)``. The parse targets got their context from the plugin's function (two
parameters, no text, so "simpler"), called on a zeroed extension instance: SEGV on every input.
"""

from __future__ import annotations

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from tests.types_text import render_types

API = """
struct ya_ctx;
struct ya_node;
struct ya_ext_instance { void *parent; const char *argument; void *compiled; };
int ya_ctx_new(const char *search_dir, unsigned short options, struct ya_ctx **ctx);
int ya_ext_create_context(const struct ya_ext_instance *ext, struct ya_ctx **ctx);
void ya_ctx_destroy(struct ya_ctx *ctx);
int ya_parse_data_mem(const struct ya_ctx *ctx, const char *data, int format, unsigned options,
                      struct ya_node **tree);
void ya_free_all(struct ya_node *node);
"""

TYPES = render_types("""```c
struct ya_ext_instance { void *parent; const char *argument; void *compiled; };
```
Release functions:
- ya_ctx_destroy releases struct ya_ctx * (parameter type)
- ya_free_all releases struct ya_node * (parameter type)
""")


def test_the_context_comes_from_the_constructor_needing_no_other_object() -> None:
    decls = parse_prototypes(API)
    target = next(d for d in decls if d.name == "ya_parse_data_mem")
    with using(read_types(TYPES)):
        arche = analyze_function(target, decls).archetype
        code = write_harness(target, decls, ["ya.h"], arche, default_skeleton(arche)).code
    assert "ya_ctx_new(" in code, code
    assert "ya_ext_create_context(" not in code, code
