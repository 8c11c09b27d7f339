"""A leaked result an improvement's block kept and released becomes a lesson for the whole type.

The invented URI library's ``ur_build`` returns a ``ur_char *`` nobody said was the caller's; the
block repair (:mod:`agents.improvement_blocks`) released it after LeakSanitizer said so. The experience
extractor turns that repair into ``release_out_param(type=ur_char, releaser=free)`` scoped to every
function returning a ``ur_char *``; the next target's improvement that adds ``ur_escape`` releases
its result in the same step, instead of finding the same leak again one call at a time.
"""

from __future__ import annotations

import json
from pathlib import Path

from agent_graph.context import Context
from agents.offline.cdecl import parse_prototypes
from agents.offline.lesson_apply import ActionableLesson, apply_lessons
from agents.offline.lesson_extract import actionable_items
from long_term_memory.experience.config import ExperienceConfig
from long_term_memory.experience.extraction import build_extraction_prompt, extraction_kind
from long_term_memory.experience.lesson_effects import used_items
from long_term_memory.experience.lessons import lesson_fits, parse_action, parse_scope
from long_term_memory.experience.matches import InjectItem
from long_term_memory.experience.trajectory import trajectory_from_state
from long_term_memory.experience.trajectory_steps import read_trajectory
from nodes.memory_manager import revert_failed
from tests.unit.test_block_repair import _state

API = parse_prototypes("""
ur_uri *ur_parse(const char *text);
ur_char *ur_build(const ur_char *uri, const ur_char *base);
ur_char *ur_escape(const ur_char *s);
int ur_port(const ur_uri *uri);
void ur_free(ur_uri *uri);
""")
BY = {f.name: f for f in API}


def _learned(tmp_path: Path) -> dict[str, str]:
    """The lesson the extractor makes of a run whose block repair released ``ur_build``'s result."""
    state = _state(tmp_path)
    update = revert_failed(state, Context())  # type: ignore[arg-type]
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    finished = {**state, **update, "target": BY["ur_parse"].to_dict(), "best": state["best"]}
    trajectory = trajectory_from_state(finished, ExperienceConfig(), "run-1", events=events)
    text = build_extraction_prompt(extraction_kind([trajectory]), [trajectory])[1]["trajectory"]
    assert "- [repair] v2 leaked what ur_build returned (ur_char *): v3 releases it with free" in text
    items = actionable_items("ur_uri *ur_parse(const char *text);", read_trajectory(text).steps,
                             update["harness_code"])
    return next(i for i in items if i["action"].startswith("release_out_param"))


def test_a_repaired_leak_becomes_a_release_lesson_for_every_result_of_its_type(tmp_path: Path) -> None:
    item = _learned(tmp_path)
    assert item["action"] == "release_out_param(type=ur_char, releaser=free)"
    assert item["scope"] == {"shape": "returns_pointer", "type": "ur_char"}
    assert item["failure"] == "sanitizer:leak@ur_build"


def test_the_lesson_fits_a_target_whose_library_returns_that_type_before_the_call_is_added(
        tmp_path: Path) -> None:
    item = _learned(tmp_path)
    port = BY["ur_port"]  # returns no ur_char *, and its harness calls nothing that does (yet)
    assert lesson_fits(item, port, [], API)
    assert not lesson_fits(item, port, [], API, could_add=False)
    other = parse_prototypes("int zz_count(const char *s);\nvoid zz_drop(char *s);")
    assert not lesson_fits(item, other[0], [], other)  # no ur_char * in that library
    named = {**item, "action": "release_out_param(type=ur_char, releaser=ur_release)"}
    assert not lesson_fits(named, port, [], API)  # a releaser this library does not have


def test_the_next_improvement_releases_the_added_calls_result_and_that_counts_as_used(
        tmp_path: Path) -> None:
    item = _learned(tmp_path)
    lesson = ActionableLesson("MEM-0000cafe", "Release ur_char * results with free",
                              parse_scope(item["scope"]), parse_action(item["action"]))
    improved = ("int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {\n"
                "  ur_uri *uri = ur_parse(text);\n  int result = ur_port(uri);\n"
                "  /* LF improve: call ur_escape on the input */\n"
                "  {\n    ur_char *result2 = NULL;\n    result2 = ur_escape((const ur_char *)text);\n  }\n"
                "  ur_free(uri);\n  return 0;\n}\n")
    code, notes = apply_lessons(improved, BY["ur_port"], API, [lesson])
    assert "result2 = ur_escape((const ur_char *)text);\n    if (result2 != NULL) { free(result2); " in code
    assert notes and notes[0].startswith("applied [MEM-0000cafe] release_out_param")
    shown = InjectItem("MEM-0000cafe", "rec-1", "t", "d", "c", 0.9, 1, 0.6, True, "q", item)
    assert used_items([shown], [], BY["ur_port"], code, API) == ["MEM-0000cafe"]
    # Shown but not applied: `free` called for something else is not this lesson's change.
    other_free = improved.replace("  ur_free(uri);", "  free(buffer);\n  ur_free(uri);")
    assert used_items([shown], [], BY["ur_port"], other_free, API) == []
