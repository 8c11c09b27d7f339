"""A leaked out-parameter goes back through the releaser its allocator's name pairs with.

The same holds for an improvement block's call of a sibling parser (its block keeps the call).

An invented resolver library parses replies into records it allocates with an internal
``qv_malloc_data``, which puts a header before the record: ``free(rec)`` is a bad-free and only
``qv_free_data(void *)`` releases it. The header ties neither of its two ``void *`` releasers to
the record type, but the leak's allocation stack names the allocator, and its name with the verb
swapped is one of them. (Before, the repair fell back to ``free``: a bad-free, then the release was
removed, then ``free`` again, until the fix rounds ran out.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_graph.context import Context
from agents.crash_analyzer import report_text
from agents.enhancer import Enhancer
from agents.offline.cdecl import parse_prototypes
from agents.offline.prompt_reader import read_prompt
from agents.offline.roles import enhance
from fuzzkit.release_names import paired_releaser
from nodes.memory_manager import revert_failed
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


BLOCK_HARNESS = """\
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* @LF:CALL */
  result = qv_parse_rec_reply((const unsigned char *)data, (int)size, &rec_out);
  /* LF improve: call qv_parse_pair_reply on the input */
  {
    struct qv_pair_reply *pair_out = NULL;
    int rc = 0;
    rc = qv_parse_pair_reply((const unsigned char *)data, (int)size, &pair_out);
    (void)rc;
  }
  /* @LF:CLEANUP */
  if (rec_out != NULL) { qv_free_data(rec_out); rec_out = NULL; }
  return 0;
}
"""
PAIR = parse_prototypes("int qv_parse_pair_reply(const unsigned char *abuf, int alen, "
                        "struct qv_pair_reply **out);")[0]


def _block_state(tmp_path: Path, allocator: str) -> dict[str, Any]:
    frames = [{"function": n, "file": "/src/qv.c", "line": 9}
              for n in ("malloc", "default_malloc", allocator, PAIR.name)]
    frames.append({"function": "LLVMFuzzerTestOneInput", "file": "harness.c", "line": 8})
    best = {"version": 1, "code": "int LLVMFuzzerTestOneInput(void) { return 0; }", "lines_percent": 5.0,
            "build": {"version": 1, "ok": True}, "run": {"version": 1, "usable": True}}
    return {"best": best, "harness_version": 2, "harness_code": BLOCK_HARNESS, "phase": "optimization",
            "build": {"version": 2, "ok": True}, "run": {"version": 2, "crashed": True, "usable": False},
            "crash": {"version": 2, "kind": "leak", "frames": frames},
            "last_change": {"kind": "improve", "version": 2,
                            "directions": ["call qv_parse_pair_reply on the input"]},
            "counters": {"harness_versions": 2}, "api": [f.to_dict() for f in (*API, PAIR)],
            "header_facts": {}, "project": "p", "function": TARGET.name, "work_dir": str(tmp_path)}


def test_an_improvement_block_releases_its_out_parameter_through_the_paired_releaser(tmp_path: Path) -> None:
    update = revert_failed(_block_state(tmp_path, "qv_malloc_data"), Context())  # type: ignore[arg-type]
    code = update["harness_code"]
    block = code[code.index("call qv_parse_pair_reply"):code.index("@LF:CLEANUP")]
    assert "if (pair_out != NULL) qv_free_data((void *)pair_out);" in block
    assert update["last_change"]["released"] == ["call qv_parse_pair_reply on the input"]


def test_an_out_parameter_leak_with_no_paired_releaser_drops_the_block(tmp_path: Path) -> None:
    update = revert_failed(_block_state(tmp_path, "qv_copy_rows"), Context())  # type: ignore[arg-type]
    assert "qv_parse_pair_reply" not in update["harness_code"]
