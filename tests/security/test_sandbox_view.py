"""The sandbox's parts one by one: the fallback's warning, stale cgroups, what prompts see."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from fuzzkit import bwrap, cgroups
from fuzzkit.sandbox import Limits, run_sandboxed
from nodes.prompt_text import crash_for_prompt, for_prompt
from tests.sandbox_procs import alive


@pytest.fixture()
def no_bwrap(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A PATH without bwrap, as on a machine where it is not installed."""
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    bwrap.problem.cache_clear()
    monkeypatch.setattr("fuzzkit.sandbox._warned", set())
    yield
    bwrap.problem.cache_clear()


@pytest.mark.toolchain
def test_without_bwrap_one_line_names_the_missing_protections(no_bwrap: None, tmp_path: Path) -> None:
    run = tmp_path / "run"
    result = run_sandboxed(["/bin/sh", "-c", "echo ran"], cwd=run, log_path=tmp_path / "log", wall_timeout=20)
    assert result.exit_code == 0 and (tmp_path / "log").read_text() == "ran\n"
    lines = [w for w in result.warnings if "bwrap" in w]
    assert len(lines) == 1 and "\n" not in lines[0]
    assert "not installed" in lines[0] and "PID" in lines[0] and "install bubblewrap" in lines[0]


@pytest.mark.toolchain
def test_the_view_shows_the_run_directory_and_the_system_only(tmp_path: Path) -> None:
    if reason := bwrap.problem():
        pytest.skip(f"no private view on this machine: {reason}")
    run = tmp_path / "run"
    script = "ls / > top; ls /tmp > tmp; test -e /etc/shadow && echo shadow; echo $$ $HOME > me"
    result = run_sandboxed(["/bin/sh", "-c", script], cwd=run, log_path=tmp_path / "log", wall_timeout=20)
    assert result.exit_code == 0, (tmp_path / "log").read_text()
    assert "shadow" not in (tmp_path / "log").read_text()
    assert not set((run / "top").read_text().split()) & {"root", "home", "var", "srv", "mnt", "opt"}
    listed = (run / "tmp").read_text().split()
    assert listed == [run.relative_to("/tmp").parts[0]] if run.is_relative_to("/tmp") else listed == []
    pid, home = (run / "me").read_text().split()
    assert int(pid) <= 3 and home == str(run.resolve())  # a PID namespace; HOME is the run dir


def test_stale_groups_of_a_dead_tool_are_emptied_and_removed() -> None:
    parent = next((d for d in (cgroups._parent_dir(c) for c in ("pids", "memory")) if d), None)
    if parent is None:
        pytest.skip("no writable cgroup hierarchy here (needs root or a delegated subtree)")
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = parent / f"logicfuzz-{dead.pid}-0"
    stale.mkdir()
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        (stale / "cgroup.procs").write_text(str(sleeper.pid))
        mine = parent / f"logicfuzz-{os.getpid()}-999"
        mine.mkdir()
        removed = cgroups.remove_stale_groups()
        sleeper.wait(timeout=10)
        assert stale in removed and not stale.exists() and not alive(sleeper.pid)
        assert mine.exists() and mine not in removed  # a live tool's group is left alone
        mine.rmdir()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_log_text_for_a_prompt_is_redacted_then_capped() -> None:
    key = "AKIA" + "ABCDEFGHIJKLMNOP"
    text = f"error: x\naws_access_key_id = {key}\n" + "y" * 20000 + "\nlast line\n"
    out = for_prompt(text, limit=1000)
    assert len(out) <= 1000 and key not in out and "REDACTED" in out
    assert out.startswith("error: x") and out.rstrip().endswith("last line") and "characters cut" in out
    assert for_prompt("plain\n") == "plain\n"
    crash = crash_for_prompt(
        {"summary": "s" * 5000 + " " + key, "frames": [{"function": key, "line": 3}], "n": 1}
    )
    assert len(crash["summary"]) <= 2000 and key not in crash["summary"]
    assert key not in crash["frames"][0]["function"] and crash["frames"][0]["line"] == 3 and crash["n"] == 1


@pytest.mark.toolchain
def test_only_a_librarys_own_harness_may_write_its_private_tmp(tmp_path: Path) -> None:
    """A generated harness's write to /tmp fails; a library's own fuzz target (which writes its
    input to /tmp before opening it) gets a /tmp of the sandbox's own, and nothing of it is outside."""
    if reason := bwrap.problem():
        pytest.skip(f"no private view on this machine: {reason}")
    probe = f"/tmp/lf-probe-{os.getpid()}"
    script = f"echo inside > {probe} && cat {probe}"
    for writable_tmp, expected in ((False, "Read-only file system"), (True, "inside")):
        log = tmp_path / f"log-{writable_tmp}"
        run_sandboxed(["/bin/sh", "-c", script], cwd=tmp_path / "run", log_path=log, wall_timeout=20,
                      limits=Limits(writable_tmp=writable_tmp))
        assert expected in log.read_text(), log.read_text()
        assert not Path(probe).exists()
