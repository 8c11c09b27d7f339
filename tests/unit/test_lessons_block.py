"""A shown lesson's action reaches the offline engine as data: the experience section's lessons block.

The lines a person reads (``- Scope:``, ``- Action:``) and the lesson's prose are never parsed:
the engine takes the ``# facts: lessons v1`` block, read with the models it was rendered from.
An entry stored before a tag's kind was recorded gets its kind at render time, from its own text.
"""

from __future__ import annotations

import pytest

from agents.offline.lesson_apply import actionable_lessons
from agents.offline.prompt_reader import read_prompt
from fuzzkit.facts_block import FactsBlockError
from long_term_memory.experience.inject import render_experience
from long_term_memory.experience.matches import InjectItem


def _item(action: str, content: str = "Release what it returns.") -> InjectItem:
    return InjectItem("MEM-0000b10c", "rec-1", "Release qq results", "Harnesses of qq", content, 0.9, 1,
                      0.6, True, "project qq",
                      {"scope": {"name": "qq_*"}, "failure": "sanitizer:leak@qq_new", "action": action})


def _lessons(section: str) -> list[tuple[str, str, dict[str, str]]]:
    user = f"## Target function\nint qq_run(void);\n\n{section}\n\n## Task\nx"
    facts = read_prompt("ROLE: prototyper", user)
    return [(x.item_id, x.action.verb, x.action.args) for x in actionable_lessons(facts) if x.action]


def test_the_engine_reads_the_block_not_the_lines() -> None:
    section = render_experience([_item("release_out_param(type=qq_t, releaser=qq_free)")])
    assert "# facts: lessons v1" in section
    expected = [("MEM-0000b10c", "release_out_param", {"type": "qq_t", "releaser": "qq_free"})]
    assert _lessons(section) == expected
    reworded = section.replace("- Action: release_out_param(type=qq_t, releaser=qq_free)",
                               "- Action: release_out_param(type=other_t, releaser=other_free)")
    assert _lessons(reworded) == expected
    without_block = section[:section.index("```yaml")]
    assert _lessons(without_block) == []  # the lines alone are for people


def test_an_old_tag_lesson_gets_its_kind_from_its_own_text_at_render_time() -> None:
    old = _item("keep_struct_tag(qq_mode)", "qq_mode is an enum tag: write enum qq_mode.")
    section = render_experience([old])
    assert _lessons(section)[0][2] == {"tag": "qq_mode", "kind": "enum"}


def test_a_block_that_does_not_fit_its_model_is_an_error() -> None:
    section = render_experience([_item("release_out_param(type=qq_t, releaser=qq_free)")])
    with pytest.raises(FactsBlockError, match="lessons"):
        _lessons(section.replace("verb: release_out_param", "verb: [release_out_param]"))
