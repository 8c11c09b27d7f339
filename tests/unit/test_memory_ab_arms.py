"""bench/memory_ab.py's arms: each starts from an empty bank it checks, and reads only what it may.

The runner is the seam: a fake one runs no fuzzer, notes which lessons the bank it was given
held when each target started, and (in retrieve-extract mode) learns one lesson per target.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
import yaml

from benchkit.memory_ab_arms import ArmError, listing, require_empty, run_arm
from logicfuzz.runner import RunOptions

PLAN = [(Path("vv.yaml"), ["vv_a", "vv_b"]), (Path("ww.yaml"), ["ww_c"])]


def args(restart: bool = False) -> argparse.Namespace:
    return argparse.Namespace(model="offline", fuzz_seconds=1, fuzz_seed=1, fuzz_runs=0, max_iterations=1,
                              restart=restart)


class FakeRunner:
    """Runs no target: records ``(mode, target, lessons in its bank)``; retrieve-extract learns one."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, list[str]]] = []

    def __call__(self, options: RunOptions) -> None:
        if len(options.functions) != 1:
            return  # the summary call over a benchmark's targets: every one ran already
        ctx = options.context
        bank = Path(yaml.safe_load(Path(ctx.memory_config).read_text())["bank"]["directory"])
        target = f"{options.benchmarks[0].stem}/{options.functions[0]}"
        self.seen.append((ctx.memory_mode, target, lessons(bank)))
        if ctx.memory_mode == "retrieve-extract":
            bank.mkdir(parents=True, exist_ok=True)
            with (bank / "fuzz-c.jsonl").open("a") as out:
                item = {"item_id": f"MEM-{target}"}
                out.write(json.dumps({"task_id": target, "memory_items": [item]}) + "\n")

    def reads(self, mode: str) -> dict[str, list[str]]:
        """What each target run in ``mode`` found in its bank (the last run of each target)."""
        return {target: found for m, target, found in self.seen if m == mode}


def lessons(bank: Path) -> list[str]:
    path = bank / "fuzz-c.jsonl"
    return [json.loads(line)["task_id"] for line in path.read_text().splitlines()] if path.is_file() else []


def test_retrieve_only_reads_what_retrieve_extract_had_before_the_same_target(tmp_path: Path) -> None:
    runner = FakeRunner()
    run_arm("retrieve-extract", PLAN, tmp_path, args(), runner)
    before = {"vv/vv_a": [], "vv/vv_b": ["vv/vv_a"], "ww/ww_c": ["vv/vv_a", "vv/vv_b"]}
    assert runner.reads("retrieve-extract") == before
    assert lessons(tmp_path / "retrieve-extract" / "bank") == listing(PLAN)  # the final bank
    runner.seen.clear()
    run_arm("retrieve-only", PLAN, tmp_path, args(), runner)
    # Never a lesson of a later target (the final bank would give vv/vv_a all three).
    assert runner.reads("retrieve-only") == before
    check = json.loads((tmp_path / "retrieve-only" / "bank_check.json").read_text())
    assert check == {"files": 1, "identical": True, "changed": []}


def test_the_learning_curves_second_pass_reads_only_what_the_first_learned(tmp_path: Path) -> None:
    runner = FakeRunner()
    run_arm("learning-curve", PLAN, tmp_path, args(), runner)
    assert runner.reads("retrieve-extract") == {"vv/vv_a": [], "vv/vv_b": ["vv/vv_a"],
                                                "ww/ww_c": ["vv/vv_a", "vv/vv_b"]}
    assert runner.reads("retrieve-only") == dict.fromkeys(listing(PLAN), listing(PLAN))
    check = json.loads((tmp_path / "learning-curve" / "pass-2" / "bank_check.json").read_text())
    assert check["identical"] and check["files"] == 1
    assert not (tmp_path / "retrieve-extract").exists()  # its own bank, nobody else's


def test_a_reused_out_is_refused_or_emptied_so_every_arm_starts_from_an_empty_bank(tmp_path: Path) -> None:
    runner = FakeRunner()
    run_arm("retrieve-extract", PLAN, tmp_path, args(), runner)
    runner.seen.clear()
    with pytest.raises(ArmError, match=r"already holds a run of the retrieve-extract arm .* --restart"):
        run_arm("retrieve-extract", PLAN, tmp_path, args(), runner)
    assert runner.seen == []  # refused before any target ran
    run_arm("retrieve-extract", PLAN, tmp_path, args(restart=True), runner)
    assert runner.reads("retrieve-extract")["vv/vv_a"] == []  # started from an empty bank again
    assert lessons(tmp_path / "retrieve-extract" / "bank") == listing(PLAN)


def test_an_arm_refuses_a_bank_that_is_not_empty(tmp_path: Path) -> None:
    require_empty(tmp_path / "missing", "baseline")  # no bank yet is an empty bank
    (tmp_path / "bank").mkdir()
    (tmp_path / "bank" / "fuzz-c.lock").write_text("")
    require_empty(tmp_path / "bank", "baseline")  # a lock file is no lesson
    (tmp_path / "bank" / "fuzz-c.jsonl").write_text("{}\n")
    with pytest.raises(ArmError, match=r"baseline arm must start from an empty experience bank.*fuzz-c"):
        require_empty(tmp_path / "bank", "baseline")


def test_retrieve_only_needs_retrieve_extract_to_have_run_the_same_sequence(tmp_path: Path) -> None:
    runner = FakeRunner()
    with pytest.raises(ArmError, match="run both arms in this --out"):
        run_arm("retrieve-only", PLAN, tmp_path, args(), runner)
    run_arm("retrieve-extract", PLAN[:1], tmp_path, args(), runner)
    with pytest.raises(ArmError, match="same benchmarks and functions"):
        run_arm("retrieve-only", PLAN, tmp_path, args(), runner)
    # A snapshot that is not empty before the first target (a bank that was not empty) is refused.
    run_arm("retrieve-extract", PLAN, tmp_path, args(restart=True), runner)
    (tmp_path / "retrieve-extract" / "snapshots" / "000" / "fuzz-c.jsonl").write_text("{}\n")
    with pytest.raises(ArmError, match="retrieve-only arm must start from an empty experience bank"):
        run_arm("retrieve-only", PLAN, tmp_path, args(), runner)
