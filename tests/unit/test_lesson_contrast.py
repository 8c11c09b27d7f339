"""MaTTS contrastive lessons are actionable, and content tags steer retrieval.

The code change between an attempt that got further and one that did not is one of the actions
(read from the two harnesses). Candidates carry content tags: the failure class filters what a
repair is shown, the API family only ranks, so a lesson can still cross libraries.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from agent_graph.context import Context
from long_term_memory.experience import Gatekeeper, Match
from long_term_memory.experience.contrast import contrast_items, with_contrast
from long_term_memory.experience.lesson_tags import content_tags
from long_term_memory.experience.models import MemoryItem
from long_term_memory.experience.trajectory import Trajectory
from nodes.experience import matts_lifecycle
from tests.unit.test_experience_support import EMBEDDER, config, item, open_bank, outcome
from tests.unit.test_tag_kind_lessons import HARNESS, TARGET

LEAKY = """#include "kv.h"
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kv_t *kv = kv_parse((const char *)data, size);
  kv_count(kv);
  return 0;
}
"""
RELEASED = LEAKY.replace("  kv_count(kv);\n", "  kv_count(kv);\n  kv_free(kv);\n")


def attempt(n: int, code: str, steps: list[tuple[str, str]] | None = None, **facts: Any) -> Trajectory:
    done = outcome(attempt=n, **facts)
    return Trajectory(done.task_id, "q", done, done.compiles and done.runs, steps or [], code)


def test_a_tag_written_by_the_attempt_that_built_is_a_keep_struct_tag_lesson() -> None:
    failed = attempt(0, HARNESS, compiles=False, runs=False)
    built = attempt(1, HARNESS.replace("  ee_mode mode", "  enum ee_mode mode"))
    [lesson] = contrast_items([failed, built], TARGET)
    assert lesson.action == "keep_struct_tag(tag=ee_mode, kind=enum)"
    assert lesson.failure == "compile:must-use-tag"
    assert lesson.scope is not None and lesson.scope.type == "ee_mode"


def test_a_release_added_by_the_attempt_that_ran_is_a_release_lesson() -> None:
    leaked = attempt(0, LEAKY, [("crash", "leak at kv.c:10 through kv_parse")], runs=False, crashed=True)
    ran = attempt(1, RELEASED)
    [lesson] = contrast_items([leaked, ran])
    assert lesson.action == "release_out_param(type=kv_t, releaser=kv_free)"
    assert lesson.failure == "sanitizer:leak@kv_parse"
    assert lesson.scope is not None and lesson.scope.render() == "shape=returns_pointer type=kv_t"
    # Attempts that ended at the same stage contrast nothing; the extracted items follow the contrast.
    assert contrast_items([leaked, attempt(2, RELEASED, runs=False)]) == []
    extracted = [item("Release the parsed object", "Call kv_free on what kv_parse returns, always.")]
    assert [i.title for i in with_contrast([lesson], extracted)] == [lesson.title, extracted[0].title]


def test_content_tags_name_the_api_family_the_type_and_the_failure_class() -> None:
    release = MemoryItem.model_validate({
        "title": "t", "description": "d",
        "content": "Release what kv_parse returns with kv_free (`kv_free(kv)`).",
        "scope": {"shape": "returns_pointer", "type": "kv_t"},
        "failure": "sanitizer:leak@kv_parse", "action": "release_out_param(type=kv_t, releaser=kv_free)"})
    assert content_tags([release.lesson()], "kv/kv_parse") == ["api:kv_*", "type:kv_t", "failure:leak"]
    gk, done = Gatekeeper(config()), outcome("kv/kv_parse", fix_rounds=2)
    decision = gk.admit(gk.evaluate([], [], done), done, [release], query="q", trajectory="t",
                        task_type="fuzz-c")
    assert decision.candidate is not None
    assert decision.candidate.tags[-3:] == ["api:kv_*", "type:kv_t", "failure:leak"]
    assert "result:pass" in decision.candidate.tags  # the outcome's own tags stay


def match(item_id: str, task_id: str, lesson: dict[str, Any], score: float) -> Match:
    return Match(item_id, "rec-1", task_id, f"title {item_id}", "desc", "content", score, "active",
                 0, 0.5, 1.0, 0.0, True, "q", lesson=lesson)


def test_the_failure_class_filters_a_repairs_lessons_and_the_family_only_ranks() -> None:
    leak = {"failure": "sanitizer:leak@kv_parse"}
    tag = {"failure": "compile:must-use-tag"}
    matches = [match("MEM-0000000a", "kv/kv_get", leak, 0.9), match("MEM-0000000b", "kv/kv_set", tag, 0.5),
               match("MEM-0000000c", "kv/kv_put", {}, 0.4)]
    gk = Gatekeeper(config(retrieval__top_k=5))
    shown, rejected = gk.screen(matches, failure="compile")
    assert [i.item_id for i in shown] == ["MEM-0000000b", "MEM-0000000c"]  # plain advice is shown to all
    why = "a lesson about a leak failure, not this compile one"
    assert rejected == [{"item_id": "MEM-0000000a", "reason": why}]
    assert len(gk.screen(matches)[0]) == 3  # a draft (no failure class) is shown every class
    # Of two lessons in equal standing, the target's own family first; the other library's is still shown.
    other = match("MEM-0000000d", "zz/zz_parse", {}, 0.95)
    own = match("MEM-0000000e", "kv/kv_load", {}, 0.6)
    ranked, _ = gk.screen([other, own], dataclasses.replace(TARGET, name="kv_parse"))
    assert [i.item_id for i in ranked] == ["MEM-0000000e", "MEM-0000000d"]


def test_a_parallel_matts_run_stores_the_contrast_as_an_actionable_lesson(tmp_path: Path) -> None:
    path = tmp_path / "memory.yaml"
    path.write_text(f"mode: retrieve-extract\nbank:\n  directory: {tmp_path / 'bank'}\n"
                    f"embedding:\n  model: {EMBEDDER.name}\nmatts:\n  enabled: true\n  n: 2\n")

    def state(n: int, code: str, ok: bool) -> dict[str, Any]:
        work = tmp_path / "r" / f"attempt-{n}" / "ee" / "ee_run"
        work.mkdir(parents=True)
        run = {"version": 1, "usable": ok, "crashed": False, "target_hits": 3,
               "coverage": {"lines": {"percent": 40.0}}}
        return {"project": "ee", "function": "ee_run", "target": TARGET.to_dict(), "work_dir": str(work),
                "run_dir": str(tmp_path / "r"), "harness_code": code, "harness_version": 1,
                "build": {"version": 1, "ok": ok}, "run": run if ok else {},
                "best": {"code": code, "version": 1, "build": {"ok": True}, "run": run} if ok else {},
                "counters": {"harness_versions": 1, "fix_rounds_total": 1},
                "usage": {"prototyper": {"calls": 1}}}

    tagged = HARNESS.replace("  ee_mode mode", "  enum ee_mode mode")
    states = [state(0, HARNESS, False), state(1, tagged, True)]
    matts_lifecycle(states, Context(memory_config=str(path)), best=1)  # type: ignore[arg-type]
    bank = open_bank(tmp_path / "bank", cfg=config())
    records = list(bank.records())
    bank.close()
    assert [r["kind"] for r in records] == ["contrastive"]
    assert records[0]["memory_items"][0]["action"] == "keep_struct_tag(tag=ee_mode, kind=enum)"
    assert "failure:compile" in records[0]["tags"]
