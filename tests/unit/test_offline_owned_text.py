"""Text turned into new text is the caller's: `tt_uri_escape(const char *)` has no buffer to return.

An improvement block that calls such a function releases what it returns (before, it leaked,
and the improvement was dropped). A function that could hand back the caller's own buffer, or an
accessor, keeps its result.
"""

from __future__ import annotations

from agents.offline.cdecl import parse_prototypes
from agents.offline.improver import improve_harness
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.synth_api import ApiIndex

API = parse_prototypes("""
int tt_check(const char *text);
char *tt_uri_escape(const char *text, const char *keep);
char *tt_unquote_into(const char *text, char *target);
char *tt_get_escape_table(const char *name);
const char *tt_normalize_static(const char *text);
""")
BY = {f.name: f for f in API}


def test_new_text_is_owned_unless_it_could_be_the_callers_buffer_or_an_accessor() -> None:
    idx = ApiIndex(API)
    assert idx.returns_owned(BY["tt_uri_escape"])
    assert not idx.returns_owned(BY["tt_unquote_into"])  # may return `target`
    assert not idx.returns_owned(BY["tt_get_escape_table"])  # an accessor
    assert not idx.returns_owned(BY["tt_normalize_static"])  # const: borrowed


def test_an_improvement_that_calls_it_releases_what_it_returns() -> None:
    draft = write_harness(BY["tt_check"], API, ["tt.h"], "stateless_parser",
                          default_skeleton("stateless_parser")).code
    result = improve_harness(draft, BY["tt_check"], API, ["tt_uri_escape"])
    assert result.added_calls == ["tt_uri_escape"]
    var = next(line.split("=")[0].strip() for line in result.code.splitlines() if "= tt_uri_escape(" in line)
    assert f"if ({var} != NULL) free({var});" in result.code
