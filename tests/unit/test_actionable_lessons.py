"""Actionable lessons: extraction of scope/failure/action, scope matching, application, "used"."""

from __future__ import annotations

import json
from typing import Any

from agents.offline.cdecl import parse_prototypes
from agents.offline.experience import distil
from agents.offline.lesson_apply import ActionableLesson, actionable_lessons, apply_lessons
from agents.offline.lesson_extract import actionable_items
from agents.offline.prompt_reader import read_prompt
from agents.offline.synth import default_skeleton, write_harness
from agents.offline.type_table import read_types, using
from fuzzkit.guidance_facts import Rule
from long_term_memory.experience import parse_memory_items
from long_term_memory.experience.inject import render_experience
from long_term_memory.experience.lesson_effects import effect_present, used_items
from long_term_memory.experience.lessons import (
    callees_in,
    lesson_fits,
    parse_action,
    parse_scope,
    scope_matches,
)
from long_term_memory.experience.matches import InjectItem
from long_term_memory.experience.models import MemoryItem
from prompts import render
from tests.trajectories import (
    analysis,
    build,
    extraction_prompt,
    final_crash,
    harness,
    run,
    stop,
    trajectory,
    verdict,
)
from tests.types_text import render_types

API = parse_prototypes("""
int qq_parse(const uint8_t *data, size_t size, struct qq_doc **out);
int qq_parse_ext(const uint8_t *data, size_t size, int flags, struct qq_doc **out);
int qq_count(const struct qq_doc *doc);
void qq_finish(struct qq_doc *doc);
int zz_sum(const uint8_t *data, size_t size);
""")
BY = {f.name: f for f in API}
RELEASE = "release_out_param(type=qq_doc, releaser=qq_finish)"
HARNESS = """#include "qq.h"
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct qq_doc *out_v = NULL;
  qq_parse(data, size, &out_v);
  if (out_v != NULL) { qq_finish(out_v); out_v = NULL; }
  return 0;
}
"""
TRAJECTORY = [
    analysis("stateless_parser"),
    harness(1, "prototyper", "qq_parse"),
    build(1),
    run(1, lines=12.0, crashed=True),
    final_crash("leak", "Direct leak of 64 byte(s) in 1 object(s) allocated from qq_parse"),
    verdict(feasible=False),
    harness(2, "enhancer.fix", "release out_v (from qq_parse) with qq_finish before returning",
            rules=(Rule(kind="release_result", name="qq_finish", producer="qq_parse", var="out_v"),)),
    build(2),
    run(2, hits=900, lines=31.0),
    stop("iteration budget"),
]


def lesson(action: str = RELEASE, scope: str = "name=qq_* shape=out_param type=qq_doc") -> ActionableLesson:
    return ActionableLesson("MEM-0000abcd", "Release qq_doc results", parse_scope(scope),
                            parse_action(action))


def first_draft(name: str) -> str:
    skeleton = default_skeleton("stateless_parser")
    return write_harness(BY[name], API, ["qq.h"], "stateless_parser", skeleton).code


def extraction_reply(success: bool, **outcome: Any) -> list[MemoryItem]:
    t = trajectory(BY["qq_parse"], TRAJECTORY, HARNESS, success, "stateless_parser", **outcome)
    payload, _ = distil(extraction_prompt(t))
    return parse_memory_items(json.dumps(payload))


def test_success_trajectory_with_a_leak_repair_yields_a_structured_item() -> None:
    items = extraction_reply(True, lines_percent=31.0)
    actionable = [i for i in items if i.action]
    assert len(actionable) == 1 and 1 <= len(items) <= 3
    item = actionable[0]
    assert item.action == RELEASE
    assert item.scope is not None and item.scope.render() == "shape=out_param type=qq_doc"
    assert item.failure == "sanitizer:leak@qq_parse"
    assert "qq_finish(out_v)" in item.content and "LeakSanitizer" in item.content


def test_failure_trajectory_keeps_the_pitfall_first_and_adds_the_action() -> None:
    items = extraction_reply(False, runs=True, crashed=True)
    assert items[0].title.startswith("Harness misuse crash with qq_parse")
    assert [i.action for i in items if i.action] == [RELEASE]


