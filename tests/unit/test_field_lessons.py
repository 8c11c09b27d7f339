"""A field release a repair found becomes a lesson the next target's improvement applies.

The invented document parser of ``test_field_repair``: ``dp_parse_all(dp_parser_ptr)`` leaves the
``dp_doc`` it made in the parser's ``doc`` field, and the field repair released it after the call.
The experience extractor turns that repair into ``release_field(function=dp_parse_all,
holder=dp_parser_ptr, field=doc, releaser=dp_doc_free)``; the next target's improvement that
calls ``dp_parse_entity`` (the same signature) on a new parser gets the release in the same
step, instead of finding the same leak again, and the measured harness shows it (used).
"""

from __future__ import annotations

import json
from pathlib import Path

from agent_graph.context import Context
from agents.offline.lesson_apply import ActionableLesson, apply_lessons
from agents.offline.lesson_extract import actionable_items
from agents.offline.type_table import read_types, using
from long_term_memory.experience.config import ExperienceConfig
from long_term_memory.experience.extraction import build_extraction_prompt, extraction_kind
from long_term_memory.experience.lesson_effects import used_items
from long_term_memory.experience.lessons import lesson_fits, parse_action, parse_scope
from long_term_memory.experience.matches import InjectItem
from long_term_memory.experience.trajectory import trajectory_from_state
from long_term_memory.experience.trajectory_steps import read_trajectory
from nodes.memory_manager import revert_failed
from tests.types_text import render_types
from tests.unit.test_field_repair import API, HARNESS, _state

BY = {f.name: f for f in API}
TYPES = """```c
typedef struct _dp_parser dp_parser;
typedef dp_parser *dp_parser_ptr;
typedef struct _dp_doc *dp_doc_ptr;
```
"""
ACTION = "release_field(function=dp_parse_all, holder=dp_parser_ptr, field=doc, releaser=dp_doc_free)"


def _learned(tmp_path: Path) -> dict[str, str]:
    state = _state(tmp_path)
    update = revert_failed(state, Context())  # type: ignore[arg-type]
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    finished = {**state, **update, "target": API[0].to_dict(), "best": state["best"]}
    trajectory = trajectory_from_state(finished, ExperienceConfig(), "run-1", events=events)
    text = build_extraction_prompt(extraction_kind([trajectory]), [trajectory])[1]["trajectory"]
    assert ("- [repair] v2 leaked what dp_new_doc made in the doc field of dp_parse_all's dp_parser_ptr: "
            "v3 releases it with dp_doc_free after the call") in text
    items = actionable_items("dp_parser_ptr dp_parser_new(const uint8_t *data, size_t size);",
                             read_trajectory(text).steps, update["harness_code"])
    return next(i for i in items if i["action"].startswith("release_field"))


def test_a_field_repair_becomes_a_release_field_lesson(tmp_path: Path) -> None:
    item = _learned(tmp_path)
    assert item["action"] == ACTION
    assert item["scope"] == {"name": "dp_parse_all", "type": "dp_parser_ptr"}
    assert item["failure"] == "sanitizer:leak@dp_new_doc"
    assert lesson_fits(item, BY["dp_parser_new"], [], API)
    assert not lesson_fits(item, BY["dp_parser_new"], [], [f for f in API if f.name != "dp_parse_all"])


def test_the_next_improvement_calling_a_twin_releases_the_field_and_that_counts_as_used(
        tmp_path: Path) -> None:
    item = _learned(tmp_path)
    lesson = ActionableLesson("MEM-0000f1e1", "Release the doc field", parse_scope(item["scope"]),
                              parse_action(item["action"]))
    improved = HARNESS.replace("call dp_parse_all", "call dp_parse_entity").replace(
        "(void)dp_parse_all(", "(void)dp_parse_entity(")
    with using(read_types(render_types(TYPES))):  # the prompt's Types section: dp_parser_ptr is a pointer
        code, notes = apply_lessons(improved, BY["dp_parser_new"], API, [lesson])
    assert ("    (void)dp_parse_entity((dp_parser_ptr)parser2);\n"
            "    if (parser2 != NULL && parser2->doc != NULL) "
            "{ dp_doc_free(parser2->doc); parser2->doc = NULL; }") in code
    assert notes == [f"applied [MEM-0000f1e1] {ACTION}: release parser2->doc with dp_doc_free after the call"]
    with using(read_types(render_types(TYPES))):
        assert apply_lessons(code, BY["dp_parser_new"], API, [lesson]) == (code, [])  # once
        own, _ = apply_lessons(improved, BY["dp_parse_entity"], API, [lesson])
    shown = InjectItem("MEM-0000f1e1", "rec-1", "t", "d", "c", 0.9, 1, 0.6, True, "q", item)
    assert used_items([shown], [], BY["dp_parser_new"], code, API) == ["MEM-0000f1e1"]
    assert used_items([shown], [], BY["dp_parser_new"], improved, API) == []
    # the target's own call is the draft's: its harness may read the field after the call
    assert "parser2->doc" not in own
