"""A corpus of hostile harnesses, each trying one escape from the build and run sandbox.

Every probe builds a harness with :func:`fuzzkit.harness.build_harness` and runs it the way
the tool does (:func:`fuzzkit.runner.run_fuzzer`, or :func:`fuzzkit.sandbox.run_sandboxed`
for the hangs), then checks from outside whether the escape happened: a listener that got a
connection, a file written outside the run directory, a sentinel process that died, a secret
that reached a log or a prompt, a heartbeat file that keeps growing after the run ended.

Liveness is judged by heartbeats, not pids: inside a PID namespace the pids a harness sees
mean nothing outside. :func:`measure` runs the whole corpus (``bench/hostile.py`` prints it);
``tests/security/test_hostile_harnesses.py`` runs each probe as a test.
"""

from __future__ import annotations

import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchkit.security.hostile_c import HARNESSES
from fuzzkit import bwrap, cgroups
from fuzzkit.harness import HarnessBuild, build_harness
from fuzzkit.library import BuildRecipe, LibraryBuild, build_library
from fuzzkit.runner import FuzzRun, run_fuzzer
from fuzzkit.sandbox import Limits, run_sandboxed
from fuzzkit.source import SourceSpec, fetch_source
from nodes.build import errors_text

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Outcome:
    """What one probe found: ``escaped`` with evidence, or ``skipped`` with the reason."""

    name: str
    escaped: bool = False
    skipped: str = ""
    detail: str = ""


@dataclass
class Lab:
    """A scratch area: a tiny library, run directories, and an "outside" the harness must not reach."""

    root: Path
    lib: LibraryBuild
    token: str = field(default_factory=lambda: uuid.uuid4().hex)

    @property
    def outside(self) -> Path:
        """A directory outside every run directory (secrets, sockets, escape targets)."""
        path = self.root / "outside"
        path.mkdir(exist_ok=True)
        return path

    @property
    def secret(self) -> Path:
        """A file only this process should be able to read; its text holds the token."""
        path = self.outside / "credentials"
        if not path.exists():
            path.write_text(f"int leaked_{self.token} = 1; secret {self.token}\n")
        return path

    def run_dir(self, name: str) -> Path:
        """A fresh run directory for one probe."""
        path = self.root / "runs" / name
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        return path

    def build(self, name: str, **values: object) -> tuple[HarnessBuild, Path]:
        """Build harness ``name`` of the corpus with its placeholders filled; (build, run dir)."""
        work = self.run_dir(name)
        text = HARNESSES[name].replace("@TOKEN@", self.token)
        for key, value in values.items():
            text = text.replace(f"@{key.upper()}@", str(value))
        source = work / "harness.c"
        source.write_text(text)
        return build_harness(source, self.lib, work), work

    def fuzz(self, build: HarnessBuild, work: Path, **kwargs: Any) -> FuzzRun:
        """Run a built probe briefly: a few executions are enough for every probe."""
        assert build.fuzz_binary, build.log
        kwargs = {
            "seconds": 5,
            "rss_limit_mb": 512,
            "timeout_per_input": 2,
            "extra_args": ["-runs=3"],
            **kwargs,
        }
        return run_fuzzer(Path(build.fuzz_binary), work / "run", **kwargs)


def make_lab(root: Path) -> Lab:
    """A lab under ``root`` with a one-function library built into its own cache."""
    src = root / "probe-lib"
    src.mkdir(parents=True, exist_ok=True)
    (src / "probe.h").write_text("int probe_sum(const unsigned char *data, unsigned long size);\n")
    (src / "probe.c").write_text(
        '#include "probe.h"\nint probe_sum(const unsigned char *d, unsigned long n) '
        "{ int s = 0; while (n--) s += *d++; return s; }\n"
    )
    source = fetch_source(SourceSpec(path=str(src)))
    lib = build_library(source, BuildRecipe(sources=["probe.c"], headers=["probe.h"]), cache=root / "cache")
    return Lab(root=root, lib=lib)


def _beating(path: Path, seconds: float = 1.0) -> bool:
    """Whether something still appends to the heartbeat file ``path``."""
    before = path.stat().st_size if path.exists() else -1
    time.sleep(seconds)
    return path.exists() and path.stat().st_size > before


def _connected(listener: socket.socket) -> bool:
    readable, _, _ = select.select([listener], [], [], 0.5)
    return bool(readable)