def test_parsing_keeps_structured_fields_and_drops_unknown_actions() -> None:
    reply = ('```json\n{"memory_items": [{"title": "t", "description": "d", "content": "release it", '
             '"scope": "name=qq_* type=qq_doc", "failure_signature": "sanitizer:leak@qq_parse", '
             '"action": "release_out_param(qq_doc, qq_finish)"}, {"title": "u", "description": "d", '
             '"content": "something else", "action": "system(rm)"}]}\n```')
    first, second = parse_memory_items(reply)
    assert (first.action, first.failure, first.scope.name) == (RELEASE, "sanitizer:leak@qq_parse", "qq_*")
    assert second.action == "" and second.content == "something else"
    old = MemoryItem.model_validate({"title": "t", "description": "d", "content": "c"})  # a stored record
    assert old.lesson() == {}


def test_scope_matching_by_name_shape_and_type() -> None:
    scope = parse_scope("name=qq_* shape=out_param type=qq_doc")
    assert scope_matches(scope, BY["qq_parse"]) and scope_matches(scope, BY["qq_parse_ext"])
    assert not scope_matches(scope, BY["qq_count"])  # no `qq_doc **` out-parameter
    assert not scope_matches(scope, BY["zz_sum"])
    assert scope_matches(parse_scope("type=qq_doc"), BY["qq_count"])
    assert not scope_matches(parse_scope(""), BY["qq_parse"])  # an empty scope fits nothing
    # With a shape, the type is the one in that shape: a returned `uint8_t *` lesson does not
    # fit a function that reads a `const uint8_t *` and returns another pointer.
    returned = parse_scope("name=rr_* shape=returns_pointer type=uint8_t")
    reader, decoder = parse_prototypes("uint8_t *rr_pixels(const uint8_t *d, size_t n);\n"
                                       "rr_dec *rr_open(const uint8_t *d, size_t n);")
    assert scope_matches(returned, reader) and not scope_matches(returned, decoder)


def test_release_lesson_changes_the_first_draft_of_a_matching_target_only() -> None:
    draft = first_draft("qq_parse_ext")
    assert "qq_finish(" not in draft  # the draft alone leaks what qq_parse_ext hands back
    code, notes = apply_lessons(draft, BY["qq_parse_ext"], API, [lesson()])
    assert "qq_finish(" in code and notes == [f"applied [MEM-0000abcd] {RELEASE}: release out_v "
                                              "(from qq_parse_ext) with qq_finish before returning"]
    other = first_draft("zz_sum")
    assert apply_lessons(other, BY["zz_sum"], API, [lesson()]) == (other, [])


OTHER_API = parse_prototypes("""
uint8_t *ww_decode(const uint8_t *data, size_t size, int *width);
void ww_free(void *ptr);
""")


def test_a_release_lesson_from_another_library_uses_this_librarys_releaser() -> None:
    target = OTHER_API[0]
    skeleton = default_skeleton("stateless_parser")
    draft = write_harness(target, OTHER_API, ["ww.h"], "stateless_parser", skeleton).code
    assert "ww_free(" not in draft  # the draft alone leaks the returned buffer
    learned_elsewhere = lesson("release_out_param(type=uint8_t, releaser=vv_drop)",
                               scope="shape=returns_pointer type=uint8_t")
    assert learned_elsewhere.fits(target)
    code, notes = apply_lessons(draft, target, OTHER_API, [learned_elsewhere])
    assert "vv_drop(" not in code and "ww_free(result)" in code
    assert notes == ["applied [MEM-0000abcd] release_out_param(type=uint8_t, releaser=vv_drop): release "
                     "result (from ww_decode) with ww_free before returning "
                     "(this library's releaser for uint8_t)"]
    assert effect_present(learned_elsewhere.action, code, target)
    assert not effect_present(learned_elsewhere.action, draft, target)
    assert apply_lessons(code, target, OTHER_API, [learned_elsewhere]) == (code, [])  # once only


def test_offline_prototyper_reads_the_action_from_the_rendered_prompt() -> None:
    item = InjectItem("MEM-0000abcd", "rec-1", "Release qq_doc results", "qq_* out-parameters",
                      "Release what qq_parse hands back with qq_finish.", 0.9, 1, 0.6, True,
                      "project qq; target int qq_parse(...)",
                      {"scope": {"name": "qq_*", "shape": "out_param", "type": "qq_doc"}, "action": RELEASE})
    section = render_experience([item])
    assert f"- Action: {RELEASE}" in section and "- Scope: name=qq_* shape=out_param type=qq_doc" in section
    facts = read_prompt("ROLE: prototyper", section)
    assert actionable_lessons(facts) == [lesson()]


