"""A releaser with a flag after the object, listed after a releaser of the struct behind it.

``kx_region_free(kx_region *region, int free_self)`` frees the region and, with the flag set,
the struct itself; ``kx_free_regs(struct kx_regs *)`` (the same struct, spelled by its tag)
frees only the contents, so a region from ``kx_region_new()`` leaked with it on every input.
"""

from __future__ import annotations

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.synth_release_args import complete_release_calls
from agents.offline.type_table import read_types, using
from tests.types_text import render_types

API = """
typedef struct kx_regs kx_region;
kx_region *kx_region_new(void);
void kx_free_regs(struct kx_regs *r);
void kx_region_free(kx_region *region, int free_self);
int kx_fill(kx_region *region, const unsigned char *s, size_t n);
"""

TYPES = render_types("""```c
typedef struct kx_regs kx_region;
struct kx_regs { int allocated; int num_regs; int *beg; int *end; };
```
Release functions:
- kx_free_regs releases struct kx_regs * (parameter type)
- kx_region_free releases kx_region * (parameter type)
""")


def test_the_region_is_released_whole_by_the_releaser_of_its_own_spelling() -> None:
    decls = parse_prototypes(API)
    target = next(d for d in decls if d.name == "kx_fill")
    with using(read_types(TYPES)):
        arche = analyze_function(target, decls).archetype
        code = write_harness(target, decls, ["kx.h"], arche, default_skeleton(arche)).code
    assert "kx_region_new()" in code, code
    assert "kx_region_free(kx_region2, 1);" in code, code
    assert "kx_free_regs(" not in code, code


def test_an_object_on_the_stack_keeps_its_memory() -> None:
    decls = parse_prototypes(API)
    code = "kx_region_free(&r);\nkx_region_free(p);\nkx_region_free(p, 0);\n"
    assert complete_release_calls(code, decls) == (
        "kx_region_free(&r, 0);\nkx_region_free(p, 1);\nkx_region_free(p, 0);\n")
