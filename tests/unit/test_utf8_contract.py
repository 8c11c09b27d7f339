"""Text documented as UTF-8: read from the library's comments, shown in the Types section and the
crash report, judged as the harness breaking the contract when the crash input is not UTF-8,
and repaired by checking the text before the call. Invented API; each test states one rule."""

from __future__ import annotations

import json
import re
from pathlib import Path

from agents.crash_analyzer import report_text
from agents.offline.crash_roles import judge_feasibility
from agents.offline.fixer_input import guard_utf8_text
from agents.offline.prompt_reader import read_prompt
from fuzzkit.api import FunctionDecl, Param
from fuzzkit.facts_block import read_facts
from fuzzkit.header_facts import NOTES_KIND, FunctionNotes, HeaderFacts
from fuzzkit.param_docs import optional_params, param_facts, utf8_params
from fuzzkit.utf8 import describe, first_invalid

API = [
    FunctionDecl("gl_compile", "gl_rx *", [Param("pattern", "const gl_char *"), Param("flags", "int")]),
    FunctionDecl("gl_label", "int", [Param("input", "const char *"), Param("out", "char **")]),
    FunctionDecl("gl_scan", "int", [Param("buf", "const char *"), Param("len", "size_t")]),
    FunctionDecl("gl_fill", "int", [Param("dst", "gl_char *")]),  # output text: not input
]

HEADER = """\
/**
 * gl_char:
 *
 * One byte of a UTF-8 encoded string.
 */
typedef unsigned char gl_char;

/* A compiled pattern. */
typedef struct gl_rx gl_rx;

/**
 * gl_label:
 * @input: zero-terminated input UTF-8 string.
 * @out: where the result goes.
 */
int gl_label(const char *input, char **out);

/** @param buf bytes in any encoding  @param len their length */
int gl_scan(const char *buf, size_t len);
"""


def test_parameters_documented_as_utf8_by_their_type_or_their_own_description(tmp_path: Path) -> None:
    (tmp_path / "gl.h").write_text(HEADER)
    assert utf8_params([tmp_path / "gl.h"], API) == {"gl_label": ["input"], "gl_compile": ["pattern"]}
    files = [tmp_path / "gl.h"]
    assert param_facts(files, API)[:2] == (optional_params(files, API), utf8_params(files, API))  # one read
    (tmp_path / "plain.h").write_text(HEADER.replace("UTF-8", "Latin-1"))
    assert utf8_params([tmp_path / "plain.h"], API) == {}


def test_the_types_section_lists_them_and_they_survive_the_state() -> None:
    facts = HeaderFacts.from_dict(HeaderFacts(utf8={"gl_compile": ["pattern"]}).to_dict())
    notes = read_facts(facts.render(), NOTES_KIND, FunctionNotes)
    assert notes is not None and notes.utf8 == {"gl_compile": ["pattern"]}


def test_the_crash_report_says_whether_the_input_is_utf8(tmp_path: Path) -> None:
    bad, good = tmp_path / "bad", tmp_path / "good"
    bad.write_bytes(b"[)A\xa4")
    good.write_bytes("[a-\u00e9]".encode())
    assert describe(bad) == "not valid UTF-8 (byte 0xA4 at offset 3)" and describe(good) == "valid UTF-8"
    assert first_invalid(b"\xed\xa0\x80") == 0  # a surrogate is not UTF-8
    text = report_text({"kind": "oom", "input_text": describe(bad),
                        "utf8_arguments": {"gl_compile": ["pattern"]}})
    assert "input text: not valid UTF-8" in text
    assert "documented utf-8 parameters: gl_compile(pattern)" in text


HARNESS = """\
#include <stdint.h>
#include <stdlib.h>
#include "gl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = NULL;
  gl_rx *rx = NULL;
  text = lf_strndup(data, size);
  if (text == NULL) goto lf_cleanup;
  gl_scan((const char *)data, size);
  rx = gl_compile((const gl_char *)text, 0);
  lf_cleanup: ;
  free(text);
  return 0;
}
"""


def _triage(text: str, listed: str = "gl_compile(pattern), gl_scan(buf)", entry: str = "gl_compile") -> str:
    utf8 = {fn: [name] for fn, name in re.findall(r"(\w+)\((\w+)\)", listed)}
    return report_text({"kind": "oom", "entry_function": entry, "input_text": text, "utf8_arguments": utf8})


def test_the_repair_checks_the_text_right_before_the_call() -> None:
    code, how = guard_utf8_text(HARNESS, _triage("not valid UTF-8 (byte 0xA4 at offset 3)"), API)
    assert how and "gl_compile" in how
    guard = ("if ((text != NULL && !lf_utf8_ok((const char *)text, strlen((const char *)text))))"
             " goto lf_cleanup;")
    assert re.search(re.escape(guard) + r"\n\s*rx = gl_compile", code), code
    assert code.count("static int lf_utf8_ok(") == 1 and "#include <string.h>" in code
    assert code.index("lf_utf8_ok(const char") < code.index("LLVMFuzzerTestOneInput")
    # a sized parameter is checked with the length passed after it
    sized, _ = guard_utf8_text(HARNESS, _triage("not valid UTF-8 (byte 0xFF at offset 0)", "gl_scan(buf)"),
                               [*API[:2], FunctionDecl("gl_scan", "int", [Param("buf", "const char *"),
                                                                          Param("len", "size_t")])])
    assert "(data != NULL && !lf_utf8_ok((const char *)data, (size_t)(size)))" in sized
    # nothing to do: the input was UTF-8, or the harness already checks
    assert guard_utf8_text(HARNESS, _triage("valid UTF-8"), API) == (HARNESS, None)
    assert guard_utf8_text(code, _triage("not valid UTF-8 (byte 0xA4 at offset 3)"), API)[1] is None


def _feasibility(triage: str) -> dict[str, object]:
    prompt = (f"## Target function\ngl_rx * gl_compile(const gl_char * pattern, int flags);\n\n"
              f"## Crash triage\n{triage}\n## Stack\n#0 gl_grow gl.c:10\n#1 gl_compile gl.c:40\n\n"
              f"## Current harness\n```c\n{HARNESS}```\n")
    reply, _code = judge_feasibility(read_prompt("ROLE: crash_feasibility_analyzer", prompt))
    return json.loads(json.dumps(reply))


def test_a_crash_on_text_that_is_not_utf8_is_the_harness_breaking_the_contract() -> None:
    misuse = _feasibility(_triage("not valid UTF-8 (byte 0xA4 at offset 3)"))
    assert misuse["verdict"] == "harness_misuse" and "UTF-8" in str(misuse["fix_hint"])
    assert _feasibility(_triage("valid UTF-8"))["verdict"] == "library_bug"
    # the crash entered the library through a function that takes no documented UTF-8
    assert _feasibility(_triage("not valid UTF-8 (byte 0xA4 at offset 3)", entry="gl_other"))["verdict"] == (
        "library_bug")
