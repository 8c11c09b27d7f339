from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fuzzkit.errors import ToolchainError
from fuzzkit.paths import safe_path
from fuzzkit.sandbox import Limits, SandboxResult, run_sandboxed
from tests.sandbox_procs import wait_gone

pytestmark = pytest.mark.toolchain

# Forks until the kernel refuses (at most 400 times), records the children, and exits at once:
# the children sleep and must be killed by the sandbox, not by the bomb's own exit.
FORK_BOMB = """\
import os, time
pids = []
for _ in range(400):
    time.sleep(PACE)
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(120)
        os._exit(0)
    pids.append(pid)
open("children", "w").write(" ".join(map(str, pids)))
print("forked", len(pids), flush=True)
"""


def _run_python(code: str, cwd: Path, limits: Limits, timeout: float = 20) -> tuple[SandboxResult, str]:
    log = cwd.parent / f"{cwd.name}.log"
    result = run_sandboxed(
        [sys.executable, "-c", code], cwd=cwd, log_path=log, wall_timeout=timeout, limits=limits
    )
    return result, log.read_text()


def _assert_bomb_contained(tmp_path: Path, expect_limit: bool = True, pace: float = 0.0) -> None:
    """``pace``: seconds between forks (a polling watchdog needs the bomb to take some time)."""
    start = time.monotonic()
    result, out = _run_python(FORK_BOMB.replace("PACE", repr(pace)), tmp_path, Limits(processes=40),
                              timeout=60)
    assert time.monotonic() - start < 30 and not result.timed_out
    if expect_limit:
        assert result.limit == "processes", out
    children = (
        [int(p) for p in (tmp_path / "children").read_text().split()]
        if (tmp_path / "children").exists()
        else []
    )
    assert len(children) < 400  # the cap stopped it well before the bomb's own bound
    # The pids the bomb recorded may be PID-namespace pids; its children are found by cwd.
    assert not wait_gone(tmp_path), "sandbox left children running"


def test_fork_bomb_is_capped_and_all_children_are_killed(tmp_path: Path) -> None:
    _assert_bomb_contained(tmp_path)
    result, out = _run_python("print('still works')", tmp_path, Limits())
    assert result.exit_code == 0 and "still works" in out


def test_fork_bomb_without_cgroups_is_stopped_by_the_fallback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOGICFUZZ_SANDBOX", "no-cgroup")
    # The fallback polls: a bomb forking 400 children in 0.2 s can finish between two polls on
    # a loaded machine. At 20 ms a fork it takes 8 s unchecked; the cap of 40 must stop it.
    _assert_bomb_contained(tmp_path, pace=0.02)


def test_network_is_unreachable_unless_allowed(tmp_path: Path) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        code = (
            f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3); print('connected')"
        )
        blocked, out = _run_python(code, tmp_path, Limits())
        assert blocked.exit_code != 0 and "connected" not in out
        assert not blocked.warnings
        allowed, out = _run_python(code, tmp_path, Limits(network=True))
        assert allowed.exit_code == 0 and "connected" in out


def test_writes_are_confined_to_the_run_directory(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    outside = tmp_path / "escape_xyz"
    (run / "link").symlink_to(tmp_path / "via_link")
    script = textwrap.dedent(f"""\
        import os
        for name in ({str(outside)!r}, "../sibling", "link", "inside", "sub/deeper"):
            try:
                os.makedirs(os.path.dirname(name) or ".", exist_ok=True)
                open(name, "w").write("x")
                print("wrote", name)
            except OSError as exc:
                print("refused", name, exc.strerror)
        print("tmpdir", os.environ["TMPDIR"])
        """)
    result, out = _run_python(script, run, Limits())
    assert result.exit_code == 0, out
    assert (
        not outside.exists() and not (tmp_path / "sibling").exists() and not (tmp_path / "via_link").exists()
    )
    assert (run / "inside").read_text() == "x" and (run / "sub" / "deeper").is_file()
    assert out.count("Read-only file system") == 3
    assert f"tmpdir {run}" in out


def test_memory_caps(tmp_path: Path) -> None:
    hog = "blocks = []\nwhile True:\n    blocks.append(bytearray(16 << 20))\n"
    start = time.monotonic()
    capped, _ = _run_python(hog, tmp_path, Limits(memory_mb=200, file_size_mb=None), timeout=60)
    assert capped.limit == "memory" and capped.exit_code == -9
    assert time.monotonic() - start < 30
    limited, out = _run_python(hog, tmp_path, Limits(address_space_mb=300), timeout=60)
    assert limited.exit_code == 1 and "MemoryError" in out


def test_safe_path(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "out").symlink_to(tmp_path)
    assert safe_path(run, "harness.c") == run.resolve() / "harness.c"
    assert safe_path(run, "v1/./harness.c") == run.resolve() / "v1" / "harness.c"
    assert safe_path(run, run / "a" / ".." / "b.c") == run.resolve() / "b.c"
    for bad in ("../x.c", "/etc/passwd", "out/x.c", "a/../../x", "", ".", "x\0y", str(tmp_path / "x")):
        with pytest.raises(ToolchainError) as info:
            safe_path(run, bad)
        assert info.value.hint


SH_FORK_BOMB = """\
i=0
while [ $i -lt 400 ]; do
  sleep 120 &
  echo $! >> children
  i=$((i + 1))
done
"""


@pytest.fixture()
def open_tmp() -> Iterator[Path]:
    """A temporary directory every user can enter (pytest's own are private to root)."""
    with tempfile.TemporaryDirectory() as name:
        os.chmod(name, 0o777)
        yield Path(name)


def test_unprivileged_user_gets_the_same_containment(open_tmp: Path) -> None:
    """As a normal user: user namespaces for isolation and RLIMIT_NPROC for processes."""
    if os.geteuid() != 0:
        pytest.skip("needs root to switch to an unprivileged user")
    tmp_path = open_tmp
    work = tmp_path / "nobody"
    work.mkdir()
    work.chmod(0o777)
    escape = tmp_path / "escape_nobody"
    # Everything is imported before dropping privileges: the interpreter may live in a
    # directory an unprivileged user cannot read; the sandboxed commands are plain sh.
    driver = textwrap.dedent(f"""\
        import os
        from fuzzkit.sandbox import Limits, run_sandboxed
        os.setgid(65534); os.setuid(65534)
        work = {str(work)!r}
        r = run_sandboxed(["sh", "-c", "echo x > {escape}"], cwd=work, log_path=work + "/w.log",
                          wall_timeout=20)
        print("write", r.exit_code, r.warnings)
        r = run_sandboxed(["sh", "-c", {SH_FORK_BOMB!r}], cwd=work, log_path=work + "/f.log",
                          wall_timeout=30, limits=Limits(processes=30))
        print("bomb", r.exit_code, r.limit)
        """)
    proc = subprocess.run(
        [sys.executable, "-c", driver],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).parents[2],
    )
    assert proc.returncode == 0, proc.stderr
    lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    assert lines["write"] == "2 []", proc.stdout  # refused by the read-only mount, no warning
    assert not escape.exists()
    children = [int(p) for p in (work / "children").read_text().split()]
    assert len(children) < 400, len(children)
    assert not wait_gone(work)
