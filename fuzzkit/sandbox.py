"""Running untrusted code (harness builds and runs) with limits, isolation and a bounded log.

What each run gets, and how it is enforced:

* **a private view** (:mod:`fuzzkit.bwrap`, bubblewrap): new PID, mount, network, IPC and
  UTS namespaces; only the system directories, the toolchain and the paths the command
  names are visible (read-only), only the run directory is writable; the whole tree dies
  with the tool. Where bwrap is missing or refused, the run falls back to
  :mod:`fuzzkit.isolation` (network namespace, read-only mounts) and one warning line says
  what is missing.
* **an empty environment** (:mod:`fuzzkit.sandbox_env`): never a copy of the tool's, so API
  keys stay outside; ``HOME``, ``TMPDIR`` and ``cwd`` are the run directory.
* **wall time**: the whole process group gets SIGTERM, then SIGKILL two seconds later;
  processes that left the group are killed through the run's control group.
* **CPU time, file size**: ``RLIMIT_CPU`` and ``RLIMIT_FSIZE`` (SIGXCPU / SIGXFSZ).
* **processes**: a ``pids`` control group (:mod:`fuzzkit.cgroups`; groups left by a killed
  tool are removed at the next start). Without one, a non-root user gets ``RLIMIT_NPROC``
  (it counts all of the user's processes, so the cap is the current count plus the
  allowance); root ignores ``RLIMIT_NPROC``, so for root a watchdog counts the session's
  processes every 50 ms and kills the group past the cap.
* **memory**: ASan reserves terabytes of address space, so ``RLIMIT_AS``/``RLIMIT_DATA``
  would stop every ASan binary at start (measured: "ReserveShadowMemoryRange failed"); an
  ASan run is bounded by libFuzzer's ``-rss_limit_mb``/``-malloc_limit_mb`` plus a
  ``memory`` control group as a backstop. ``address_space_mb`` (``RLIMIT_AS``) is for
  binaries without ASan: the coverage replay and the compiler.

Where the kernel refuses a feature, the run goes ahead without it and a warning is logged
once per process; ``SandboxResult.warnings`` lists what was missing. Setting
``LOGICFUZZ_SANDBOX=no-bwrap,no-network,no-writes,no-cgroup`` (any subset) turns features
off, for machines where they misbehave. Timeouts and limits are results, never exceptions.
"""

from __future__ import annotations

import logging
import os
import resource
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fuzzkit import bwrap, isolation
from fuzzkit.cgroups import RunGroup, create_group
from fuzzkit.sandbox_env import step_env
from fuzzkit.sandbox_io import MAX_LOG_BYTES, count_user_processes, kill_group, pump, wait_or_kill

log = logging.getLogger(__name__)
_unavailable: set[str] = set()
_warned: set[str] = set()


@dataclass(frozen=True)
class Limits:
    """What a sandboxed run may use; None means unlimited."""

    cpu_seconds: int | None = None
    file_size_mb: int | None = 512
    processes: int | None = 256
    memory_mb: int | None = None
    address_space_mb: int | None = None
    network: bool = False
    confine_writes: bool = True
    # A /tmp of the sandbox's own that the command may write (empty, bounded, gone with it): for
    # a library's own fuzz targets, which may write their input to /tmp before opening it.
    # Generated harnesses never get it: a write outside their run directory must fail.
    writable_tmp: bool = False


@dataclass
class SandboxResult:
    """How a sandboxed process ended.

    ``exit_code`` is negative for a signal, None if unknown. ``limit`` names the limit that
    stopped it: ``wall-time``, ``cpu-time``, ``file-size``, ``processes``, ``memory``.
    """

    exit_code: int | None
    seconds: float
    timed_out: bool
    limit: str | None = None
    warnings: list[str] = field(default_factory=list)


def _disabled() -> set[str]:
    words = {w.strip() for w in os.environ.get("LOGICFUZZ_SANDBOX", "").split(",")}
    return {w[3:] for w in words if w.startswith("no-")} | _unavailable


def _warn_once(key: str, message: str, warnings: list[str]) -> None:
    warnings.append(message)
    if key not in _warned:
        _warned.add(key)
        log.warning("%s", message)