def _view_missing() -> str:
    reason = bwrap.problem()
    if reason is None and "bwrap" not in os.environ.get("LOGICFUZZ_SANDBOX", ""):
        return ""
    return f"no private view (PID namespace, minimal filesystem): {reason or 'LOGICFUZZ_SANDBOX=no-bwrap'}"


def tcp_connect(lab: Lab) -> Outcome:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        build, work = lab.build("tcp_connect", port=listener.getsockname()[1])
        lab.fuzz(build, work)
        return Outcome("tcp_connect", _connected(listener), detail="a TCP listener on 127.0.0.1")


def write_outside(lab: Lab) -> Outcome:
    targets = [lab.outside / f"escape-{lab.token}", Path(tempfile.gettempdir()) / f"escape-{lab.token}"]
    build, work = lab.build("write_outside", absolute=targets[0], tmp=targets[1])
    lab.fuzz(build, work)
    written = [str(t) for t in [*targets, work / f"escape-rel-{lab.token}"] if t.exists()]
    for path in written:
        Path(path).unlink()
    return Outcome("write_outside", bool(written), detail=", ".join(written) or "nothing written")


def fork_bomb(lab: Lab) -> Outcome:
    build, work = lab.build("fork_bomb")
    run = lab.fuzz(build, work)
    text = Path(run.log_path).read_text(errors="replace")
    forks = int(text.split("forks=")[1].split()[0]) if "forks=" in text else 0
    left = _beating(work / "run" / "heartbeat")
    escaped = forks >= 5000 or left
    return Outcome("fork_bomb", escaped, detail=f"{forks} forks before the cap; children left: {left}")


def daemon(lab: Lab) -> Outcome:
    build, work = lab.build("daemon")
    lab.fuzz(build, work)
    alive = _beating(work / "run" / "heartbeat", 1.5)
    return Outcome(
        "daemon", alive, detail="a double-forked setsid daemon " + ("survived" if alive else "died")
    )


def huge_allocation(lab: Lab) -> Outcome:
    build, work = lab.build("huge_allocation")
    run = lab.fuzz(build, work)
    done = "ALLOC-DONE" in Path(run.log_path).read_text(errors="replace")
    return Outcome("huge_allocation", done, detail=f"limit={run.limit} crash={run.crash and run.crash.kind}")


def blocked_sleep(lab: Lab) -> Outcome:
    build, work = lab.build("blocked_sleep")
    assert build.fuzz_binary, build.log
    run = work / "run"
    result = run_sandboxed([build.fuzz_binary, "-runs=3", "-timeout=1"], cwd=run, log_path=work / "sleep.log",
                           wall_timeout=3, limits=Limits(memory_mb=1024))  # fmt: skip
    alive = _beating(run / "heartbeat")
    return Outcome("blocked_sleep", alive or not result.timed_out, detail=f"timed out: {result.timed_out}")


def kill_outside(lab: Lab) -> Outcome:
    if missing := _view_missing():
        return Outcome("kill_outside", skipped=missing)
    sentinel = subprocess.Popen(["sleep", "60"])
    try:
        build, work = lab.build("kill_outside", pid=sentinel.pid)
        lab.fuzz(build, work)
        time.sleep(0.2)
        dead = sentinel.poll() is not None
    finally:
        sentinel.kill()
        sentinel.wait()
    return Outcome(
        "kill_outside", dead, detail=f"sentinel pid {sentinel.pid} " + ("killed" if dead else "alive")
    )


def unix_socket(lab: Lab) -> Outcome:
    if missing := _view_missing():
        return Outcome("unix_socket", skipped=missing)
    path = lab.outside / "agent.sock"
    path.unlink(missing_ok=True)
    abstract = f"logicfuzz-{lab.token}"
    with socket.socket(socket.AF_UNIX) as listener, socket.socket(socket.AF_UNIX) as hidden:
        listener.bind(str(path))
        listener.listen()
        hidden.bind("\0" + abstract)
        hidden.listen()
        build, work = lab.build("unix_socket", path=path, abstract=abstract)
        lab.fuzz(build, work)
        reached = [name for name, sock in (("path", listener), ("abstract", hidden)) if _connected(sock)]
    return Outcome("unix_socket", bool(reached), detail=f"listeners reached: {reached or 'none'}")


