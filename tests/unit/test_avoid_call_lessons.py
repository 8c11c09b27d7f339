"""Tried and failed: a call an improvement added crashed by misuse, and the next harness leaves it out.

The trajectory of one target says an improvement added ``vv_render``, crashed through it, and was
dropped. The lesson extracted from it (``avoid_call(vv_render)``) reaches the next target of the
library through the rendered improve prompt; the offline improver, which adds ``vv_render`` without
the lesson, leaves it out with it and says so, and only then does the lesson count as used.
"""

from __future__ import annotations

import json
from typing import Any

from agents.crash_analyzer import report_text
from agents.enhancer import Enhancer
from agents.offline.cdecl import parse_prototypes
from agents.offline.experience import distil
from agents.offline.lesson_extract import actionable_items
from agents.offline.prompt_reader import read_prompt
from agents.offline.roles import enhance
from agents.offline.synth import default_skeleton, write_harness
from fuzzkit.guidance_facts import Rule
from long_term_memory.experience import parse_memory_items
from long_term_memory.experience.extraction import build_extraction_prompt
from long_term_memory.experience.inject import render_experience
from long_term_memory.experience.lesson_effects import used_items
from long_term_memory.experience.lessons import lesson_fits
from long_term_memory.experience.matches import InjectItem
from long_term_memory.experience.trajectory import _event_step
from long_term_memory.experience.trajectory_steps import CrashStep, RevertStep, Step, step_line
from prompts import render
from tests.trajectories import (
    build,
    crash,
    direction,
    harness,
    reverted,
    run,
    stop,
    trajectory,
    verdict,
)

API = parse_prototypes("""
int vv_parse(const uint8_t *data, size_t size, struct vv_doc **out);
void vv_free(struct vv_doc *doc);
int vv_count(const struct vv_doc *doc);
int vv_render(const uint8_t *data, size_t size);
int vv_check(const uint8_t *data, size_t size);
int vv_scan(const uint8_t *data, size_t size);
""")
BY = {f.name: f for f in API}
IMPROVED = harness(2, "enhancer.improve", "call vv_render on the input", "call vv_check on the input",
                   added=("vv_render", "vv_check"))
DROPPED: list[Step] = [
    harness(1, "prototyper", "vv_check"),
    build(1),
    run(1, hits=300, lines=10.0),
    IMPROVED,
    build(2),
    run(2, lines=14.0, crashed=True),
    crash("heap-buffer-overflow", "vv_render"),
    verdict(),
    reverted(2),
    stop("iteration budget 1 used"),
]
AVOID = "avoid_call(function=vv_render)"
GAVE_UP = "crash caused by the harness; the last fix round changed nothing; gave up after 2 fix rounds"


def first_draft(name: str) -> str:
    return write_harness(BY[name], API, ["vv.h"], "stateless_parser",
                         default_skeleton("stateless_parser")).code


def shown(action: str = AVOID) -> InjectItem:
    return InjectItem("MEM-0000a5a5", "rec-1", "Calling vv_render crashed (heap-buffer-overflow)",
                      "Harnesses that could add vv_render.", "Do not add vv_render.", 0.9, 1, 0.6, True,
                      "project vv", {"scope": {"name": "vv_render"}, "action": action,
                                     "failure": "sanitizer:heap-buffer-overflow@vv_render"})


def improve_reply(target: str, experience: str) -> tuple[dict[str, Any], str]:
    state = {"target": BY[target].to_dict(), "api": [f.to_dict() for f in API], "headers": ["vv.h"],
             "analysis": {"archetype": "stateless_parser"}, "harness_code": first_draft(target),
             "session_memory": {}, "run": {"coverage": {"lines": {"percent": 10.0}}}}
    uncovered = "\n".join(f"- {BY[n].prototype()}" for n in ("vv_render", "vv_check", "vv_count"))
    values = Enhancer.improve_variables(state, (), uncovered, "(none)", experience)
    payload, code = enhance(read_prompt(*render("enhancer_improve", values)))
    assert code is not None
    return payload, code


def test_the_trajectory_names_the_calls_an_improvement_added_and_the_call_a_crash_came_through() -> None:
    written = {"type": "harness.written", "data": {"version": 2, "by": "enhancer.improve",
                                                   "directions": ["call vv_render on the input"],
                                                   "added_calls": ["vv_render"]}}
    triaged = {"type": "crash.triaged", "data": {"kind": "leak", "location": "library", "entry": "vv_render"}}
    assert step_line(_event_step(written, None)).endswith("(adds calls to vv_render)")  # type: ignore[arg-type]
    assert step_line(_event_step(triaged, None)) == "- [crash] leak at library through vv_render"  # type: ignore[arg-type]