def _preexec(
    limits: Limits, nproc: int | None, join: list[str], step: Callable[[], None]
) -> Callable[[], None]:
    def apply() -> None:
        def cap(which: int, value: int) -> None:
            try:
                _, hard = resource.getrlimit(which)
                soft = value if hard == resource.RLIM_INFINITY else min(value, hard)
                resource.setrlimit(which, (soft, hard))
            except (ValueError, OSError):
                pass  # best effort: a limit we may not lower is not worth failing the run

        for path in join:  # before the namespaces: a user namespace may not write cgroup files
            with open(path, "w") as handle:
                handle.write(str(os.getpid()))
        isolation.die_with_parent()
        cap(resource.RLIMIT_CORE, 0)
        if limits.cpu_seconds:
            cap(resource.RLIMIT_CPU, limits.cpu_seconds)
        if limits.file_size_mb:
            cap(resource.RLIMIT_FSIZE, limits.file_size_mb * 1024 * 1024)
        if limits.address_space_mb:
            cap(resource.RLIMIT_AS, limits.address_space_mb * 1024 * 1024)
        if nproc:
            cap(resource.RLIMIT_NPROC, nproc)
        step()

    return apply


def _start(
    cmd: Sequence[str],
    cwd: Path,
    env: dict[str, str],
    limits: Limits,
    writable: list[str],
    readable: list[str],
    warnings: list[str],
) -> tuple[subprocess.Popen[bytes], RunGroup | None, bool, bool]:
    """Spawn with every available feature, dropping ones the kernel refuses."""
    while True:
        plan = _plan(cmd, cwd, env, limits, writable, readable, warnings)
        group, nproc, watchdog, viewed = plan.group, plan.nproc, plan.watchdog, plan.viewed
        features, argv = plan.features, plan.argv
        read_fd, write_fd = os.pipe()
        step = isolation.isolate(features, writable, write_fd)
        join = group.join_files() if group else []
        try:
            proc = subprocess.Popen(
                argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, start_new_session=True,
                preexec_fn=_preexec(limits, nproc, join, step),
            )  # fmt: skip
        except subprocess.SubprocessError as exc:  # our preexec step failed (exec errors are OSError)
            os.close(write_fd)
            reason = os.read(read_fd, 4096).decode(errors="replace")
            os.close(read_fd)
            if group:
                group.kill_and_remove()
            failed = isolation.failed_feature(reason)
            if failed is None and join:
                failed = "cgroup"  # joining the group failed before any namespace step
            if failed is None or failed in _unavailable:
                raise
            _unavailable.add(failed)
            _warn_once(failed, f"sandbox: {failed} isolation unavailable ({reason or exc}); "
                       "continuing without it", warnings)  # fmt: skip
            continue
        except OSError:
            os.close(write_fd)
            os.close(read_fd)
            if group:
                group.kill_and_remove()
            raise
        os.close(write_fd)
        os.close(read_fd)
        warnings[:] = list(dict.fromkeys(warnings))
        return proc, group, bool(watchdog), viewed


@dataclass
class _Plan:
    """How one spawn attempt isolates its command (see :func:`_plan`)."""

    argv: list[str]
    group: RunGroup | None
    nproc: int | None
    watchdog: int | None
    features: frozenset[str]
    viewed: bool


def _plan(cmd: Sequence[str], cwd: Path, env: dict[str, str], limits: Limits, writable: list[str],
          readable: list[str], warnings: list[str]) -> _Plan:
    """Every isolation feature not known to be unavailable, with one warning per missing one."""
    off = _disabled()
    viewed = _use_bwrap(off, warnings)
    group = None if "cgroup" in off else create_group(limits.processes, limits.memory_mb)
    missing = {"pids"} if limits.processes else set()
    missing -= group.limited if group else set()
    nproc = watchdog = None
    if missing and os.geteuid() != 0:
        nproc = count_user_processes() + int(limits.processes or 0)
    elif missing:
        watchdog = limits.processes
    wanted = {isolation.NETWORK} if not limits.network else set()
    wanted |= {isolation.WRITES} if limits.confine_writes else set()
    features = frozenset(wanted - off)
    for feature in sorted(wanted - features):
        _warn_once(feature, f"sandbox: running without {feature} isolation", warnings)
    argv = list(cmd)
    if viewed:  # bwrap gives both features (and more) itself
        argv = bwrap.wrap(cmd, cwd=str(cwd), env=env, writable=writable, readable=readable,
                          network=isolation.NETWORK not in features,
                          view=isolation.WRITES in features, writable_tmp=limits.writable_tmp)  # fmt: skip
        features = frozenset()
    if watchdog:
        _warn_once("watchdog", "sandbox: no pids cgroup; process count enforced by polling", warnings)
    if limits.memory_mb and not (group and "memory" in group.limited):
        _warn_once(
            "memory", "sandbox: no memory cgroup; memory is bounded by the run's own limits", warnings
        )
    return _Plan(argv, group, nproc, watchdog, features, viewed)