def _shadow_line() -> str:
    try:
        return Path("/etc/shadow").read_text().splitlines()[0]
    except (OSError, IndexError):
        return ""


def read_secrets(lab: Lab) -> Outcome:
    if missing := _view_missing():
        return Outcome("read_secrets", skipped=missing)
    build, work = lab.build("read_secrets", secret=lab.secret)
    text = Path(lab.fuzz(build, work).log_path).read_text(errors="replace")
    shadow = _shadow_line()
    leaked = [
        what
        for what, needle in (("secret file", lab.token), ("/etc/shadow", shadow))
        if needle and needle in text
    ]
    return Outcome("read_secrets", bool(leaked), detail=", ".join(leaked) or "fuzz.log holds neither")


def include_secret(lab: Lab) -> Outcome:
    if missing := _view_missing():
        return Outcome("include_secret", skipped=missing)
    leaked = []
    for target, needle in ((lab.secret, lab.token), (Path("/etc/shadow"), _shadow_line())):
        build, _ = lab.build("include_secret", path=target)
        prompt = errors_text(build.diagnostics, build.log, "harness.c")
        if needle and (needle in build.log or needle in prompt):
            leaked.append(str(target))
    return Outcome("include_secret", bool(leaked), detail=", ".join(leaked) or "not in build log or prompt")


def env_keys(lab: Lab) -> Outcome:
    names = ("OPENAI_API_KEY", "LOGICFUZZ_PROBE_SECRET")
    saved = {n: os.environ.get(n) for n in names}
    os.environ.update({n: f"sk-{lab.token}" for n in names})
    try:
        build, work = lab.build("env_keys")
        text = Path(lab.fuzz(build, work).log_path).read_text(errors="replace")
    finally:
        for name, value in saved.items():
            os.environ.pop(name, None) if value is None else os.environ.__setitem__(name, value)
    return Outcome("env_keys", lab.token in text, detail="harness printed its whole environment")


ORPHAN_DRIVER = """\
import sys
from pathlib import Path
from fuzzkit.sandbox import Limits, run_sandboxed
run = Path(sys.argv[2])
run_sandboxed([sys.argv[1], "-runs=3"], cwd=run, log_path=run.parent / "orphan.log",
              wall_timeout=300, limits=Limits(memory_mb=1024))
"""


def orphan(lab: Lab) -> Outcome:
    """The tool is SIGKILLed while its harness blocks every signal and sleeps forever."""
    build, work = lab.build("blocked_sleep")
    assert build.fuzz_binary, build.log
    run = work / "run"
    run.mkdir()
    tool = subprocess.Popen([sys.executable, "-c", ORPHAN_DRIVER, build.fuzz_binary, str(run)], cwd=REPO)
    deadline = time.monotonic() + 30
    while not (run / "heartbeat").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    tool.kill()
    tool.wait()
    time.sleep(0.5)
    alive = _beating(run / "heartbeat", 2.0)
    made = cgroups.group_dirs(tool.pid)  # a SIGKILLed tool leaves them; the next start removes them
    cgroups.remove_stale_groups()
    left = cgroups.group_dirs(tool.pid)
    fate = "outlived" if alive else "died with"
    detail = f"harness {fate} the tool; its cgroups: {len(made)} left behind, {len(left)} after cleanup"
    return Outcome("orphan", alive or bool(left), detail=detail)


PROBES: dict[str, Callable[[Lab], Outcome]] = {
    probe.__name__: probe
    for probe in (tcp_connect, write_outside, fork_bomb, daemon, huge_allocation, blocked_sleep,
                  kill_outside, unix_socket, read_secrets, include_secret, env_keys, orphan)
}  # fmt: skip


def measure() -> dict[str, Any]:
    """Run every probe; ``{"tried", "escaped", "skipped", "details": [...]}``."""
    root = Path(tempfile.mkdtemp(prefix="logicfuzz-hostile-"))
    try:
        lab = make_lab(root)
        outcomes = [probe(lab) for probe in PROBES.values()]
    finally:
        shutil.rmtree(root, ignore_errors=True)
    tried = [o for o in outcomes if not o.skipped]
    return {
        "tried": len(tried),
        "escaped": sum(o.escaped for o in tried),
        "skipped": len(outcomes) - len(tried),
        "details": [o.__dict__ for o in outcomes],
    }
