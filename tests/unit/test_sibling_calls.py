"""Coverage blocks spread over the API: what another target's harness calls is offered last.

A run is measured by what its harnesses cover together. An invented name library: every
target's improvement ranked the same one-shot lookup first, so four harnesses added the same
call and the conversion variants nobody called stayed uncovered. A function that a harness of
another target in the same run already calls now comes after the ones nobody calls, in the
prompt (its own group) and in the offline improver; it still fills a slot nothing else takes.
"""

from __future__ import annotations

import re
from pathlib import Path

from agents.enhancer import Enhancer
from agents.offline.improver import improve_harness
from agents.offline.prompt_reader import read_prompt
from agents.offline.roles import enhance
from agents.sections import ELSEWHERE_HEADING
from fuzzkit.api import FunctionDecl, Param
from nodes.enhancer import sibling_calls, uncovered_text
from prompts import render


def _conv(name: str) -> FunctionDecl:
    return FunctionDecl(name, "int", (Param("input", "const char *"), Param("output", "char **"),
                                      Param("flags", "int")))


TARGET = _conv("nm_to_ascii")
LOOKUP = _conv("nm_lookup")
VARIANTS = [_conv(f"nm_to_unicode_v{i}") for i in range(4)]
FREE = FunctionDecl("nm_free", "void", (Param("p", "void *"),))
API = [TARGET, LOOKUP, *VARIANTS, FREE]


def _harness(result_decl: str, call: str, release: str) -> str:
    """A harness that copies the input to a string and calls the target on it (``result_decl``
    declares what the call writes, ``release`` frees it)."""
    return f"""#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "nm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {{
  /* @LF:SETUP */
  char *text = NULL;
  {result_decl} = NULL;
  int result = 0;
  text = (char *)malloc(size + 1);
  if (text == NULL) goto lf_cleanup;
  memcpy(text, data, size);
  text[size] = 0;
  /* @LF:CALL */
  result = {call};
  (void)result;
  /* @LF:USE */
  /* @LF:CLEANUP */
  lf_cleanup: ;
  {release}
  free(text);
  return 0;
}}
"""


HARNESS = _harness("char *output", "nm_to_ascii(text, &output, 0)", "if (output != NULL) nm_free(output);")


def _state(work: Path) -> dict:
    return {"target": TARGET.to_dict(), "api": [d.to_dict() for d in API], "harness_code": HARNESS,
            "work_dir": str(work / "nm" / "nm_to_ascii"),
            "run": {"uncovered_functions": [d.name for d in API if d is not TARGET]}}


def _sibling(work: Path, name: str, calls: str) -> None:
    (work / "nm" / name).mkdir(parents=True)
    (work / "nm" / name / "harness.c").write_text(f"int f(void) {{ {calls}; return 0; }}\n")


def test_functions_a_sibling_harness_calls_are_listed_last(tmp_path: Path) -> None:
    _sibling(tmp_path, "nm_lookup", "nm_lookup(x, &y, 0)")
    (tmp_path / "nm" / "nm_to_ascii").mkdir(parents=True)
    (tmp_path / "nm" / "nm_to_ascii" / "harness.c").write_text("nm_to_unicode_v0(a, &b, 0);")  # its own
    state = _state(tmp_path)
    assert sibling_calls(state) >= {"nm_lookup"} and "nm_to_unicode_v0" not in sibling_calls(state)
    text = uncovered_text(state)
    fresh, _, shared = text.partition(ELSEWHERE_HEADING)
    assert "nm_lookup" in shared and "nm_lookup" not in fresh, text
    assert all(v.name in fresh for v in VARIANTS), text


def test_without_siblings_nothing_is_set_apart(tmp_path: Path) -> None:
    assert ELSEWHERE_HEADING not in uncovered_text(_state(tmp_path))


def test_the_offline_improver_prefers_what_no_other_harness_calls() -> None:
    names = [d.name for d in API if d is not TARGET]
    before = improve_harness(HARNESS, TARGET, API, names, max_new_calls=1)
    assert before.added_calls == ["nm_lookup"]  # a lookup ranks first on its own
    after = improve_harness(HARNESS, TARGET, API, names, max_new_calls=1, later={"nm_lookup"})
    assert after.added_calls and after.added_calls[0].startswith("nm_to_unicode_v"), after.added_calls
    filled = improve_harness(HARNESS, TARGET, API, ["nm_lookup"], max_new_calls=1, later={"nm_lookup"})
    assert filled.added_calls == ["nm_lookup"]  # still used when nothing else fits


def test_the_offline_enhancer_reads_the_group_from_the_prompt(tmp_path: Path) -> None:
    _sibling(tmp_path, "nm_lookup", "nm_lookup(x, &y, 0)")
    state = {**_state(tmp_path), "headers": ["nm.h"], "analysis": {"archetype": "stateless_parser"},
             "session_memory": {}}
    state["run"]["coverage"] = {"lines": {"percent": 10.0}}
    values = Enhancer.improve_variables(state, (), uncovered_text(state), "(none)", "")
    payload, code = enhance(read_prompt(*render("enhancer_improve", values)))
    assert code is not None and len(payload["added_calls"]) == 4, payload
    assert "nm_lookup" not in payload["added_calls"], payload  # four variants nobody calls fill the slots


PARSE = FunctionDecl("nm_parse", "int", (Param("text", "const char *"), Param("out", "nm_doc **")))
VALIDATE = FunctionDecl("nm_doc_validate", "int", (Param("doc", "nm_doc *"),))
DOC_FREE = FunctionDecl("nm_doc_free", "void", (Param("doc", "nm_doc *"),))
DOC_API = [PARSE, VALIDATE, DOC_FREE, LOOKUP, FREE]
DOC_HARNESS = _harness("nm_doc *doc", "nm_parse(text, &doc)", "if (doc != NULL) nm_doc_free(doc);")


def test_a_call_on_the_harnesss_own_object_keeps_its_rank() -> None:
    """Another harness validating a document of its own says nothing about validating this one's."""
    made = improve_harness(DOC_HARNESS, PARSE, DOC_API, ["nm_doc_validate", "nm_lookup"], max_new_calls=1,
                           later={"nm_doc_validate"})
    assert made.added_calls == ["nm_doc_validate"], made.code
    assert re.search(r"nm_doc_validate\(\s*doc\s*\)", made.code), made.code  # on the parsed document