def test_a_dropped_improvement_becomes_an_avoid_call_lesson_scoped_to_the_call() -> None:
    items = actionable_items("int vv_scan(const uint8_t *data, size_t size);", DROPPED, "")
    assert [(i["action"], i["scope"], i["failure"]) for i in items] == [
        ("avoid_call(vv_render)", {"name": "vv_render"}, "sanitizer:heap-buffer-overflow@vv_render")]
    # an improvement that was kept, or a crash through a call it did not add, teaches nothing
    kept = [s for s in DROPPED if not isinstance(s, RevertStep)]
    assert actionable_items("int vv_scan(const uint8_t *data, size_t size);", kept, "") == []
    through_old = [crash("heap-buffer-overflow", "vv_parse") if isinstance(s, CrashStep) else s
                   for s in DROPPED]
    assert actionable_items("int vv_scan(const uint8_t *data, size_t size);", through_old, "") == []


def test_a_target_whose_repairs_gave_up_on_a_misuse_crash_teaches_the_others_to_leave_it_out() -> None:
    stuck = [
        harness(1, "prototyper", "vv_render"),
        run(1, lines=0.1, crashed=True),
        crash("SEGV", "vv_render"),
        verdict(),
        harness(2, "enhancer.fix", "return early on an empty input"),
        run(2, lines=0.1, crashed=True),
        crash("SEGV", "vv_render"),
        verdict(),
    ]
    render_decl = "int vv_render(const uint8_t *data, size_t size);"
    items = actionable_items(render_decl, [*stuck, stop(GAVE_UP, gave_up=True)], "")
    assert [(i["action"], i["failure"]) for i in items] == [
        ("avoid_call(vv_render)", "sanitizer:SEGV@vv_render")]
    assert actionable_items(render_decl, [*stuck, stop("iteration budget 1 used")], "") == []


def test_the_offline_extractor_returns_it_from_the_failure_prompt() -> None:
    failed = trajectory(BY["vv_check"], DROPPED, first_draft("vv_check"), runs=True)
    system, user = render(*build_extraction_prompt("failure", [failed]))
    payload, _ = distil(read_prompt(system, user))
    items = parse_memory_items(json.dumps(payload))
    assert any(i.action == "avoid_call(function=vv_render)" for i in items)
    assert "avoid_call(F)" in user  # a real model is told the same vocabulary


def test_it_fits_the_other_targets_of_a_library_that_has_the_call() -> None:
    lesson = shown().lesson
    assert lesson_fits(lesson, BY["vv_parse"], api=API)
    assert not lesson_fits(lesson, BY["vv_render"], api=API)  # the target itself cannot be left out
    other = parse_prototypes("int ww_parse(const uint8_t *data, size_t size);")
    assert not lesson_fits(lesson, other[0], api=other)  # a library without the call


def test_the_next_improvement_leaves_the_call_out_and_only_then_the_lesson_counts_as_used() -> None:
    without, code_without = improve_reply("vv_parse", "")
    assert "vv_render" in without["added_calls"] and "vv_render(" in code_without
    with_lesson, code = improve_reply("vv_parse", render_experience([shown()]))
    assert "vv_render" not in with_lesson["added_calls"] and "vv_render(" not in code
    assert with_lesson["added_calls"]  # the improvement still adds the other calls
    note = [d for d in with_lesson["directions"] if d.startswith("applied [MEM-0000a5a5]")]
    assert note == ["applied [MEM-0000a5a5] avoid_call(vv_render): did not add vv_render, "
                    "which crashed another harness of this library"]
    cited = ["MEM-0000a5a5"]
    assert used_items([shown()], cited, BY["vv_parse"], code, API) == ["MEM-0000a5a5"]
    # absent but not left out on purpose (not cited), or present: not used
    assert used_items([shown()], [], BY["vv_parse"], code, API) == []
    assert used_items([shown()], cited, BY["vv_parse"], code_without, API) == []


def test_a_lesson_about_a_call_the_improver_would_not_add_changes_nothing() -> None:
    item = shown("avoid_call(function=vv_scan)")
    without, code_without = improve_reply("vv_parse", "")
    reply, code = improve_reply("vv_parse", render_experience([item]))
    assert code == code_without and not any(d.startswith("applied [") for d in reply["directions"])


