"""A block's call that leaves what it made in a field of its object gets that field released.

The invented document parser's ``dp_parse_all(dp_parser_ptr)`` builds a ``dp_doc`` with
``dp_new_doc`` and leaves it in the parser's ``doc`` field; ``dp_parser_free`` does not free it.
The header facts say so much (the record's fields, the typedefs, ``dp_doc_free``); the leak's
allocation stack says the rest.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_graph.context import Context
from agent_graph.routing import Limits, route
from fuzzkit.api import FunctionDecl, Param
from fuzzkit.header_facts import HeaderFacts, Record, Releaser, Typedef
from nodes.memory_manager import revert_failed

HARNESS = """\
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* @LF:CALL */
  n = dp_count(data, size);
  /* LF improve: call dp_parse_all on a new dp_parser */
  {
    dp_parser *parser2 = NULL;
    parser2 = dp_parser_new(data, size);
    if (parser2 == NULL) goto lf_skip_1;
    (void)dp_parse_all((dp_parser_ptr)parser2);
    lf_skip_1: ;
    dp_parser_free(parser2);
  }
  /* @LF:CLEANUP */
  return 0;
}
"""
API = [FunctionDecl("dp_parser_new", "dp_parser_ptr",
                    (Param("data", "const uint8_t *"), Param("size", "size_t"))),
       FunctionDecl("dp_parse_all", "int", (Param("p", "dp_parser_ptr"),)),
       FunctionDecl("dp_parse_entity", "int", (Param("p", "dp_parser_ptr"),)),
       FunctionDecl("dp_new_doc", "dp_doc_ptr", (Param("version", "const char *"),)),
       FunctionDecl("dp_doc_free", "void", (Param("doc", "dp_doc_ptr"),)),
       FunctionDecl("dp_parser_free", "void", (Param("p", "dp_parser_ptr"),))]
FACTS = HeaderFacts(
    typedefs=[Typedef("dp_parser", "struct _dp_parser", "struct _dp_parser"),
              Typedef("dp_parser_ptr", "dp_parser *", "struct _dp_parser *"),
              Typedef("dp_doc", "struct _dp_doc", "struct _dp_doc"),
              Typedef("dp_doc_ptr", "dp_doc *", "struct _dp_doc *")],
    records=[Record("struct", "_dp_parser", ("dp_parser",), (("depth", "int"), ("doc", "dp_doc *")), False)],
    releasers=[Releaser(function="dp_doc_free", releases="dp_doc_ptr", evidence="parameter type")])
BEST = {"version": 1, "code": "int LLVMFuzzerTestOneInput(void) { return 0; }", "lines_percent": 5.0,
        "build": {"version": 1, "ok": True}, "run": {"version": 1, "usable": True}}


def _state(tmp_path: Path, facts: HeaderFacts = FACTS, **extra: Any) -> dict[str, Any]:
    frames = [{"function": "malloc"}, {"function": "dp_new_doc"}, {"function": "dp_sax_start"},
              {"function": "dp_parse_all"}, {"function": "LLVMFuzzerTestOneInput", "line": 8}]
    change = {"kind": "improve", "version": 2, "directions": ["call dp_parse_all on a new dp_parser"],
              **extra}
    return {"best": BEST, "harness_version": 2, "harness_code": HARNESS, "phase": "optimization",
            "build": {"version": 2, "ok": True}, "run": {"version": 2, "crashed": True, "usable": False},
            "crash": {"version": 2, "kind": "leak", "frames": frames}, "last_change": change,
            "counters": {"harness_versions": 2}, "api": [d.to_dict() for d in API],
            "header_facts": facts.to_dict(), "project": "p", "function": "dp_count",
            "work_dir": str(tmp_path)}


def test_the_field_the_call_left_its_result_in_is_released_right_after_the_call(tmp_path: Path) -> None:
    update = revert_failed(_state(tmp_path), Context())  # type: ignore[arg-type]
    code = update["harness_code"]
    release = ("    if (parser2 != NULL && parser2->doc != NULL) "
               "{ dp_doc_free(parser2->doc); parser2->doc = NULL; }")
    assert f"    (void)dp_parse_all((dp_parser_ptr)parser2);\n{release}" in code
    assert code.index(release) < code.index("dp_parser_free(parser2)")
    assert update["last_change"]["released"] == ["call dp_parse_all on a new dp_parser"]
    assert '"field": "doc"' in (tmp_path / "events.jsonl").read_text()
    merged = {**_state(tmp_path), **update, "counters": {"harness_versions": 3},
              "analysis": {"archetype": "stateless_parser"}}
    assert route(merged, Limits()).next == "build"  # type: ignore[arg-type]


def test_without_such_a_field_or_after_one_repair_the_block_is_dropped(tmp_path: Path) -> None:
    once = _state(tmp_path, released=["call dp_parse_all on a new dp_parser"])
    again = revert_failed(once, Context())  # type: ignore[arg-type]
    assert "dp_parse_all" not in again["harness_code"]
    bare = HeaderFacts(typedefs=FACTS.typedefs, releasers=FACTS.releasers,
                       records=[Record("struct", "_dp_parser", ("dp_parser",), (("depth", "int"),), False)])
    update = revert_failed(_state(tmp_path, facts=bare), Context())  # type: ignore[arg-type]
    assert "dp_parse_all" not in update["harness_code"]


def test_a_twin_call_of_the_change_on_another_parser_gets_the_same_release(tmp_path: Path) -> None:
    twin = HARNESS.replace("  /* @LF:CLEANUP */", """\
  /* LF improve: call dp_parse_entity on a new dp_parser */
  {
    dp_parser *parser3 = NULL;
    parser3 = dp_parser_new(data, size);
    if (parser3 != NULL) dp_parse_entity(parser3);
    dp_parser_free(parser3);
  }
  /* @LF:CLEANUP */""")
    update = revert_failed({**_state(tmp_path), "harness_code": twin}, Context())  # type: ignore[arg-type]
    code = update["harness_code"]
    after = ("    if (parser3 != NULL) dp_parse_entity(parser3);\n"
             "    if (parser3 != NULL && parser3->doc != NULL)")
    assert after in code
    assert code.count("dp_doc_free(") == 2
    assert update["last_change"]["released"] == ["call dp_parse_all on a new dp_parser",
                                                 "call dp_parse_entity on a new dp_parser"]


def test_the_run_remembers_the_field_release_for_a_later_improvement_adding_a_twin(tmp_path: Path) -> None:
    """The repaired block went back with its noise-level improvement; the next adds the twin."""
    from nodes.improvement_blocks import reapply_field_releases

    update = revert_failed(_state(tmp_path), Context())  # type: ignore[arg-type]
    assert update["extras"]["released_fields"] == {
        "dp_parse_all": {"field": "doc", "maker": "dp_new_doc", "releaser": "dp_doc_free"}}
    later = HARNESS.replace("call dp_parse_all", "call dp_parse_entity").replace(
        "(void)dp_parse_all(", "(void)dp_parse_entity(")
    state = {**_state(tmp_path), "extras": update["extras"]}
    code, functions = reapply_field_releases(later, state)  # type: ignore[arg-type]
    assert functions == ["dp_parse_entity"]
    assert ("    (void)dp_parse_entity((dp_parser_ptr)parser2);\n"
            "    if (parser2 != NULL && parser2->doc != NULL) { dp_doc_free(parser2->doc);") in code
    assert reapply_field_releases(code, state)[1] == []  # released once
    assert reapply_field_releases(later, _state(tmp_path))[0] == later  # nothing remembered


def test_the_held_argument_is_read_past_nested_calls_and_casts() -> None:
    from fuzzkit.field_release import held_argument

    assert held_argument("  rc = dp_feed(dp_len(a, b), (dp_parser_ptr)p2);", ["dp_feed"], 1) == "p2"
    assert held_argument("  rc = dp_feed(x, &p2);", ["dp_feed"], 1) == ""  # not a plain variable
    assert held_argument("  rc = dp_other(x, p2);", ["dp_feed"], 1) == ""
