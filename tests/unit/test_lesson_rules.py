"""Lessons come from the rules a fix states as data, never from the sentence it is written in.

The fixer writes a sentence for people ("release out_v (from qq_parse) with qq_finish before
returning") and the same change as a :class:`fuzzkit.guidance_facts.Rule`; the enhancer node logs
both, the trajectory carries the rules on its ``harness`` (and ``fix``) steps, and the offline
extractor reads only the rules. Rewording the sentence changes no lesson; a sentence that comes
without a rule teaches none.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.harness_marks import guard_empty_input
from agents.offline.cdecl import parse_prototypes
from agents.offline.fixer import fix_harness
from agents.offline.fixer_input import feed_input
from agents.offline.fixer_leak import release_results
from agents.offline.followups import without_crashed_followup
from agents.offline.lesson_extract import actionable_items
from agents.offline.synth_guide import read_guidance
from fuzzkit.guidance_facts import Rule, valid_rules
from long_term_memory.experience.trajectory import _event_step, trajectory_from_state
from long_term_memory.experience.trajectory_steps import (
    FixStep,
    HarnessStep,
    TrajectoryFacts,
    read_trajectory,
    render_trajectory,
)
from tests.trajectories import build, crash, final_crash, harness, run, verdict
from tests.unit.test_experience_support import config
from tests.unit.test_followup_crash import HARNESS as FOLLOWUP_HARNESS

API = parse_prototypes("""
int qq_parse(const uint8_t *data, size_t size, struct qq_doc **out);
void qq_finish(struct qq_doc *doc);
""")
PARSE = API[0]
LEAKY = """int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct qq_doc *out_v = NULL;
  qq_parse(data, size, &out_v);
  return 0;
}
"""


def _leak_repair(*changes: str, rules: tuple[Rule, ...]) -> list[object]:
    return [harness(1, "prototyper", "qq_parse"), build(1), run(1, lines=12.0, crashed=True),
            final_crash("leak", "Direct leak of 64 byte(s) in 1 object(s) allocated from qq_parse"),
            verdict(), harness(2, "enhancer.fix", *changes, rules=rules), build(2),
            run(2, hits=9, lines=30.0)]


def test_the_fixers_release_is_stated_as_a_rule_and_becomes_the_same_lesson_however_it_is_worded() -> None:
    said: list[Rule] = []
    code, added = release_results(LEAKY, PARSE, API, {"qq_doc": "qq_finish"}, rules=said)
    assert added == ["release out_v (from qq_parse) with qq_finish before returning"]
    assert [r.model_dump(exclude_defaults=True, exclude={"text"}) for r in said] == [
        {"kind": "release_result", "name": "qq_finish", "producer": "qq_parse", "var": "out_v"}]
    rules = tuple(said)
    reworded = _leak_repair("free the parser's output with its own releaser", rules=rules)
    as_written = actionable_items(PARSE.prototype(), _leak_repair(*added, rules=rules), code)  # type: ignore[arg-type]
    assert actionable_items(PARSE.prototype(), reworded, code) == as_written  # type: ignore[arg-type]
    assert [i["action"] for i in as_written] == ["release_out_param(type=qq_doc, releaser=qq_finish)"]


def test_a_fixers_sentence_without_its_rule_teaches_nothing() -> None:
    sentences = ["release out_v (from qq_parse) with qq_finish before returning",
                 "hand the fuzz input to qq_parse's object with qq_feed before the call",
                 "add the struct tag to qq_doc at line 2 (it is struct qq_doc)",
                 "declare v as qq_doc * (qq_doc is opaque; no constructor found)",
                 "replace qq_prase with qq_parse (clang's fix-it)",
                 "left out the follow-up call to qq_count, which crashed after the target",
                 "return early on an empty input (the crash input is empty)"]
    steps = [*_leak_repair(*sentences, rules=()), crash("SEGV", "qq_count")]
    code = LEAKY.replace("  return 0;", "  qq_finish(out_v);\n  return 0;")
    assert actionable_items(PARSE.prototype(), steps, code) == []  # type: ignore[arg-type]


def test_each_fixer_that_writes_a_lesson_s_sentence_states_its_rule() -> None:
    fixed = fix_harness("#include \"ee.h\"\nint f(void) {\n  ee_mode m = 0;\n  return m;\n}\n",
                        "h.c:3:3: error: must use 'enum' tag to refer to type 'ee_mode'", [], [])
    tags = [(r.kind, r.name, r.then) for r in fixed.rules if r.kind == "keep_tag"]
    assert tags == [("keep_tag", "ee_mode", "enum")], fixed
    said: list[Rule] = []
    guarded, how = guard_empty_input(LEAKY, said)
    assert how and [(r.kind, r.size, r.text) for r in said] == [("min_size", 1, how)]
    said = []
    stack = "#0 kx_get_data /src/kx.c:120\n#1 LLVMFuzzerTestOneInput /run/harness.c:{}\n".format(
        FOLLOWUP_HARNESS.splitlines().index("    rc = kx_get_data(re, n);") + 1)
    assert without_crashed_followup(FOLLOWUP_HARNESS, stack, "kx_search", said) is not None
    assert [(r.kind, r.name) for r in said] == [("avoid", "kx_get_data")]
    feeding = parse_prototypes("qq_dec *qq_dec_new(void);\nint qq_dec_set_input(qq_dec *d, const uint8_t *b, "
                               "size_t n);\nint qq_dec_run(qq_dec *d);\nvoid qq_dec_free(qq_dec *d);")
    unfed = ("int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {\n  qq_dec *d = qq_dec_new();\n"
             "  qq_dec_run(d);\n  qq_dec_free(d);\n  return 0;\n}\n")
    said = []
    _fed, how = feed_input(unfed, feeding[2], feeding, rules=said)
    assert how and [(r.kind, r.name, r.then) for r in said] == [
        ("feed_input", "qq_dec_set_input", "qq_dec_run")]


def test_the_trajectory_carries_the_logged_rules_as_data_and_reads_them_back(tmp_path: Path) -> None:
    rule = {"kind": "release_result", "name": "qq_finish", "producer": "qq_parse", "var": "out_v",
            "text": "release out_v (from qq_parse) with qq_finish before returning"}
    events = [{"type": "harness.written", "data": {"version": 2, "by": "enhancer.fix",
                                                   "fixes": [rule["text"]],
                                                   "rules": [rule, {"kind": "rename", "name": "x"}]}},
              {"type": "harness.written", "data": {"version": 3, "by": "enhancer.fix", "fixes": ["f"],
                                                   "rules": 2}}]  # an older run's event: a count
    first, older = (_event_step(e, tmp_path) for e in events)
    assert isinstance(first, HarnessStep) and isinstance(older, HarnessStep) and older.rules == []
    assert [r.key() for r in first.rules] == [Rule.model_validate(rule).key()]  # the broken one left out
    assert first.rules[0].text == ""  # the step's line already says it
    facts = TrajectoryFacts(steps=[first])
    assert read_trajectory("text\n" + render_trajectory(facts)) == facts
    state = {"project": "qq", "function": "qq_parse", "work_dir": str(tmp_path),
             "session_memory": {"known_fixes": [{"content": rule["text"], "success": True, "rules": [rule]}]},
             "local_memory": {"attempted_directions": [
                 {"direction": "call qq_count on the doc", "outcome": "Failed", "calls": ["qq_count"],
                  "evidence": "crashed the harness (harness misuse)"}]}}
    steps = trajectory_from_state(state, config(), "r", events=[]).steps
    fix = next(s for s in steps if isinstance(s, FixStep))
    assert [r.kind for r in fix.rules] == ["release_result"]
    items = actionable_items("int qq_x(void);", steps, LEAKY)
    assert [i["action"] for i in items] == ["release_out_param(type=qq_doc, releaser=qq_finish)",
                                            "avoid_call(qq_count)"]


def test_the_new_kinds_ask_for_their_fields_and_the_draft_reader_passes_them_by() -> None:
    with pytest.raises(ValueError, match="release_result rule needs producer and var"):
        Rule(kind="release_result", name="qq_finish")
    with pytest.raises(ValueError, match="keep_tag rule's then is one of"):
        Rule(kind="keep_tag", name="ee_mode", then="typedef")
    assert valid_rules([{"kind": "opaque", "name": "qq_doc"}, {"kind": "feed_input", "name": "f"}]) == [
        Rule(kind="opaque", name="qq_doc")]
    rules = [Rule(kind="release_field", name="qq_finish", producer="qq_parse", var="cfg", field="out"),
             Rule(kind="feed_input", name="qq_parse", then="qq_finish"), Rule(kind="opaque", name="qq_doc"),
             Rule(kind="keep_tag", name="qq_doc", then="struct"),
             Rule(kind="release_result", name="qq_finish", producer="qq_parse", var="v")]
    guidance = read_guidance(rules, API, PARSE)
    assert guidance.applied == [] and not guidance.release and not guidance.before


def test_the_fix_prompt_names_only_kinds_a_rule_has_and_its_example_stays_valid() -> None:
    import json
    import re
    from typing import get_args

    from agents.enhancer import EnhancerReply
    from fuzzkit.guidance_facts import RuleKind
    from prompts import load_template

    text = load_template("enhancer_fix")[1]
    named = set(re.findall(r'"kind": "(\w+)"', text)) | set(re.findall(r"use\s+`(\w+)`\s+for", text))
    assert {"release_result", "release_field", "feed_input", "keep_tag", "opaque", "min_size"} <= named
    assert named <= set(get_args(RuleKind))
    example = re.search(r"```json\n(.*?)```", text, re.S)
    assert example is not None
    assert EnhancerReply.model_validate(json.loads(example.group(1))).rules[0].kind == "include"


def test_the_offline_enhancers_crash_repair_states_its_rule_in_the_reply(tmp_path: Path) -> None:
    """The rule travels in the reply's ``rules``: what the node logs and session memory keeps."""
    from agents.enhancer import EnhancerReply
    from tests.unit.test_empty_input_guard import _fix

    payload, _code = _fix(tmp_path, b"")
    reply = EnhancerReply.model_validate(payload)
    assert [(r.kind, r.size, r.text) for r in reply.rules] == [("min_size", 1, payload["fixes"][0])]
    assert "rules" not in _fix(tmp_path, b"\x01")[0]  # no repair, no rule


def test_a_failed_directions_calls_survive_an_extraction_reply_that_restates_it() -> None:
    from agent_graph.memory.local_memory import apply_extraction, record_failed_attempt
    from agent_graph.memory.local_memory_schema import ExtractionReply

    memory = record_failed_attempt(None, "call qq_count on the doc", "crashed the harness (harness misuse)",
                                   "v3", calls=["qq_count", "qq_doc_new"])
    assert memory["attempted_directions"][0]["calls"] == ["qq_count", "qq_doc_new"]
    reply = ExtractionReply.model_validate({"updated_directions": [
        {"direction": "call qq_count on the doc", "outcome": "Failed", "evidence": "crashed"},
        {"direction": "call qq_scan on the input", "outcome": "Success"}]})
    rows = apply_extraction(memory, reply)[0]["attempted_directions"]
    assert [row.get("calls") for row in rows] == [["qq_count", "qq_doc_new"], None]
