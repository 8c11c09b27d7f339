"""A function installing allocation hooks is never added to a harness by an improvement block.

``acme_set_memory_hooks(void *(*malloc_func)(size_t), void (*free_func)(void *))`` changes how the
whole process allocates: a block calling it with NULL hooks (or with hooks of its own) leaves
every later allocation and release of the library, in this input and the next, calling NULL.
"""

from __future__ import annotations

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.improver import improve_harness
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.synth_api import ApiIndex
from agents.offline.synth_io import sets_allocator

PROTOS = (
    "acme_doc *acme_parse(const char *text);\nvoid acme_free(acme_doc *d);\n"
    "int acme_depth(acme_doc *d);\n"
    "void acme_set_memory_hooks(void *(*malloc_func)(size_t), void (*free_func)(void *));\n"
    "int acme_use_pool(void *(*get)(size_t n, void *user), void *user);\n"
    "acme_doc *acme_doc_new_with(void *(*malloc_func)(size_t), void (*free_func)(void *));\n"
)


def test_improvement_blocks_never_install_allocation_hooks() -> None:
    acme = parse_prototypes(PROTOS)
    target = next(d for d in acme if d.name == "acme_parse")
    arche = analyze_function(target, acme).archetype
    code = write_harness(target, acme, ["acme.h"], arche, default_skeleton(arche)).code
    imp = improve_harness(code, target, acme, ["acme_set_memory_hooks", "acme_use_pool", "acme_depth"])
    assert imp.added_calls == ["acme_depth"]
    assert "acme_set_memory_hooks" not in imp.code and "acme_use_pool" not in imp.code


def test_a_constructor_taking_hooks_is_no_setter() -> None:
    acme = parse_prototypes(PROTOS)
    idx = ApiIndex(acme)
    by = {d.name: d for d in acme}
    assert sets_allocator(idx, by["acme_set_memory_hooks"])
    assert not sets_allocator(idx, by["acme_doc_new_with"])  # NULL keeps the library's own
    assert not sets_allocator(idx, by["acme_depth"])
