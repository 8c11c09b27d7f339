"""A reference-counted object is released by dropping the reference, not by its free function.

``lg_log_t *lg_log_new(void)``, ``lg_log_ref``, ``lg_log_unref``, ``lg_log_free`` (an invented API,
shaped like a metadata library's log). A harness that attached the log to a document
(which takes a reference) and released it with ``lg_log_free`` destroyed it under the
document, which then dropped its own reference to freed memory (heap-use-after-free).
"""

from __future__ import annotations

from agents.offline.synth_api import ApiIndex
from fuzzkit.api import FunctionDecl, Param
from tests.types_text import render_types

LOG = Param("log", "lg_log_t *")
NEW = FunctionDecl("lg_log_new", "lg_log_t *", (), "lg.h")
FREE = FunctionDecl("lg_log_free", "void", (LOG,), "lg.h")
UNREF = FunctionDecl("lg_log_unref", "void", (LOG,), "lg.h")
REF = FunctionDecl("lg_log_ref", "void", (LOG,), "lg.h")


def test_a_counted_type_is_released_by_unref() -> None:
    assert ApiIndex([NEW, FREE, UNREF, REF]).destructor("lg_log_t", "lg_log_new") == "lg_log_unref"


def test_a_counted_type_drops_its_reference_though_the_header_pairs_its_maker_with_free() -> None:
    from agents.offline import type_table

    # "\\see lg_log_free" under lg_log_new: the header's facts pair the maker with the free
    types = render_types("Release functions:\n"
                         "- lg_log_free releases what lg_log_new allocates (by documentation)")
    with type_table.using(type_table.read_types(types)):
        assert ApiIndex([NEW, FREE, UNREF]).destructor("lg_log_t", "lg_log_new") == "lg_log_free"
        assert ApiIndex([NEW, FREE, UNREF, REF]).destructor("lg_log_t", "lg_log_new") == "lg_log_unref"


def test_without_a_ref_function_free_comes_first() -> None:
    assert ApiIndex([NEW, FREE, UNREF]).destructor("lg_log_t", "lg_log_new") == "lg_log_free"


def test_taking_another_reference_is_left_alone() -> None:
    from agents.offline.synth_vocab import risky

    # `lg_doc_ref(doc)` as a follow-up adds a reference nothing drops: the document leaks
    assert risky("lg_doc_ref") and not risky("lg_doc_unref") and not risky("lg_add_ref_name")


def test_a_counted_item_added_to_another_is_still_released_by_the_harness() -> None:
    from agents.offline.analysis import analyze_function
    from agents.offline.improver import improve_harness
    from agents.offline.synth import default_skeleton, write_harness

    item, box = Param("item", "lg_item_t *"), Param("box", "lg_box_t *")
    dump = FunctionDecl("lg_box_dump", "void", (box, Param("indent", "unsigned int")), "lg.h")
    api = [dump, FunctionDecl("lg_box_new", "lg_box_t *", (), "lg.h"),
           FunctionDecl("lg_box_unref", "void", (box,), "lg.h"),
           FunctionDecl("lg_box_add_item", "void", (box, item), "lg.h"),
           FunctionDecl("lg_item_new", "lg_item_t *", (), "lg.h"),
           FunctionDecl("lg_item_ref", "void", (item,), "lg.h"),
           FunctionDecl("lg_item_unref", "void", (item,), "lg.h")]
    analysis = analyze_function(dump, api)
    first = write_harness(dump, api, ["lg.h"], analysis.archetype, default_skeleton(analysis.archetype),
                          rules=analysis.rules).code
    block = improve_harness(first, dump, api, ["lg_box_add_item"]).code
    block = block[block.index("LF improve: call lg_box_add_item"):]
    added = block.index("lg_box_add_item(")
    assert "= NULL;" not in block[added:block.index("lg_item_unref(")], block  # not given away
    assert block.index("lg_item_new(") < added < block.index("lg_item_unref(")
