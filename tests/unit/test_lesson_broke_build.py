"""A lesson whose change makes a target's build fail is never applied again in that target.

Lessons are applied on every draft and compile repair; one whose change the compiler rejects
would be re-added on each round. The build node names the shown lessons the failed build
failed on (their change is on a rejected line) and the next prompts of the target leave them out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_graph.context import Context
from agent_graph.state import merge_extras
from fuzzkit.diagnostics import Diagnostic
from fuzzkit.harness import HarnessBuild
from fuzzkit.toolchain import Fuzzkit, register_toolchain
from long_term_memory.experience import MemoryItem
from long_term_memory.experience.lesson_effects import breaks_build
from long_term_memory.experience.lessons import parse_action
from nodes.build import build_node
from nodes.experience import inject
from nodes.lesson_failures import BROKE_BUILD
from tests.unit.test_experience_support import EMBEDDER, config, item, open_bank, record
from tests.unit.test_tag_kind_lessons import API, HARNESS, TARGET

# A lesson stored with the wrong kind (the bug this guards against): `struct` for an enum tag.
WRONG = "keep_struct_tag(tag=ee_mode, kind=struct)"
BROKEN = HARNESS.replace("  ee_mode mode", "  struct ee_mode mode")  # line 3
MISMATCH = "use of 'ee_mode' with tag type that does not match previous declaration"


def test_a_build_fails_on_a_lesson_when_a_rejected_line_carries_its_change() -> None:
    action = parse_action(WRONG)
    assert breaks_build(action, BROKEN, [3])
    assert not breaks_build(action, BROKEN, [5])  # the error is elsewhere
    assert not breaks_build(action, HARNESS, [3])  # its change is not in the harness
    assert not breaks_build(parse_action("avoid_call(ee_run)"), BROKEN, [3, 4, 5])  # writes nothing


class FailingBuild(Fuzzkit):
    """The toolchain seam: every harness build fails with one error on ``line``."""

    def __init__(self, line: int) -> None:
        super().__init__()
        self.line = line

    def build_harness(self, source: Path, lib: Any, out: Path) -> HarnessBuild:
        error = Diagnostic(source.name, self.line, 3, "error", MISMATCH)
        return HarnessBuild(False, None, None, error.render(), [error])


class Runtime:
    def __init__(self, context: Context) -> None:
        self.context = context


def memory_file(tmp_path: Path) -> Path:
    path = tmp_path / "memory.yaml"
    path.write_text(f"mode: retrieve-only\nbank:\n  directory: {tmp_path / 'bank'}\n"
                    f"embedding:\n  model: {EMBEDDER.name}\nretrieval:\n  threshold: 0.0\n")
    return path


def test_a_lesson_the_build_failed_on_is_not_shown_again_to_that_target(tmp_path: Path) -> None:
    bank = open_bank(tmp_path / "bank", cfg=config())
    wrong = MemoryItem.model_validate({
        "title": "ee_mode needs its tag", "description": "Any harness that declares an ee_mode.",
        "content": "Write the tag before ee_mode.", "scope": {"type": "ee_mode"}, "action": WRONG})
    plain = item("Pass the mode from the input", "ee_run takes a mode: derive it from the first byte.")
    wrong_id, plain_id = bank.add_record(record("rec-1", "ee/ee_other", [wrong, plain])).added
    bank.close()
    register_toolchain("broke-build-test", lambda: FailingBuild(3))
    register_toolchain("broke-build-elsewhere", lambda: FailingBuild(5))
    ctx = Context(memory_config=str(memory_file(tmp_path)), toolchain="broke-build-test")
    state: dict[str, Any] = {
        "project": "ee", "function": "ee_run", "target": TARGET.to_dict(), "api": [f.to_dict() for f in API],
        "harness_code": BROKEN, "harness_version": 1, "work_dir": str(tmp_path / "r" / "ee" / "ee_run"),
        "library": {k: "" for k in ("key", "root", "fuzz_archive", "cov_archive", "log_path")}
        | {k: [] for k in ("include_dirs", "headers", "coverage_files", "defines")}}
    section, extras = inject(state, ctx)  # type: ignore[arg-type]
    assert f"[{wrong_id}]" in section and f"[{plain_id}]" in section
    state["extras"] = merge_extras({}, extras)

    update = build_node(state, Runtime(ctx))  # type: ignore[arg-type]
    assert update["extras"][BROKE_BUILD] == [wrong_id]
    state["extras"] = merge_extras(state["extras"], update["extras"])
    assert '"memory.lesson.broke_build"' in (Path(state["work_dir"]) / "events.jsonl").read_text()
    again, _ = inject(state, ctx)  # type: ignore[arg-type]
    assert f"[{wrong_id}]" not in again and f"[{plain_id}]" in again
    # The same failure again names nothing new; an error on another line names nothing.
    assert BROKE_BUILD not in build_node(state, Runtime(ctx)).get("extras", {})  # type: ignore[arg-type]
    fresh = {**state, "extras": merge_extras({}, extras)}
    elsewhere = Runtime(Context(memory_config=ctx.memory_config, toolchain="broke-build-elsewhere"))
    assert BROKE_BUILD not in build_node(fresh, elsewhere).get("extras", {})  # type: ignore[arg-type]
