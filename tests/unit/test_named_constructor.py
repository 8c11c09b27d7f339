"""A function named first by the object it returns makes that object: the caller owns it.

``kv_reader_walker(doc)`` returns a new ``kv_text_reader`` (the API frees one with
``kv_free_text_reader``) though no verb in its name says so; ``kv_text_reader_current_doc(r)``,
named for what it works on, hands back the reader's own document. Owned, the walker is what an
improvement block on a document makes and steps to its end (before, it was not owned, so it had
no stepper and ranked with the getters: a document harness never walked its tree).
"""

from __future__ import annotations

from agents.offline.cdecl import parse_prototypes
from agents.offline.improver import improve_harness
from agents.offline.improver_steps import made_stepper
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.synth_api import ApiIndex
from agents.offline.synth_vocab import names_its_result

API = parse_prototypes("""
typedef struct kv_doc kv_doc;
typedef struct kv_text_reader kv_text_reader;
kv_doc *kv_read_memory(const char *buf, int size);
void kv_free_doc(kv_doc *doc);
kv_text_reader *kv_reader_walker(kv_doc *doc);
kv_text_reader *kv_reader_for_memory(const char *buf, int size);
void kv_free_text_reader(kv_text_reader *reader);
int kv_text_reader_read(kv_text_reader *reader);
kv_doc *kv_text_reader_current_doc(kv_text_reader *reader);
""")
BY = {f.name: f for f in API}


def test_named_by_the_type_it_returns_is_a_constructor() -> None:
    assert names_its_result("kv_reader_walker", "kv_text_reader")
    assert not names_its_result("kv_text_reader_current_doc", "kv_doc")
    assert not names_its_result("kv_context_db_handle", "kv")  # a handle named for the library itself
    idx = ApiIndex(API)
    assert idx.returns_owned(BY["kv_reader_walker"]) and idx.returns_owned(BY["kv_reader_for_memory"])
    assert not idx.returns_owned(BY["kv_text_reader_current_doc"])  # the reader's own document
    step = made_stepper(idx, BY["kv_reader_walker"])
    assert step is not None and step.name == "kv_text_reader_read"


def test_a_document_harness_walks_its_tree_with_a_reader_and_frees_it() -> None:
    draft = write_harness(BY["kv_read_memory"], API, ["kv.h"], "stateless_parser",
                          default_skeleton("stateless_parser")).code
    result = improve_harness(draft, BY["kv_read_memory"], API, ["kv_reader_walker"])
    assert result.added_calls[:1] == ["kv_reader_walker"], result.code
    block = result.code[result.code.index("kv_reader_walker("):]
    assert "kv_text_reader_read(" in block and "kv_free_text_reader(" in block