def test_used_means_the_change_is_in_the_measured_harness() -> None:
    shown = [InjectItem("MEM-0000abcd", "r", "t", "d", "c", 0.9, 1, 0.6, True, "q",
                        {"scope": {"name": "qq_*", "shape": "out_param"}, "action": RELEASE}),
             InjectItem("MEM-0000beef", "r", "t", "d", "c", 0.8, 1, 0.6, True, "q")]
    cited = ["MEM-0000beef"]
    assert used_items(shown, cited, BY["qq_parse"], HARNESS) == ["MEM-0000abcd", "MEM-0000beef"]
    leaky = HARNESS.replace("if (out_v != NULL) { qq_finish(out_v); out_v = NULL; }\n", "")
    assert used_items(shown, ["MEM-0000abcd"], BY["qq_parse"], leaky) == []  # citing is not using
    assert used_items(shown, [], BY["zz_sum"], HARNESS) == []  # scope does not fit that target
    assert effect_present(parse_action("keep_struct_tag(qq_doc)"), HARNESS)
    assert not effect_present(parse_action("feed_input_via(qq_feed)"), HARNESS)


def test_a_release_lesson_reaches_the_family_calls_an_improvement_added() -> None:
    """An improvement adds `rr_b` in its own block: the release goes right after that call (a
    release at cleanup would name a variable out of scope); a call outside the scope is left."""
    api = parse_prototypes("rr_img *rr_a(const uint8_t *d, size_t n);\n"
                           "rr_img *rr_b(const uint8_t *d, size_t n);\nvoid rr_drop(rr_img *img);\n"
                           "char *zz_other(const uint8_t *d, size_t n);")
    code = ("int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {\n"
            "  rr_img *result = NULL;\n  result = rr_a(data, size);\n"
            "  {\n    rr_img *result2 = NULL;\n    result2 = rr_b(data, size);\n  }\n"
            "  {\n    char *result3 = NULL;\n    result3 = zz_other(data, size);\n  }\n"
            "  if (result != NULL) { rr_drop(result); result = NULL; }\n  return 0;\n}\n")
    rr = ActionableLesson("MEM-0000beef", "Release rr_img results",
                          parse_scope("name=rr_* shape=returns_pointer type=rr_img"),
                          parse_action("release_out_param(type=rr_img, releaser=rr_drop)"))
    out, notes = apply_lessons(code, api[0], api, [rr])
    released = "if (result2 != NULL) { rr_drop(result2); result2 = NULL; }"
    assert f"    result2 = rr_b(data, size);\n    {released}\n  }}" in out
    assert out.count("rr_drop(result)") == 1  # the target's own release is not doubled
    assert "result3)" not in out.replace("zz_other(data, size)", "")
    assert notes == ["applied [MEM-0000beef] release_out_param(type=rr_img, releaser=rr_drop): "
                     "release result2 (from rr_b) with rr_drop after the call"]
    assert apply_lessons(out, api[0], api, [rr]) == (out, [])  # applied once


