"""A list built through its head is released by the header's releaser of ``T **``.

The invented key-value library's ``kv_parse(kv_item **head, const char *text)`` builds a list;
``kv_item_free(kv_item *)`` frees one item's buffers only, ``kv_list_free(kv_item **head)`` the
whole list. Released with the first, every input leaked the nodes (LeakSanitizer, allocated in
the library's node constructor) and the improvement that added the call was dropped.
"""

from __future__ import annotations

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from tests.types_text import render_types

API = """
typedef struct kv_item kv_item;
int kv_parse(kv_item **head, const char *text);
void kv_item_free(kv_item *item);
void kv_list_free(kv_item **head);
int kv_count(const kv_item *head);
"""
TYPES = render_types("""```c
typedef struct kv_item kv_item;
struct kv_item { char *key; char *value; struct kv_item *next; };
```
Release functions:
- kv_item_free releases kv_item * (parameter type)
- kv_list_free releases kv_item ** (parameter type)
""")


def _draft(name: str, api: str = API) -> str:
    """The offline engine's first draft for ``name`` of the invented key-value API."""
    decls = parse_prototypes(api)
    target = next(d for d in decls if d.name == name)
    with using(read_types(TYPES)):
        arche = analyze_function(target, decls).archetype
        return write_harness(target, decls, ["kv.h"], arche, default_skeleton(arche)).code


def test_the_list_goes_to_the_releaser_of_its_head() -> None:
    code = _draft("kv_parse")
    assert "kv_list_free(&" in code, code
    assert "kv_item_free(" not in code, code


def test_a_list_made_for_another_call_goes_to_the_releaser_of_its_head() -> None:
    """``kv_count`` needs a list: it is built with ``kv_parse(&head, text)`` and released whole."""
    code = _draft("kv_count")
    assert "kv_parse(&" in code, code
    assert "kv_list_free(&" in code, code
    assert "kv_item_free(" not in code, code


def test_a_node_returned_by_the_call_that_added_it_to_the_list_is_released_with_the_list() -> None:
    """``kv_store(&head, key, value)`` returns the node it put in the list: the list is released."""
    store = "kv_item *kv_store(kv_item **head, const char *key, const char *value);\n"
    code = _draft("kv_store", API + store)
    assert "kv_list_free(&" in code, code
    assert "kv_item_free(" not in code, code