def test_a_leak_repair_releases_what_the_triages_entry_function_handed_back() -> None:
    """A deep leak stack's signature keeps three library frames, none of them the harness's: the
    triage's entry function says which call allocated, not the target."""
    api = parse_prototypes("int uu_check(const struct uu_img *img);\n"
                           "struct uu_img *uu_load(const uint8_t *data, size_t size);\n"
                           "void uu_free(struct uu_img *img);")
    harness = ("#include \"uu.h\"\nint LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {\n"
               "  struct uu_img *img = NULL;\n  int rc = 0;\n  img = uu_load(data, size);\n"
               "  rc = uu_check(img);\n  (void)rc;\n  return 0;\n}\n")
    state = {"target": api[0].to_dict(), "api": [f.to_dict() for f in api], "headers": ["uu.h"],
             "analysis": {"archetype": "object_lifecycle"}, "harness_code": harness, "session_memory": {}}
    problem = "the harness crashes by misusing the API (not a library bug)"

    def repair(entry: str) -> str:
        triage = (report_text({"kind": "leak", "signature": "leak@uu_alloc<uu_grow<uu_read_rows",
                               "entry_function": entry}) + "\nroot_cause: leak\nverdict: harness_misuse")
        values = Enhancer.fix_variables(state, (), problem, "", triage, "", "(none)")
        _payload, code = enhance(read_prompt(*render("enhancer_fix", values)))
        assert code is not None
        return code

    fixed = repair("uu_load")
    assert "if (img != NULL) { uu_free(img); img = NULL; }\n  return 0;" in fixed
    assert "uu_free(img)" not in repair("")  # without it: the target's results (it has none)


DOCS = parse_prototypes("""
typedef struct ww_doc ww_doc;
ww_doc *ww_doc_parse(const char *text, size_t len);
ww_doc *ww_doc_load(const char *text, size_t len);
void ww_doc_free(ww_doc *doc);
int ww_doc_count(const ww_doc *doc);
""")


def draft_reply(experience: str, target_index: int = 3) -> tuple[dict[str, Any], str]:
    from agents.offline.roles import prototype
    from agents.prototyper import Prototyper

    target = DOCS[target_index]
    state = {"target": target.to_dict(), "api": [f.to_dict() for f in DOCS], "headers": ["ww.h"],
             "analysis": {"archetype": "object_lifecycle"}, "session_memory": {}}
    values = Prototyper.variables(state, (), "object_lifecycle", "d", default_skeleton("object_lifecycle"),
                                  "p", experience)
    payload, code = prototype(read_prompt(*render("prototyper", values)))
    assert code is not None
    return payload, code


def test_the_first_draft_builds_its_object_without_a_constructor_that_crashed_elsewhere() -> None:
    without, code_without = draft_reply("")
    assert without["functions_called"] == ["ww_doc_parse", "ww_doc_count"]
    item = InjectItem("MEM-0000b6b6", "rec-1", "Calling ww_doc_parse crashed (heap-buffer-overflow)",
                      "Harnesses that could add ww_doc_parse.", "Do not add ww_doc_parse.", 0.9, 1, 0.6, True,
                      "project ww", {"scope": {"name": "ww_doc_parse"},
                                     "action": "avoid_call(function=ww_doc_parse)",
                                     "failure": "sanitizer:heap-buffer-overflow@ww_doc_parse"})
    with_lesson, code = draft_reply(render_experience([item]))
    assert with_lesson["functions_called"] == ["ww_doc_load", "ww_doc_count"]
    assert "ww_doc_parse(" not in code and "ww_doc_count(" in code
    assert [n for n in with_lesson["notes"] if n.startswith("applied [MEM-0000b6b6]")] == [
        "applied [MEM-0000b6b6] avoid_call(ww_doc_parse): did not call ww_doc_parse, "
        "which crashed another harness of this library"]
    assert used_items([item], ["MEM-0000b6b6"], DOCS[3], code, DOCS) == ["MEM-0000b6b6"]
    assert used_items([item], ["MEM-0000b6b6"], DOCS[3], code_without, DOCS) == []