def test_a_long_skeleton_comment_does_not_hide_the_declaration_a_lesson_needs() -> None:
    """The extraction prompt's harness excerpt is cut; a skeleton's doc comment used to fill it,
    so the declaration of the released variable was gone and no actionable item came out."""
    from long_term_memory.experience.extraction import HARNESS_CHARS, build_extraction_prompt
    from long_term_memory.experience.trajectory import Trajectory
    from tests.unit.test_experience_support import outcome

    doc = "/*\n" + " * how to write this harness, at length\n" * (HARNESS_CHARS // 30) + " */\n"
    prototype = "int qq_parse(const uint8_t *data, size_t size, struct qq_doc **out)"
    failed = Trajectory("qq/qq_parse", f"project qq; target {prototype}", outcome("qq/qq_parse", runs=False),
                        False, TRAJECTORY, doc + HARNESS, prototype, "qq_parse")
    _, variables = build_extraction_prompt("failure", [failed])
    assert "struct qq_doc *out_v = NULL;" in variables["harness"] and "at length" not in variables["harness"]
    payload, _ = distil(read_prompt(*render("experience_failure", variables)))
    assert [i.action for i in parse_memory_items(json.dumps(payload)) if i.action] == [RELEASE]


def test_an_opaque_type_repair_becomes_a_lesson_the_next_first_draft_applies() -> None:
    """The fixer turned `ww_ctx v;` (incomplete type) into a pointer; the next target of the
    family gets the same change in its first draft, with the fixer's own repair."""
    steps = [build(1, "variable has incomplete type 'ww_ctx'"),
             harness(2, "enhancer.fix", "declare arg0 as ww_ctx * (ww_ctx is opaque; no constructor found)",
                     "use arg0 as the pointer it now is", rules=(Rule(kind="opaque", name="ww_ctx"),))]
    (item,) = actionable_items("int ww_run(const uint8_t *d, size_t n);", steps, "")
    assert (item["scope"], item["failure"], item["action"]) == (
        {"name": "ww_*"}, "compile:incomplete-type", "hold_by_pointer(ww_ctx)")
    api = parse_prototypes("ww_tool *ww_tool_new(ww_ctx *ctx);\nint ww_scan(const uint8_t *d, size_t n);")
    draft = ("int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {\n  ww_ctx arg0;\n"
             "  memset(&arg0, 0, sizeof arg0);\n  ww_tool *t = ww_tool_new(&arg0);\n"
             "  ww_scan(data, size);\n  return 0;\n}\n")
    lesson = ActionableLesson("MEM-0000c0de", item["title"], parse_scope(item["scope"]),
                              parse_action(item["action"]))
    fixed, notes = apply_lessons(draft, api[1], api, [lesson])
    assert "ww_ctx *arg0 = NULL;" in fixed and "ww_tool_new(arg0)" in fixed and "memset" not in fixed
    assert notes[0].startswith("applied [MEM-0000c0de] hold_by_pointer(type=ww_ctx)")
    assert effect_present(lesson.action, fixed) and not effect_present(lesson.action, draft)
    assert apply_lessons(fixed, api[1], api, [lesson]) == (fixed, [])


def test_a_buffer_left_in_a_field_of_a_record_becomes_a_release_lesson_for_that_record() -> None:
    code = """int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct qq_config cfg;
  qq_config_init(&cfg);
  qq_decode(data, size, &cfg);
  qq_buffer_free(&cfg.output);
  return 0;
}
"""
    steps = [final_crash("leak", "Direct leak of 64 byte(s) allocated from qq_decode"),
             harness(2, "enhancer.fix",
                     "release cfg.output (filled by qq_decode) with qq_buffer_free before returning",
                     rules=(Rule(kind="release_field", name="qq_buffer_free", producer="qq_decode", var="cfg",
                                 field="output"),))]
    [found] = actionable_items("int qq_decode(const uint8_t *data, size_t size, struct qq_config *config);",
                               steps, code)
    assert found["scope"] == {"shape": "object_param", "type": "qq_config"}
    assert found["action"] == "release_out_param(type=qq_config, releaser=qq_buffer_free)"
    assert found["failure"] == "sanitizer:leak@qq_decode"
    target = parse_prototypes("int qq_decode2(const uint8_t *d, size_t n, struct qq_config *c);")[0]
    assert scope_matches(parse_scope(found["scope"]), target)
    assert effect_present(parse_action(found["action"]), code, target)
    assert not effect_present(parse_action(found["action"]), code.replace("qq_buffer_free", "noop"), target)


ACME = parse_prototypes("""
int acme_init_config(acme_config *config);
int acme_decode(const uint8_t *data, size_t size, acme_config *config);
acme_idec *acme_idecode(const uint8_t *data, size_t size, acme_config *config);
int acme_idec_area(const acme_idec *idec, int *width);
void acme_idec_delete(acme_idec *idec);
void acme_free_buffer(acme_buffer *buffer);
""")
ACME_TYPES = render_types(
    "```c\ntypedef struct acme_config acme_config;\ntypedef struct acme_buffer acme_buffer;\n"
    "typedef struct acme_idec acme_idec;\nstruct acme_buffer { uint8_t *rgba; size_t size; };\n"
    "struct acme_config { int flags; acme_buffer output; };\n```\nRelease functions:\n"
    "- acme_free_buffer releases acme_buffer * (parameter type)\n")


def test_a_field_release_lesson_fits_a_harness_that_calls_its_family_and_reaches_the_added_call() -> None:
    target = ACME[3]  # acme_idec_area: its own signature takes no acme_config
    improved = """int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  acme_config config;
  acme_init_config(&config);
  acme_idec *idec = acme_idecode(data, size, &config);
  int width = 0;
  acme_idec_area(idec, &width);
  {
    acme_decode(data, size, &config);
  }
  if (idec != NULL) acme_idec_delete(idec);
  return 0;
}
"""
    stored = {"scope": {"shape": "object_param", "type": "acme_config"},
              "action": "release_out_param(type=acme_config, releaser=acme_free_buffer)"}
    callees = callees_in(improved, ACME, target)
    assert not lesson_fits(stored, target) and lesson_fits(stored, target, callees)
    learned = lesson(stored["action"], scope="shape=object_param type=acme_config")
    with using(read_types(ACME_TYPES)):
        code, notes = apply_lessons(improved, target, ACME, [learned])
    assert "acme_free_buffer(&config.output);\n  return 0;" in code
    assert notes and "release config.output (filled by" in notes[0]
    item = InjectItem("MEM-0000abcd", "rec-1", "t", "d", "c", 0.9, 1, 0.6, True, "q", stored)
    assert used_items([item], [], target, code, ACME) == ["MEM-0000abcd"]
    assert used_items([item], [], target, improved, ACME) == []


def test_feeding_the_input_becomes_a_lesson_only_when_the_fed_harness_ran() -> None:
    """A repair handed the input to a reader as its work buffer, the library wrote into it and
    the next run crashed; learned as "feed the input that way", it was applied to every later
    target of the library, and each crashed the same way."""
    from agents.offline.lesson_extract import actionable_items

    prototype = "int im_read_dir(im_file *f)"
    fed = [harness(1, "prototyper", "im_new", "im_read_dir"), run(1, hits=3, lines=1.0),
           harness(2, "enhancer.fix",
                   "hand the fuzz input to im_read_dir's object with im_set_buffer before the call",
                   rules=(Rule(kind="feed_input", name="im_set_buffer", then="im_read_dir"),)),
           build(2)]
    ran = [*fed, run(2, hits=90, lines=4.0)]
    crashed = [*fed, run(2, lines=1.1, crashed=True), verdict(feasible=False)]
    actions = [i["action"] for i in actionable_items(prototype, ran, "")]
    assert actions == ["feed_input_via(im_set_buffer)"], actions
    assert not [i for i in actionable_items(prototype, crashed, "") if "feed" in i["action"]]


def test_a_feed_lesson_is_not_applied_where_the_input_already_reaches_or_the_call_crashed() -> None:
    """Applied to every later reader of an image library whose first drafts already opened the
    input from a file, the lesson added the work-buffer call that crashed each of them."""
    api = parse_prototypes("im_file *im_open(const char *path, const char *mode);\n"
                           "int im_set_buffer(im_file *f, void *bp, long size);\n"
                           "int im_read_strip(im_file *f, unsigned n, void *buf, long len);\n"
                           "void im_close(im_file *f);\n")
    target = next(f for f in api if f.name == "im_read_strip")
    feed = lesson("feed_input_via(function=im_set_buffer)", "name=im_read* shape=object_param")
    from_file = ("int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {\n"
                 "  char path[512] = {0};\n  im_file *f = NULL;\n  uint8_t buf[64];\n"
                 "  if (lf_tmpfile(data, size, path, sizeof path) < 0) return 0;\n"
                 "  f = im_open(path, \"rb\");\n  if (f == NULL) return 0;\n"
                 "  im_read_strip(f, 0, buf, sizeof buf);\n  im_close(f);\n  return 0;\n}\n")
    assert apply_lessons(from_file, target, api, [feed]) == (from_file, [])
    unfed = from_file.replace("im_open(path,", "im_open(\"/dev/null\",").replace(
        "  if (lf_tmpfile(data, size, path, sizeof path) < 0) return 0;\n", "")
    changed, notes = apply_lessons(unfed, target, api, [feed])
    assert "im_set_buffer(" in changed and notes, changed
    avoid = lesson("avoid_call(function=im_set_buffer)", "name=im_read* shape=object_param")
    assert apply_lessons(unfed, target, api, [avoid, feed]) == (unfed, [])


def test_a_release_lesson_never_releases_a_borrowed_child_an_added_call_returns() -> None:
    """cJSON's quick start: `release_out_param(type=cJSON, releaser=cJSON_Delete)` released the
    child `cJSON_GetArrayItem(array, i)` returns (the array's own), and the array's release then
    freed it again: a heap-use-after-free in four targets of one run."""
    api = parse_prototypes("""
typedef struct jn jn;
jn *jn_parse(const char *text);
jn *jn_get_array_item(const jn *array, int index);
jn *jn_detach_item_from_array(jn *array, int which);
void jn_delete(jn *item);
""")
    improved = """int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  jn *doc = jn_parse((const char *)data);
  if (doc != NULL) {
    jn *child = NULL;
    child = jn_get_array_item(doc, 0);
  }
  if (doc != NULL) {
    jn *item = NULL;
    item = jn_detach_item_from_array(doc, 0);
  }
  if (doc != NULL) jn_delete(doc);
  return 0;
}
"""
    learned = lesson("release_out_param(type=jn, releaser=jn_delete)", scope="type=jn")
    code, _notes = apply_lessons(improved, api[0], api, [learned])
    assert "jn_delete(child)" not in code, code  # borrowed: the array's
    assert "if (item != NULL) { jn_delete(item); item = NULL; }" in code, code  # detached: the caller's
