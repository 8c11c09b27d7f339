"""The improve prompt's API list shows the stepper of what an offered maker makes.

The list is trimmed to the functions related to the target; a reader made on the target's
document is offered, but the reader's own stepper, related to nothing the target takes, fell
outside the trimmed list, so neither a model nor the offline engine could walk the reader.
"""

from __future__ import annotations

from typing import Any

from agents.enhancer import Enhancer
from agents.offline.cdecl import parse_prototypes
from agents.sections import MAX_API, api_prototypes
from agents.stepper_api import steppers_for

HEADER = """
typedef struct acme_doc acme_doc;
typedef struct acme_reader *acme_reader_p;
acme_doc *acme_doc_parse(const char *buffer, int size);
void acme_doc_free(acme_doc *doc);
acme_reader_p acme_reader_new_for_doc(acme_doc *doc);
int acme_reader_read(acme_reader_p reader);
int acme_reader_move_to_next_attribute(acme_reader_p reader);
int acme_reader_depth(const struct acme_reader *reader);
void acme_reader_free(acme_reader_p reader);
"""
FILLER = "\n".join(f"int acme_misc_{k}(int value);" for k in range(MAX_API + 10))


def _state() -> dict[str, Any]:
    api = parse_prototypes(HEADER + FILLER)
    return {"api": [d.to_dict() for d in api], "target": api[0].to_dict(),
            "header_facts": {"typedefs": [{"name": "acme_reader_p", "underlying": "struct acme_reader *",
                                             "canonical": "struct acme_reader *"}]}}


def test_the_plainest_stepper_of_each_made_type_and_its_releaser() -> None:
    """The releaser too: the offline engine owns the reader only where the API it is shown frees it."""
    found = steppers_for(_state(), ["acme_reader_new_for_doc", "acme_doc_free", "not_a_function"])
    assert [d.name for d in found] == ["acme_reader_read", "acme_reader_free"]


def test_the_improve_prompt_lists_it_where_the_trimmed_list_left_it_out() -> None:
    state = _state()
    assert "acme_reader_read(" not in api_prototypes(state)
    offered = "- acme_reader_p acme_reader_new_for_doc(acme_doc *doc);"
    variables = Enhancer.improve_variables(state, (), offered, "(none)")
    assert "int acme_reader_read(acme_reader_p reader);" in variables["api_prototypes"]
    assert variables["api_prototypes"].count("acme_reader_read(") == 1
    assert "void acme_reader_free(acme_reader_p reader);" in variables["api_prototypes"]