def test_a_follow_up_the_repair_left_out_teaches_the_next_first_draft_to_leave_it_out() -> None:
    """A type-specific accessor called as a follow-up asserted on another target's object; the
    repair left it out. Every harness of the library adds the same follow-ups on its objects, so
    the next target's first draft leaves it out from the start (one fix round each, before)."""
    left_out = [
        harness(1, "prototyper", "ww_doc_load", "ww_doc_count"),
        run(1, lines=7.9, crashed=True),
        crash("deadly-signal", "ww_doc_count"),
        verdict(),
        harness(2, "enhancer.fix", "left out the follow-up call to ww_doc_count, which crashed "
                "after the target with arguments the harness picked",
                rules=(Rule(kind="avoid", name="ww_doc_count"),)),
        run(2, hits=12, lines=7.5),
        stop("iteration budget 1 used"),
    ]
    items = actionable_items("int ww_doc_load(const char *text, struct ww_doc **out);", left_out, "")
    assert [(i["action"], i["failure"], i["scope"]) for i in items] == [
        ("avoid_call(ww_doc_count)", "sanitizer:deadly-signal@ww_doc_count", {"name": "ww_doc_count"})]


def test_the_first_draft_leaves_out_a_follow_up_that_crashed_elsewhere() -> None:
    item = InjectItem("MEM-0000c0c0", "rec-2", "Calling ww_doc_count crashed (deadly-signal)",
                      "Harnesses that could add ww_doc_count.", "Do not add ww_doc_count.", 0.9, 1, 0.6, True,
                      "project ww", {"scope": {"name": "ww_doc_count"},
                                     "action": "avoid_call(function=ww_doc_count)",
                                     "failure": "sanitizer:deadly-signal@ww_doc_count"})
    without, _code = draft_reply("", target_index=0)
    assert without["functions_called"] == ["ww_doc_parse", "ww_doc_count"]  # a follow-up on its result
    with_lesson, code = draft_reply(render_experience([item]), target_index=0)
    assert "ww_doc_count(" not in code and with_lesson["functions_called"] == ["ww_doc_parse"]
    assert any(n.startswith("applied [MEM-0000c0c0] avoid_call(ww_doc_count)") for n in with_lesson["notes"])


def test_a_dropped_block_teaches_like_a_dropped_improvement_and_the_rest_carries_on() -> None:
    """A crash inside one of an improvement's blocks drops that block: the trajectory says so, and
    each call that crashed and was dropped, in this version or in the one with the others, is a lesson."""
    events = [
        {"type": "harness.written", "data": {
            "version": 2, "by": "enhancer.improve", "added_calls": ["vv_render", "vv_check"],
            "directions": ["call vv_render on the input", "call vv_check on the input"]}},
        {"type": "build.done", "data": {"version": 2, "ok": True}},
        {"type": "execution.done", "data": {"version": 2, "crashed": True, "lines": {"percent": 3.0}}},
        {"type": "crash.triaged", "data": {"kind": "leak", "location": "library", "entry": "vv_render"}},
        {"type": "crash.verdict", "data": {"feasible": False, "verdict": "harness_misuse"}},
        {"type": "improvement.block_dropped", "data": {"version": 2, "next_version": 3,
                                                       "direction": "call vv_render on the input"}},
        {"type": "build.done", "data": {"version": 3, "ok": True}},
        {"type": "execution.done", "data": {"version": 3, "crashed": True, "lines": {"percent": 3.0}}},
        {"type": "crash.triaged", "data": {"kind": "SEGV", "location": "library", "entry": "vv_check"}},
        {"type": "crash.verdict", "data": {"feasible": False, "verdict": "harness_misuse"}},
        {"type": "iteration.reverted", "data": {"version": 3, "reason": "did not run cleanly"}},
    ]
    steps = [step for e in events if (step := _event_step(e, None))]  # type: ignore[arg-type]
    assert "- [revert] v2 did not run cleanly: dropped its block 'call vv_render on the input' " \
           "(v3 has the others)" in map(step_line, steps)
    items = actionable_items("int vv_scan(const uint8_t *data, size_t size);", steps, "")
    assert [i["action"] for i in items] == ["avoid_call(vv_render)", "avoid_call(vv_check)"]


def test_a_failed_direction_teaches_when_the_trajectory_left_its_steps_out() -> None:
    """A long trajectory keeps its beginning and end: the dropped block's steps were among the
    omitted ones, and only the local memory's direction line at the end still named the call."""
    steps = [
        harness(1, "prototyper", "vv_scan"),
        direction("Success", "call vv_check on the input", "line coverage 2.0% -> 3.0%"),
        direction("Failed", "call vv_render on a new vv_frame", "crashed the harness (harness misuse)",
                  misuse_crash=True, calls=("vv_render", "vv_frame_new")),
        direction("Failed", "call vv_probe on the input", "did not compile after fix rounds"),
        stop("iteration budget 3 used"),
    ]
    items = actionable_items("int vv_scan(const uint8_t *data, size_t size);", steps, "")
    assert [(i["action"], i["failure"]) for i in items] == [
        ("avoid_call(vv_render)", "sanitizer:crash@vv_render")]


