"""A reference-counted object is released by dropping the reference, not by its free function.

``lg_log_t *lg_log_new(void)``, ``lg_log_ref``, ``lg_log_unref``, ``lg_log_free`` (an invented API,
shaped like a metadata library's log). A harness that attached the log to a document
(which takes a reference) and released it with ``lg_log_free`` destroyed it under the
document, which then dropped its own reference to freed memory (heap-use-after-free).
"""

from __future__ import annotations

from agents.offline.synth_api import ApiIndex
from fuzzkit.api import FunctionDecl, Param

LOG = Param("log", "lg_log_t *")
NEW = FunctionDecl("lg_log_new", "lg_log_t *", (), "lg.h")
FREE = FunctionDecl("lg_log_free", "void", (LOG,), "lg.h")
UNREF = FunctionDecl("lg_log_unref", "void", (LOG,), "lg.h")
REF = FunctionDecl("lg_log_ref", "void", (LOG,), "lg.h")


def test_a_counted_type_is_released_by_unref() -> None:
    assert ApiIndex([NEW, FREE, UNREF, REF]).destructor("lg_log_t", "lg_log_new") == "lg_log_unref"


def test_without_a_ref_function_free_comes_first() -> None:
    assert ApiIndex([NEW, FREE, UNREF]).destructor("lg_log_t", "lg_log_new") == "lg_log_free"


def test_taking_another_reference_is_left_alone() -> None:
    from agents.offline.synth_vocab import risky

    # `lg_doc_ref(doc)` as a follow-up adds a reference nothing drops: the document leaks
    assert risky("lg_doc_ref") and not risky("lg_doc_unref") and not risky("lg_add_ref_name")