def _use_bwrap(off: set[str], warnings: list[str]) -> bool:
    """Whether runs go through bwrap; if not, one warning naming what is missing."""
    reason = "turned off by LOGICFUZZ_SANDBOX=no-bwrap" if "bwrap" in off else bwrap.problem()
    if reason is None:
        return True
    _warn_once("bwrap", f"sandbox: {reason}; running without PID/IPC/UTS namespaces and without a "
               "private filesystem view (files and sockets outside the run directory stay reachable); "
               "install bubblewrap or allow user namespaces", warnings)  # fmt: skip
    return False


def run_sandboxed(
    cmd: Sequence[str],
    *,
    cwd: Path,
    log_path: Path,
    wall_timeout: float,
    limits: Limits = Limits(),  # noqa: B008 - frozen dataclass, safe as a default
    env: dict[str, str] | None = None,
    on_line: Callable[[float, str], None] | None = None,
    append: bool = False,
    max_log_bytes: int = MAX_LOG_BYTES,
    writable: Sequence[Path] = (),
    readable: Sequence[Path] = (),
) -> SandboxResult:
    """Run ``cmd`` in its own session under ``limits``, writing stdout+stderr to ``log_path``.

    Args:
        cmd: The command.
        cwd: Working directory; also ``TMPDIR`` and (with ``confine_writes``) the one
            directory the command may write to.
        log_path: Where the combined output goes (written by this process, so it may lie
            outside ``cwd``). The log keeps the first ``max_log_bytes`` and the last lines.
        wall_timeout: Seconds before the whole group is killed.
        limits: Resource limits and isolation for the child.
        env: Environment (default: :func:`fuzzkit.sandbox_env.step_env`, never this
            process's); ``TMPDIR`` and ``HOME`` are set to ``cwd``.
        on_line: Called from a reader thread with (seconds since start, line) per line.
        append: Append to ``log_path`` instead of replacing it.
        max_log_bytes: Output kept from the start; after that only the last lines are kept.
        writable: More directories the command may write to.
        readable: More files or directories the command may read (the program and every
            absolute path in ``cmd`` are readable anyway).
    """
    cwd = Path(cwd).resolve()
    dirs = [str(cwd), *(str(Path(d).resolve()) for d in writable)]
    for directory in dirs:
        os.makedirs(directory, exist_ok=True)
    child_env = {**(step_env() if env is None else env), "TMPDIR": str(cwd), "HOME": str(cwd)}
    extra = [str(Path(p).resolve()) for p in readable]
    warnings: list[str] = []
    start = time.monotonic()
    proc, group, watchdog, viewed = _start(cmd, cwd, child_env, limits, dirs, extra, warnings)
    assert proc.stdout is not None
    reader = threading.Thread(
        target=pump, args=(proc.stdout, log_path, start, on_line, append, max_log_bytes), daemon=True
    )
    reader.start()
    timed_out, limit = wait_or_kill(proc, wall_timeout, limits.processes if watchdog else None)
    seconds = time.monotonic() - start
    # Leftover children (a symbolizer, a forked helper) would hold the pipe open.
    kill_group(proc.pid, signal.SIGKILL)
    if group:
        limit = limit or group.hit()
        group.kill_and_remove()
    reader.join(timeout=10)
    code = bwrap.exit_code(proc.returncode) if viewed else proc.returncode
    if limit is None and code is not None:
        limit = {-signal.SIGXCPU: "cpu-time", -signal.SIGXFSZ: "file-size"}.get(code)
    return SandboxResult(code, round(seconds, 3), timed_out, "wall-time" if timed_out else limit, warnings)