def test_a_leak_through_a_constructor_teaches_no_avoidance() -> None:
    # What `vv_item_new` made was not released (another call kept a reference to it): leaving the
    # constructor out would make the next harness build its object some worse way.
    leak = [
        harness(2, "enhancer.improve", "call vv_add on a new vv_item", added=("vv_item_new", "vv_add")),
        build(2),
        run(2, lines=14.0, crashed=True),
        crash("leak", "vv_item_new"),
        verdict(),
        reverted(2),
    ]
    assert actionable_items("int vv_scan(const uint8_t *data, size_t size);", leak, "") == []
    crashed = [crash("SEGV", "vv_item_new") if isinstance(s, CrashStep) else s for s in leak]
    assert [i["action"] for i in actionable_items("int vv_scan(const uint8_t *data, size_t size);",
                                                   crashed, "")] == ["avoid_call(vv_item_new)"]


HELPER_API = parse_prototypes("""
int hh_parse(const uint8_t *data, size_t size);
struct hh_ctx *hh_ctx_new(int flags);
void hh_ctx_free(struct hh_ctx *ctx);
int hh_ctx_count(struct hh_ctx *ctx);
int hh_check(const uint8_t *data, size_t size);
""")


def test_an_avoided_call_is_not_used_as_a_helper_of_another_direction_either() -> None:
    # `hh_ctx_new` crashed elsewhere; the improver reaches it while making a context for
    # `hh_ctx_count`: the lesson must leave it out there too, not give up and keep it
    by = {f.name: f for f in HELPER_API}

    def reply(experience: str) -> tuple[dict[str, Any], str]:
        draft = write_harness(by["hh_parse"], HELPER_API, ["hh.h"], "stateless_parser",
                              default_skeleton("stateless_parser")).code
        state = {"target": by["hh_parse"].to_dict(), "api": [f.to_dict() for f in HELPER_API],
                 "headers": ["hh.h"], "analysis": {"archetype": "stateless_parser"}, "harness_code": draft,
                 "session_memory": {}, "run": {"coverage": {"lines": {"percent": 10.0}}}}
        uncovered = "\n".join(f"- {by[n].prototype()}" for n in ("hh_ctx_count", "hh_check"))
        values = Enhancer.improve_variables(state, (), uncovered, "(none)", experience)
        payload, code = enhance(read_prompt(*render("enhancer_improve", values)))
        assert code is not None
        return payload, code

    without, code_without = reply("")
    assert "hh_ctx_new(" in code_without
    item = InjectItem("MEM-0000c0c0", "rec-1", "Calling hh_ctx_new crashed (SEGV)",
                      "Harnesses that could add it.", "Do not add hh_ctx_new.", 0.9, 1, 0.6, True,
                      "project hh",
                      {"scope": {"name": "hh_ctx_new"}, "action": "avoid_call(function=hh_ctx_new)",
                       "failure": "sanitizer:SEGV@hh_ctx_new"})
    with_lesson, code = reply(render_experience([item]))
    assert "hh_ctx_new(" not in code and "hh_check(" in code, code
    assert any(d.startswith("applied [MEM-0000c0c0]") for d in with_lesson["directions"])


def test_a_leak_through_a_call_also_leaves_out_the_library_function_that_allocated_it() -> None:
    """``vv_render`` leaked a block ``vv_store`` allocated (a public function a harness could call
    itself, and leak the same way): the lesson leaves out both, the allocator first."""
    leaked_crash = {"type": "crash.triaged", "data": {
        "kind": "leak", "location": "library", "entry": "vv_render",
        "signature": "leak@vv_store<vv_render<LLVMFuzzerTestOneInput"}}
    step = _event_step(leaked_crash, None)  # type: ignore[arg-type]
    assert step is not None and step.line() == "leak at library through vv_render (allocated in vv_store)"
    leaked = [step if isinstance(s, CrashStep) else s for s in DROPPED]
    items = actionable_items("int vv_scan(const uint8_t *data, size_t size);", leaked, "")
    assert [i["action"] for i in items] == ["avoid_call(vv_store)", "avoid_call(vv_render)"]
    # allocated right in the call the harness made: one lesson
    direct = {"type": "crash.triaged", "data": {"kind": "leak", "location": "library", "entry": "vv_render",
                                                "signature": "leak@vv_render<LLVMFuzzerTestOneInput"}}
    assert step_line(_event_step(direct, None)) == "- [crash] leak at library through vv_render"  # type: ignore[arg-type]
