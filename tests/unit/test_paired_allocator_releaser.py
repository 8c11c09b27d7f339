"""A leaked out-parameter goes back through the releaser its allocator's name pairs with.

An invented resolver library parses replies into records it allocates with an internal
``qv_malloc_data``, which puts a header before the record: ``free(rec)`` is a bad-free and only
``qv_free_data(void *)`` releases it. The header ties neither of its two ``void *`` releasers to
the record type, but the leak's allocation stack names the allocator, and its name with the verb
swapped is one of them. (Before, the repair fell back to ``free``: a bad-free, then the release was
removed, then ``free`` again, until the fix rounds ran out.)
"""

from __future__ import annotations

from agents.crash_analyzer import report_text
from agents.enhancer import Enhancer
from agents.offline.cdecl import parse_prototypes
from agents.offline.fixer_leak import paired_releaser
from agents.offline.prompt_reader import read_prompt
from agents.offline.roles import enhance
from prompts import render

API = parse_prototypes("""
int qv_parse_rec_reply(const unsigned char *abuf, int alen, struct qv_rec_reply **out);
void qv_free_string(void *str);
void qv_free_data(void *dataptr);
void qvNodeFree(struct qv_node *node);
""")
TARGET = API[0]
HARNESS = """#include <stdint.h>
#include <stdlib.h>
#include "qv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* @LF:GUARD */
  if (size > 1048576u) return 0;
  struct qv_rec_reply *rec_out = NULL;
  int result = qv_parse_rec_reply((const unsigned char *)data, (int)size, &rec_out);
  (void)result;
  return 0;
}
"""


def _fix(signature: str) -> tuple[dict, str]:
    crash = {"kind": "leak", "summary": "SUMMARY: AddressSanitizer: 72 byte(s) leaked in 3 allocation(s).",
             "signature": signature, "entry_function": TARGET.name}
    state = {"target": TARGET.to_dict(), "api": [f.to_dict() for f in API], "headers": ["qv.h"],
             "analysis": {"archetype": "stateless_parser"}, "harness_code": HARNESS, "session_memory": {}}
    triage = report_text(crash) + "\nverdict: harness_misuse"
    variables = Enhancer.fix_variables(state, (), "the harness crashes by misusing the API", "", triage,
                                       "", "(none)")
    payload, code = enhance(read_prompt(*render("enhancer_fix", variables)))
    return payload, code or ""


def test_the_allocator_in_the_leak_stack_names_the_releaser() -> None:
    payload, code = _fix("leak@default_malloc<qv_malloc_data<qv_parse_rec_reply")
    assert "qv_free_data(rec_out);" in code
    assert "free(rec_out)" not in code.replace("qv_free_data(rec_out)", "")
    assert payload["fixes"] == [
        "release rec_out (from qv_parse_rec_reply) with qv_free_data before returning"]
    assert code.index("qv_free_data(rec_out)") < code.rindex("return 0;")


def test_without_a_paired_allocator_the_repair_falls_back_to_free() -> None:
    _payload, code = _fix("leak@malloc<qv_parse_rec_reply<LLVMFuzzerTestOneInput")
    assert "free(rec_out);" in code and "qv_free_data" not in code


def test_pairing_swaps_the_verb_as_a_whole_word_only() -> None:
    assert paired_releaser(["default_malloc", "qv_malloc_data"], API) == "qv_free_data"
    assert paired_releaser(["qvNodeNew"], API) == "qvNodeFree"  # camel case keeps its capital
    assert paired_releaser(["qv_parse_rec_reply"], API) is None  # no allocation verb
    assert paired_releaser(["qv_smalloc_data"], API) is None  # "malloc" inside another word
    assert paired_releaser([], API) is None
