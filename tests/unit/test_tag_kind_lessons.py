"""``keep_struct_tag`` lessons keep the tag's kind: an enum or union tag is never written ``struct``.

The fixer repairs ``must use 'enum' tag`` as well as ``'struct'``; the lesson it leaves names the
kind, and applying it writes that keyword. Entries stored before the kind was recorded take it
from their own text, and are not applied when the text does not say it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from agents.offline.cdecl import parse_prototypes
from agents.offline.lesson_apply import ActionableLesson, actionable_lessons, apply_lessons
from agents.offline.lesson_extract import actionable_items
from agents.offline.prompt_reader import read_prompt
from fuzzkit.guidance_facts import Rule
from long_term_memory.experience.inject import render_experience
from long_term_memory.experience.lesson_effects import effect_present
from long_term_memory.experience.lessons import parse_action, parse_scope
from long_term_memory.experience.matches import InjectItem
from long_term_memory.experience.models import MemoryItem
from tests.trajectories import build, harness

HEADER = """#include <stdint.h>
#include <stddef.h>
enum ee_mode { EE_FAST, EE_SLOW };
union ee_value { int i; double d; };
int ee_run(const uint8_t *data, size_t size, enum ee_mode mode, union ee_value *out);
"""
API = parse_prototypes(HEADER.split("};\n")[-1])
TARGET = API[0]
HARNESS = """#include "ee.h"
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ee_mode mode = EE_FAST;
  ee_value out;
  ee_run(data, size, mode, &out);
  return (int)sizeof(ee_value) - (int)sizeof(out);
}
"""
TRAJECTORY = [
    harness(1, "prototyper", "ee_run"),
    build(1, "must use 'enum' tag to refer to type 'ee_mode'"),
    harness(2, "enhancer.fix", "add the enum tag to ee_mode at line 3 (it is enum ee_mode); "
            "add the union tag to ee_value at line 4 (it is union ee_value)",
            rules=(Rule(kind="keep_tag", name="ee_mode", then="enum"),
                   Rule(kind="keep_tag", name="ee_value", then="union"))),
    build(2),
]


def lesson(action: str, item_id: str = "MEM-0000e001") -> ActionableLesson:
    return ActionableLesson(item_id, "tag", parse_scope("type=ee_mode"), parse_action(action))


def test_the_extracted_lesson_names_the_kind_the_compiler_asked_for() -> None:
    actions = [item["action"] for item in actionable_items(TARGET.prototype(), TRAJECTORY, HARNESS)
               if item["failure"] == "compile:must-use-tag"]
    assert actions == ["keep_struct_tag(tag=ee_mode, kind=enum)", "keep_struct_tag(tag=ee_value, kind=union)"]
    stored = MemoryItem.model_validate({"title": "t", "description": "d", "content": "c",
                                        "action": actions[0]})
    assert stored.action == "keep_struct_tag(tag=ee_mode, kind=enum)"  # the kind survives the bank


def test_applying_writes_the_tags_own_keyword_never_struct() -> None:
    both = [lesson("keep_struct_tag(tag=ee_mode, kind=enum)"),
            lesson("keep_struct_tag(ee_value, union)", "MEM-0000e002")]  # positional, as a model may write
    code, notes = apply_lessons(HARNESS, TARGET, API, both)
    assert "enum ee_mode mode" in code and "union ee_value out;" in code and "sizeof(union ee_value)" in code
    assert "struct" not in code
    assert notes[0].startswith("applied [MEM-0000e001] keep_struct_tag(tag=ee_mode, kind=enum): "
                               "write enum ee_mode")
    # A tag already written with the wrong keyword gets its own.
    wrong = HARNESS.replace("  ee_mode mode", "  struct ee_mode mode")
    fixed, _ = apply_lessons(wrong, TARGET, API, [lesson("keep_struct_tag(tag=ee_mode, kind=enum)")])
    assert "enum ee_mode mode" in fixed and "struct ee_mode" not in fixed
    # Used means the right keyword is there.
    enum = parse_action("keep_struct_tag(tag=ee_mode, kind=enum)")
    assert effect_present(enum, fixed) and not effect_present(enum, wrong)
    unknown = parse_action("keep_struct_tag(tag=ee_mode, kind=class)")
    assert unknown == parse_action("keep_struct_tag(ee_mode)")  # a kind C does not have is dropped


def _shown(title: str, content: str) -> list[ActionableLesson]:
    """An entry stored before the kind was recorded, as a prompt shows it and the engine reads it."""
    old = MemoryItem.model_validate({"title": title, "description": "Any harness that declares it.",
                                     "content": content, "scope": {"type": "ee_mode"},
                                     "action": "keep_struct_tag(ee_mode)"})
    item = InjectItem("MEM-0000e003", "r", old.title, old.description, old.content, 0.9, 0, 0.5, True, "q",
                      old.lesson())
    return actionable_lessons(read_prompt("ROLE: enhancer", render_experience([item])))


def test_an_old_entry_takes_the_kind_its_own_text_says_and_no_kind_writes_nothing() -> None:
    said = _shown("ee_mode is a enum tag, not a typedef", "Write `enum ee_mode` in declarations.")
    assert said[0].action == parse_action("keep_struct_tag(tag=ee_mode, kind=enum)")
    code, _ = apply_lessons(HARNESS, TARGET, API, said)
    assert "enum ee_mode mode" in code and "struct" not in code
    silent = _shown("Declare the mode with its tag", "The build failed until the tag was written.")
    assert silent[0].action == parse_action("keep_struct_tag(ee_mode)")
    assert apply_lessons(HARNESS, TARGET, API, silent) == (HARNESS, [])  # not guessed as struct
    struct = _shown("ee_mode is a struct tag, not a typedef", "Write `struct ee_mode`.")
    assert "struct ee_mode mode" in apply_lessons(HARNESS, TARGET, API, struct)[0]


@pytest.mark.toolchain
def test_the_enum_lesson_compiles_where_writing_struct_did_not(tmp_path: Path) -> None:
    clang = shutil.which("clang")
    if clang is None:
        pytest.skip("clang is not installed")
    (tmp_path / "ee.h").write_text(HEADER)

    def compiles(code: str) -> bool:
        (tmp_path / "h.c").write_text(code)
        return subprocess.run([clang, "-fsyntax-only", "-Werror=incompatible-pointer-types", "h.c"],
                              cwd=tmp_path, capture_output=True).returncode == 0

    both = [lesson("keep_struct_tag(tag=ee_mode, kind=enum)"),
            lesson("keep_struct_tag(tag=ee_value, kind=union)", "MEM-0000e002")]
    assert compiles(apply_lessons(HARNESS, TARGET, API, both)[0])
    assert not compiles(HARNESS.replace("ee_mode mode", "struct ee_mode mode"))
