"""Usage rules travel as data: the analyzer's and the fixer's, through session memory, read back as models.

An invented library needs ``zz_setup(cfg)`` before ``zz_run(cfg, data, size)``. The analyzer's
reply carries that as a ``call_before`` rule beside its sentence; the analyzer node stores it in
session memory; the prototyper's prompt shows it as a ``# facts: rules v1`` block under the API
constraints; the offline prototyper reads the block, not the sentence: a reworded sentence
changes nothing, a sentence with no rule does nothing, and a known fix that failed shows no rule.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from agent_graph.memory.session_consolidate import consolidate_session_memory
from agent_graph.memory.session_memory import add_api_constraint, add_fix_results, format_session_memory
from agents.offline.cdecl import parse_prototypes
from agents.offline.prompt_reader import read_prompt
from agents.offline.roles import prototype
from agents.offline.synth import default_skeleton
from agents.prototyper import Prototyper
from fuzzkit.guidance_facts import Rule, read_rules, render_rules
from prompts import render

API = parse_prototypes("""
typedef struct zz_cfg zz_cfg;
void zz_setup(zz_cfg *cfg);
void zz_tune(zz_cfg *cfg, int level);
int zz_run(zz_cfg *cfg, const uint8_t *data, size_t size);
""")
BEFORE = Rule(kind="call_before", name="zz_tune", then="zz_run")


def _draft(memory: dict[str, Any]) -> str:
    target = API[2]
    state = {"target": target.to_dict(), "api": [f.to_dict() for f in API], "headers": ["zz.h"],
             "analysis": {"archetype": "stateless_parser"}, "session_memory": memory}
    values = Prototyper.variables(state, ("api_constraints", "known_fixes"), "stateless_parser", "d",
                                  default_skeleton("stateless_parser"), "p", "")
    _payload, code = prototype(read_prompt(*render("prototyper", values)))
    assert code is not None
    return code


def _tuned(code: str) -> bool:
    body = code[code.index("LLVMFuzzerTestOneInput"):]
    return "zz_tune(" in body and body.index("zz_tune(") < body.index("zz_run(")


def test_a_rule_in_session_memory_reaches_the_draft_and_its_sentence_does_not_matter() -> None:
    assert not _tuned(_draft({}))
    said = add_api_constraint({}, "call zz_tune before zz_run", rules=[BEFORE])
    assert _tuned(_draft(said))
    reworded = add_api_constraint({}, "the level must be set first", rules=[BEFORE])
    assert _draft(reworded) == _draft(said)
    sentence_only = add_api_constraint({}, "call zz_tune before zz_run")  # prose is for people
    assert not _tuned(_draft(sentence_only))


def test_the_rules_block_reads_back_as_the_models_it_was_rendered_from() -> None:
    memory = add_api_constraint({}, "call zz_tune before zz_run", rules=[BEFORE])
    text = format_session_memory(memory, ("api_constraints",))
    assert "# facts: rules v1" in text
    assert [r.key() for r in read_rules(text)] == [BEFORE.key()]
    assert render_rules([BEFORE, BEFORE.model_copy(update={"text": "again"})]).count("call_before") == 1


def test_only_a_fix_that_worked_shows_its_rules_and_each_rule_goes_with_its_fix() -> None:
    include = Rule(kind="include", name="<stdio.h>", text="add #include <stdio.h> for printf")
    rename = Rule(kind="rename", name="zz_runn", then="zz_run", text="replace zz_runn with zz_run")
    worked = add_fix_results({}, [include.text, rename.text], True, [include, rename.model_dump()])
    assert [e.get("rules", [{}])[0].get("kind") for e in worked["known_fixes"]] == ["include", "rename"]
    shown = format_session_memory(worked, ("known_fixes",))
    assert {r.kind for r in read_rules(shown)} == {"include", "rename"}
    failed = add_fix_results({}, [include.text], False, [include])
    assert read_rules(format_session_memory(failed, ("known_fixes",))) == []
    merged = consolidate_session_memory(add_fix_results(worked, [include.text], True, [include]))
    assert {r["kind"] for e in merged["known_fixes"] for r in e.get("rules", [])} == {"include", "rename"}


def test_a_rule_says_what_it_lacks() -> None:
    with pytest.raises(ValidationError, match="a call_before rule needs then"):
        Rule(kind="call_before", name="zz_tune")
    with pytest.raises(ValidationError):
        Rule(kind="unknown", name="x")  # type: ignore[arg-type]


def test_the_offline_analyzer_and_fixer_reply_with_rules() -> None:
    from agents.function_analyzer import FunctionAnalysis
    from agents.offline.analysis import analyze_function
    from agents.offline.fixer import fix_harness

    api = parse_prototypes("typedef struct yy yy;\nyy *yy_new(void);\nvoid yy_free(yy *p);\n"
                           "int yy_parse(yy *p, const char *text);")
    found = analyze_function(api[2], api)
    kinds = {r.kind for r in found.rules}
    assert {"release_with", "nul_terminated"} <= kinds, found.rules
    assert FunctionAnalysis.model_validate({"archetype": "x", **found.to_dict()}).rules == found.rules
    broken = '#include "yy.h"\nint f(void) { return yy_pars(0, 0); }\n'
    fixed = fix_harness(broken, "h.c:2:23: error: call to undeclared function 'yy_pars'\n", api, ["yy.h"])
    assert [(r.kind, r.name, r.then) for r in fixed.rules] == [("rename", "yy_pars", "yy_parse")], fixed


def test_an_unnamed_parameter_gets_a_sentence_and_no_rule() -> None:
    from agents.offline.analysis import analyze_function
    from fuzzkit.api import FunctionDecl, Param

    decl = FunctionDecl("uu_decode", "int", (Param("", "int32_t"), Param("", "const char *")))
    found = analyze_function(decl, [decl])
    assert not any(r.kind == "nul_terminated" for r in found.rules)
    assert "argument 2 must be a NUL-terminated string" in found.constraints


def test_a_reply_s_misfit_rule_is_left_out_not_the_reply() -> None:
    from agents.enhancer import EnhancerReply
    from agents.function_analyzer import FunctionAnalysis

    reply = FunctionAnalysis.model_validate({"archetype": "x", "constraints": ["c"], "rules": [
        {"kind": "call_before", "name": "zz_tune"}, {"kind": "release_with", "name": "zz_free"}, "junk"]})
    assert [(r.kind, r.name) for r in reply.rules] == [("release_with", "zz_free")]
    assert reply.constraints == ["c"]
    assert reply.rules_dropped == 2  # counted for the node's event, never silently
    assert EnhancerReply.model_validate({"fixes": ["f"], "rules": {"kind": "include"}}).rules == []
    assert EnhancerReply.model_validate({"fixes": ["f"]}).rules_dropped == 0
    assert "rules_dropped" not in str(EnhancerReply.model_json_schema())  # no field a model must fill
