"""Input documented as NUL-terminated, read from comments: parameters, functions, option constants.

Invented API; each test states one rule of :func:`fuzzkit.param_docs.terminated_inputs`, and the
report line the crash triage reads back (:func:`agents.offline.fixer_terminated.documented`).
"""

from __future__ import annotations

from pathlib import Path

from agents.crash_analyzer import report_text
from agents.offline.fixer_terminated import documented, unterminated_calls
from agents.sections import terminated_arguments
from fuzzkit.api import FunctionDecl, Param
from fuzzkit.facts_block import read_facts
from fuzzkit.header_facts import NOTES_KIND, FunctionNotes, HeaderFacts
from fuzzkit.param_docs import param_facts, terminated_inputs

API = [
    FunctionDecl("zt_load", "int", [Param("src", "const char *"), Param("n", "size_t"),
                                    Param("opts", "unsigned")]),
    FunctionDecl("zt_name", "int", [Param("name", "const unsigned char *")]),
    FunctionDecl("zt_dump", "char *", [Param("fmt", "const char *")]),
    FunctionDecl("zt_pair", "int", [Param("key", "const char *"), Param("value", "const char *")]),
]

HEADER = """\
/* Lengths are ZT_SIZE; a special length marks zero-terminated strings. */
#define ZT_SIZE     size_t
#define ZT_STRICT   1   /* reject trailing bytes */
#define ZT_CSTRING  2
/* The source is zero-terminated: n is ignored. */
#define ZT_AUTO_LEN 4
enum zt_mode {
  ZT_MODE_RAW = 0,
  ZT_MODE_TEXT = 8, /**< the input is a null terminated string */
};

/* Loads src. With ZT_CSTRING, src must be NUL-terminated. */
int zt_load(const char *src, size_t n, unsigned opts);

/* Checks a name. The name must be NUL terminated. */
int zt_name(const unsigned char *name);

/* Prints as fmt says. Returns a NUL-terminated string the caller frees. */
char *zt_dump(const char *fmt);

/**
 * zt_pair:
 * @key: a NUL-terminated key
 * @value: any bytes, need not be NUL-terminated
 */
int zt_pair(const char *key, const char *value);
"""


def test_parameters_functions_and_constants_documented_as_nul_terminated(tmp_path: Path) -> None:
    (tmp_path / "zt.h").write_text(HEADER)
    found = terminated_inputs([tmp_path / "zt.h"], API)
    # a parameter's own description; a function whose one input its sentence is about (not its output)
    assert found.params == {"zt_name": ["name"], "zt_pair": ["key"]}, found.params
    # a sentence naming a constant makes the constant the condition; a constant's own comment
    # (after it, or starting the line above it); the comment ending the line above is that line's;
    # a name for a type is no constant, and "need not be NUL-terminated" says the opposite
    assert found.flags == {"ZT_CSTRING": None, "ZT_AUTO_LEN": 4, "ZT_MODE_TEXT": 8}, found.flags
    assert param_facts([tmp_path / "zt.h"], API).terminated == found  # one read gives the same
    (tmp_path / "plain.h").write_text(HEADER.replace("terminated", "encoded"))
    assert terminated_inputs([tmp_path / "plain.h"], API).params == {}


def test_the_report_line_lists_what_the_harness_calls_and_reads_back() -> None:
    facts = HeaderFacts(terminated={"zt_name": ["name"], "zt_pair": ["key"]},
                        terminated_flags={"ZT_CSTRING": 2, "ZT_MODE_TEXT": None})
    state = {"header_facts": facts.to_dict(), "harness_code": "zt_name((const unsigned char *)data);"}
    found = terminated_arguments(state)
    assert found == {"params": {"zt_name": ["name"]}, "flags": {"ZT_CSTRING": 2, "ZT_MODE_TEXT": None}}, found
    text = report_text({"kind": "heap-buffer-overflow", "terminated_arguments": found})
    assert "documented nul-terminated input: zt_name(name); flags ZT_CSTRING=0x2, ZT_MODE_TEXT" in text
    shown = HeaderFacts.from_dict(facts.to_dict()).render()
    notes = read_facts(shown, NOTES_KIND, FunctionNotes)  # the Types section carries them as data
    assert notes is not None and notes.terminated_flags == {"ZT_CSTRING": 2, "ZT_MODE_TEXT": None}
    assert notes.terminated == {"zt_name": ["name"], "zt_pair": ["key"]}
    assert documented(text) == ({"zt_name": ["name"]}, {"ZT_CSTRING": 2, "ZT_MODE_TEXT": None})
    # read from the data, not the line: a reworded line changes nothing
    assert documented(text.replace("documented nul-terminated input:", "terminated:")) == documented(text)


def test_a_call_carries_the_flag_by_name_or_by_a_drawn_option_word_that_can_hold_it() -> None:
    triage = report_text({"terminated_arguments": {"flags": {"ZT_CSTRING": 2}}})
    api = API[:1]
    named = "zt_load((const char *)data, size, ZT_STRICT | ZT_CSTRING);"
    assert [c.function for c in unterminated_calls(named, triage, api)] == ["zt_load"]
    drawn = "o = (unsigned)lf_take_bits(&lf_in, 0x3u);\nzt_load((const char *)data, size, o);"
    assert unterminated_calls(drawn, triage, api)
    assert not unterminated_calls(drawn.replace("0x3u", "0x1u"), triage, api)  # the bit is never drawn
    assert not unterminated_calls(named.replace("(const char *)data", "text"), triage, api)  # a copy
    assert not unterminated_calls("zt_load((const char *)data, size, ZT_STRICT);", triage, api)
