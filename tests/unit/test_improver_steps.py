"""An improvement that makes an object with a stepper also steps it, and ranks like a parser.

``reader_for_doc(doc)`` made and freed at once reaches a constructor; the reader's own stepper
(``int reader_read(reader *)``) is what walks the document.
"""

from __future__ import annotations

import re

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.improver import improve_harness, value
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.synth_api import ApiIndex

HEADER = """
typedef struct acme_doc acme_doc;
typedef struct acme_reader acme_reader;
acme_doc *acme_doc_parse(const char *buffer, int size);
void acme_doc_free(acme_doc *doc);
int acme_doc_version(acme_doc *doc);
acme_reader *acme_reader_new_for_doc(acme_doc *doc);
acme_reader *acme_reader_new_from_memory(const char *buffer, int size);
int acme_reader_read(acme_reader *reader);
int acme_reader_move_to_next_attribute(acme_reader *reader);
void acme_reader_free(acme_reader *reader);
"""


def _improve(uncovered: list[str]) -> tuple[list[str], str]:
    api = parse_prototypes(HEADER)
    target = next(f for f in api if f.name == "acme_doc_parse")
    arche = analyze_function(target, api).archetype
    code = write_harness(target, api, ["acme.h"], arche, default_skeleton(arche)).code
    imp = improve_harness(code, target, api, uncovered, max_new_calls=1)
    return imp.directions, imp.code


def test_a_reader_made_on_the_result_is_read_to_its_end() -> None:
    directions, code = _improve(["acme_reader_new_for_doc"])
    assert directions == ["call acme_reader_new_for_doc on result (acme_doc)"]
    made = re.search(r"(\w+) = acme_reader_new_for_doc\(result\);", code)
    assert made, code
    var = made.group(1)
    loop = code.index(f"acme_reader_read({var})")
    assert code.index(made.group(0)) < loop < code.index(f"acme_reader_free({var})")
    assert "for (int lf_k_" in code[code.index(made.group(0)):loop]


def test_a_reader_made_from_the_input_is_read_too() -> None:
    _, code = _improve(["acme_reader_new_from_memory"])
    made = re.search(r"(\w+) = acme_reader_new_from_memory\(", code)
    assert made and f"acme_reader_read({made.group(1)})" in code, code


def test_a_maker_of_a_steppable_object_ranks_with_the_parsers() -> None:
    api = parse_prototypes(HEADER)
    idx = ApiIndex(api)
    by = {f.name: f for f in api}
    assert value(idx, by["acme_reader_new_for_doc"]) == 1 < value(idx, by["acme_doc_version"])
    directions, _ = _improve(["acme_doc_version", "acme_reader_new_for_doc"])
    assert directions == ["call acme_reader_new_for_doc on result (acme_doc)"]
