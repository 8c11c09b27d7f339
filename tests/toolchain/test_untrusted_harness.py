from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from fuzzkit.harness import HarnessBuild
from fuzzkit.runner import FuzzRun, run_fuzzer
from tests.sandbox_procs import wait_gone

pytestmark = pytest.mark.toolchain

MakeHarness = Callable[..., HarnessBuild]

INCLUDES = "#include <stdio.h>\n#include <unistd.h>\n"
FORKER = """\
if (data[0] == 'F') {
  int forks = 0;
  for (; forks < 2000; forks++) {
    pid_t pid = fork();
    if (pid < 0) break;
    if (pid == 0) { pause(); _exit(0); }
    fprintf(stderr, "child %d\\n", (int)pid);
  }
  fprintf(stderr, "forks=%d\\n", forks);
  abort();
}
"""


def _seeded(tmp_path: Path, name: str, first: bytes) -> Path:
    seeds = tmp_path / f"{name}-seeds"
    seeds.mkdir()
    (seeds / "seed").write_bytes(first)
    return seeds


def _still_works(make_harness: MakeHarness, tmp_path: Path) -> FuzzRun:
    build = make_harness("benign", "keep_alive = (void *)(long)lib_ok(data, size);")
    assert build.fuzz_binary
    run = run_fuzzer(Path(build.fuzz_binary), tmp_path / "benign", seconds=2)
    assert run.exit_code == 0 and not run.crashed and run.stats.execs > 100
    return run


def test_forking_harness_is_capped_and_cleaned_up(make_harness: MakeHarness, tmp_path: Path) -> None:
    build = make_harness("forker", FORKER, INCLUDES)
    assert build.fuzz_binary
    seeds = _seeded(tmp_path, "fork", b"F")
    start = time.monotonic()
    run = run_fuzzer(Path(build.fuzz_binary), tmp_path / "fork", seconds=5, seed_dirs=[seeds])
    assert time.monotonic() - start < 60 and not run.timed_out
    log = Path(run.log_path).read_text()
    forks = int(log.split("forks=")[1].split()[0])
    assert forks < 300  # stopped by the process cap (256), not by the harness's own bound
    assert run.limit == "processes" and run.crashed and run.crash is not None
    children = [int(line.split()[1]) for line in log.splitlines() if line.startswith("child ")]
    assert len(children) == forks
    # Printed pids are PID-namespace pids under bwrap; the children are found by their cwd.
    assert not wait_gone(tmp_path / "fork")
    _still_works(make_harness, tmp_path)


def test_harness_writes_outside_its_directory_fail(make_harness: MakeHarness, tmp_path: Path) -> None:
    outside = tmp_path / "escape_xyz"
    body = f"""\
if (data[0] == 'W') {{
  const char *targets[] = {{"{outside}", "../escape_relative", "inside_ok"}};
  for (int i = 0; i < 3; i++) {{
    FILE *f = fopen(targets[i], "w");
    fprintf(stderr, "%s: %s\\n", targets[i], f ? "written" : "refused");
    if (f) fclose(f);
  }}
}}
"""
    build = make_harness("escaper", body, INCLUDES)
    assert build.fuzz_binary
    work = tmp_path / "work"
    run = run_fuzzer(Path(build.fuzz_binary), work, seconds=2, seed_dirs=[_seeded(tmp_path, "w", b"W")])
    log = Path(run.log_path).read_text()
    assert f"{outside}: refused" in log and "../escape_relative: refused" in log
    assert "inside_ok: written" in log and (work / "inside_ok").is_file()
    assert not outside.exists() and not (tmp_path / "escape_relative").exists()
    assert run.sandbox_warnings == []
    _still_works(make_harness, tmp_path)
