"""A struct the harness holds on the stack is never given to a function that frees the struct itself.

An invented output-buffer API: ``ob_buf_t *ob_buf_new(void)`` makes one on the heap and
``void ob_buf_free(ob_buf_t *)`` frees it, struct and all. A harness that declares an
``ob_buf_t`` by value (for a call that fills a caller's buffer) and releases it with
``ob_buf_free(&buf)`` frees stack memory: a bad free on every input, judged harness misuse
(seen with an XML library's output buffer and parser context). Only a function clearing what
the struct holds (``ob_buf_clear``) may release it; a type the library never allocates keeps
its destructor (``cx_free(&cx)`` after ``cx_init(&cx)`` clears a caller's context).
"""

from __future__ import annotations

from agents.offline.synth_api import ApiIndex
from agents.offline.synth_init import stack_releaser
from fuzzkit.api import FunctionDecl, Param
from fuzzkit.header_facts import HeaderFacts, Releaser

BUF = Param("buf", "ob_buf_t *")
CX = Param("cx", "cx_ctx_t *")
RENDER = FunctionDecl("ob_render", "int", (Param("text", "const char *"), Param("mode", "int"), BUF), "ob.h")
NEW = FunctionDecl("ob_buf_new", "ob_buf_t *", (), "ob.h")
FREE = FunctionDecl("ob_buf_free", "void", (BUF,), "ob.h")
CLEAR = FunctionDecl("ob_buf_clear", "void", (BUF,), "ob.h")
CX_API = [FunctionDecl("cx_init", "void", (CX,), "cx.h"), FunctionDecl("cx_free", "void", (CX,), "cx.h"),
          FunctionDecl("cx_update", "int", (CX, Param("data", "const unsigned char *"),
                                            Param("len", "size_t")), "cx.h")]


def test_a_type_the_library_allocates_gets_no_freeing_release_on_the_stack() -> None:
    idx = ApiIndex([RENDER, NEW, FREE])
    assert idx.destructor("ob_buf_t", "ob_render") == "ob_buf_free"  # right for a heap one
    assert stack_releaser(idx, "ob_buf_t", "ob_render") is None


def test_a_clearing_function_releases_a_stack_struct_of_such_a_type() -> None:
    assert stack_releaser(ApiIndex([RENDER, NEW, FREE, CLEAR]), "ob_buf_t", "ob_render") == "ob_buf_clear"


def test_a_type_only_initialized_in_place_keeps_its_destructor() -> None:
    assert stack_releaser(ApiIndex(CX_API), "cx_ctx_t", "cx_init") == "cx_free"


def test_the_types_section_tells_a_releaser_of_what_the_library_allocates() -> None:
    """The prompt's API may leave the makers out (a large library); the Types section's note does not."""
    from agents.offline import type_table

    freed = Releaser(function="ob_buf_free", releases="ob_buf_t *", evidence="parameter type", heap=True)
    table = type_table.read_types(HeaderFacts(releasers=[freed]).render())
    with type_table.using(table):
        assert stack_releaser(ApiIndex([RENDER, FREE]), "ob_buf_t", "ob_render") is None
    plain = freed.model_copy(update={"heap": False})
    with type_table.using(type_table.read_types(HeaderFacts(releasers=[plain]).render())):
        assert stack_releaser(ApiIndex([RENDER, FREE]), "ob_buf_t", "ob_render") == "ob_buf_free"
