"""Objects the library hands out from a function that takes nothing (an invented API).

``acme_node *acme_node_new_with_mem(int type, acme_mem *mem)`` takes a struct of memory
functions; nothing makes one, but ``acme_get_default_mem_allocator(void)`` hands out the
library's own. Passed NULL ("the defaults") or zeroed, the library calls address 0 (a markdown
library's node constructor did, SEGV in every improvement that added it).
"""

from __future__ import annotations

import re

from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from tests.types_text import render_types

API = """
acme_mem *acme_get_default_mem_allocator(void);
acme_node *acme_node_new_with_mem(int type, acme_mem *mem);
void acme_node_free(acme_node *node);
"""

TYPES = render_types("""\
```c
typedef struct acme_mem acme_mem;
typedef struct acme_node acme_node;
struct acme_mem { void *(*calloc)(size_t, size_t); void *(*realloc)(void *, size_t); void (*free)(void *); };
struct acme_node;
```
Release functions:
- acme_node_free releases acme_node * (parameter type)
""")


def _draft(api_text: str) -> str:
    with using(read_types(TYPES)):
        api = parse_prototypes(api_text)
        target = next(f for f in api if f.name == "acme_node_new_with_mem")
        skeleton = default_skeleton("object_lifecycle")
        code = write_harness(target, api, ["acme.h"], "object_lifecycle", skeleton).code
    return code[code.index("LLVMFuzzerTestOneInput"):]


def test_a_struct_nothing_makes_comes_from_the_function_that_hands_out_the_library_s_own() -> None:
    code = _draft(API)
    held = re.search(r"(\w+) = lf_library_objects\w*\[", code)
    assert held and "(acme_mem *)acme_get_default_mem_allocator()" in code
    assert re.search(rf"acme_node_new_with_mem\(\w+, {held.group(1)}\)", code)
    assert not re.search(r"\b(free|acme_node_free)\(" + held.group(1), code)  # the library's own


def test_without_one_the_allocator_suite_goes_as_null() -> None:
    api = API.replace("acme_mem *acme_get_default_mem_allocator(void);", "")
    assert re.search(r"acme_node_new_with_mem\(\w+, NULL\)", _draft(api))
