"""A buffer the library takes over: the harness's copy is not freed again once the call succeeded.

An invented YAML-ish parser: ``yq_parser_set_malloc_string(p, char *str, size_t len)`` is
documented to take a malloc'd string whose "ownership is transferred" to the parser, which frees
it when destroyed; "In case of an error the string is not freed". Its return note says "zero on
success, -1 on error" after a parameter line mentioning "-1": read as "1 on success", the
harness dropped its copy on failure and freed it twice on success.
"""

from __future__ import annotations

from agents.offline.analysis import analyze_function
from agents.offline.cdecl import parse_prototypes
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.synth_knowledge import documented_success
from agents.offline.type_table import TypeTable, read_types, using
from fuzzkit.header_facts import HeaderFacts

API = """
struct yq_parser *yq_parser_create(const struct yq_parse_cfg *cfg);
void yq_parser_destroy(struct yq_parser *fyp);
int yq_parser_set_malloc_string(struct yq_parser *fyp, char *str, size_t len);
struct yq_event *yq_parser_parse(struct yq_parser *fyp);
void yq_parser_event_free(struct yq_parser *fyp, struct yq_event *fye);
"""
NOTE = "@len: The length of the string (or -1 if '\\0' terminated) Returns: zero on success, -1 on error"


def _types(adopts: list[str]) -> str:
    facts = HeaderFacts(adopts=adopts, returns={"yq_parser_set_malloc_string": NOTE})
    return "\n".join(facts.render().splitlines()[1:])  # the section's body, without its heading


def _body(adopts: list[str]) -> str:
    decls = parse_prototypes(API)
    target = next(d for d in decls if d.name == "yq_parser_parse")
    with using(read_types(_types(adopts))):
        arche = analyze_function(target, decls).archetype
        code = write_harness(target, decls, ["yq.h"], arche, default_skeleton(arche)).code
    return code[code.index("LLVMFuzzerTestOneInput"):]


def test_the_copy_given_to_an_adopting_setter_is_the_librarys_once_it_succeeded() -> None:
    assert read_types(_types(["yq_parser_set_malloc_string"])).adopts == {"yq_parser_set_malloc_string"}
    body = _body(["yq_parser_set_malloc_string"])
    call = body.index("rc = yq_parser_set_malloc_string(")
    dropped = body.index("if (rc == 0) text = NULL;")
    assert call < dropped < body.index("yq_parser_parse(") < body.index("free(text);"), body
    assert "text = NULL;" not in _body([]).split("/* @LF:SETUP */")[1].split("/* @LF:CALL */")[0].replace(
        "char *text = NULL;", "")  # not documented so: the harness keeps and frees its copy


def test_minus_one_in_a_parameter_line_is_no_success_value() -> None:
    assert documented_success(NOTE, "rc", TypeTable()) == "rc == 0"
    assert documented_success("Returns 1 on success, 0 otherwise.", "rc", TypeTable()) == "rc"
