"""A private filesystem and process view for untrusted steps, built with bubblewrap (``bwrap``).

bubblewrap is the sandbox Flatpak uses; it is kept by distributions and does the namespace
work that would otherwise be hand-written. Each wrapped command gets:

* new PID, mount, network, IPC, UTS (and, where allowed, user and cgroup) namespaces; the
  command is PID 2 under bwrap's init, so ``kill(-1, SIGKILL)`` only reaches the sandbox;
* ``--die-with-parent``: the whole tree gets SIGKILL when the tool dies, even if the harness
  blocks every signal; when the command exits, its init exits and the kernel kills what
  is left (daemons included);
* no capabilities (``--cap-drop ALL``), so root inside cannot remount or ``mknod``;
* a minimal filesystem: the system directories (``/usr``, ``/lib*``, ``/bin``, ``/sbin``, as
  the host has them), the few ``/etc`` files the loader and the toolchain read, the
  toolchain (if installed outside ``/usr``), and whatever the caller names, all read-only;
  the run directory (and the caller's other writable directories) read-write; a fresh
  ``/proc``, a minimal ``/dev`` and an empty read-only ``/tmp`` (``TMPDIR`` is the run
  directory). No home, no caches, no other run
  directories, no ``/etc/shadow``, no sockets outside the run directory.

:func:`problem` probes once per process whether bwrap works here (it needs user namespaces
when the tool does not run as root); :mod:`fuzzkit.sandbox` falls back to
:mod:`fuzzkit.isolation` when it does not.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from fuzzkit.errors import ToolchainError
from fuzzkit.tools import tool

TMP_BYTES = 256 << 20  # the sandbox's /tmp (a tmpfs: memory, charged to its cgroup)
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# What the dynamic loader, the compiler driver and configure scripts read; not /etc as a whole.
ETC_FILES = (
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
    "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/localtime",
)  # fmt: skip
_TOOLS = ("clang", "clang++", "llvm-symbolizer", "llvm-profdata", "llvm-cov")
# Never bound from a command line: the sandbox gets its own /proc and /dev, and no /sys.
_HOST_ONLY = ("/proc", "/sys", "/dev")
_PATH_FLAGS = ("-I", "-L", "-isystem", "-iquote", "-include", "-B", "--sysroot=")


def _system(path: str) -> bool:
    return any(path == d or path.startswith(d + "/") for d in SYSTEM_DIRS)


@functools.cache
def _toolchain_dirs() -> tuple[str, ...]:
    """Install prefixes of the LLVM tools that live outside the system directories."""
    found: list[str] = []
    for name in _TOOLS:
        try:
            real = os.path.realpath(tool(name))
        except ToolchainError:
            continue
        if not _system(real):
            prefix = str(Path(real).parent.parent)
            if prefix not in found:
                found.append(prefix)
    return tuple(found)


def _base(view: bool) -> list[str]:
    args = ["--unshare-all", "--die-with-parent", "--cap-drop", "ALL", "--hostname", "sandbox"]
    if not view:  # LOGICFUZZ_SANDBOX=no-writes: the host's files as they are, writable
        return [*args, "--bind", "/", "/", "--proc", "/proc", "--dev", "/dev"]
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for path in ETC_FILES:
        args += ["--ro-bind-try", path, path]
    return [*args, "--proc", "/proc", "--dev", "/dev", "--size", str(TMP_BYTES), "--tmpfs", "/tmp"]


def named_paths(cmd: Sequence[str]) -> list[str]:
    """Absolute paths that exist and that ``cmd`` names (``/x``, ``-I/x``, ``-dict=/x``)."""
    found: list[str] = []
    for arg in cmd:
        candidates = [arg]
        candidates += [arg[len(flag) :] for flag in _PATH_FLAGS if arg.startswith(flag)]
        if "=" in arg:
            candidates.append(arg.split("=", 1)[1])
        for text in candidates:
            path = os.path.normpath(text) if text.startswith("/") and "\0" not in text else ""
            if path and path != "/" and not path.startswith(_HOST_ONLY) and os.path.exists(path):
                found.append(path)
    return found


def _executable(cmd: Sequence[str], env: dict[str, str]) -> list[str]:
    """The program ``cmd`` runs, when it lies outside the system directories."""
    program = cmd[0] if "/" in cmd[0] else shutil.which(cmd[0], path=env.get("PATH"))
    if not program:
        return []
    program = os.path.abspath(program)
    real = os.path.realpath(program)
    return [p for p in dict.fromkeys((program, real)) if not _system(p)]


def wrap(
    cmd: Sequence[str],
    *,
    cwd: str,
    env: dict[str, str],
    writable: Sequence[str],
    readable: Sequence[str] = (),
    network: bool = False,
    view: bool = True,
    writable_tmp: bool = False,
) -> list[str]:
    """``cmd`` prefixed with the bwrap arguments of the view described in the module doc.

    Args:
        cmd: The command; its program and every existing absolute path it names are visible
            read-only.
        cwd: The working directory (must be among ``writable`` or ``readable``).
        env: The environment the command gets (used to find a program by ``PATH``).
        writable: Directories mounted read-write at the same path.
        readable: More files or directories mounted read-only at the same path.
        network: Keep the host's network namespace.
        view: False to see (and write) the host's whole filesystem.
        writable_tmp: Leave the sandbox's own ``/tmp`` writable (at most :data:`TMP_BYTES`).
    """
    args = ["bwrap", *_base(view)]
    if network:
        args.append("--share-net")
    if view:
        mounts: dict[str, str] = {}
        for path in [*_toolchain_dirs(), *_executable(cmd, env), *named_paths(cmd), *readable]:
            path = os.path.abspath(path)
            if not _system(path) and not any(path == w or path.startswith(w + "/") for w in writable):
                mounts[path] = "--ro-bind-try"
        for path in writable:
            mounts[os.path.abspath(path)] = "--bind"
        # Parents first, so a writable run directory inside a read-only tree stays writable.
        for path in sorted(mounts, key=lambda p: (p.count("/"), p)):
            args += [mounts[path], path, path]
        # bwrap's root and /tmp are tmpfs it had to write mount points into; the command may not
        # (but for writable_tmp: that /tmp is the sandbox's own, bounded and gone with it).
        args += [*([] if writable_tmp else ["--remount-ro", "/tmp"]), "--remount-ro", "/"]
    return [*args, "--chdir", cwd, "--", *cmd]


def exit_code(code: int | None) -> int | None:
    """A child's status as ``subprocess`` reports it: bwrap returns 128+N for signal N."""
    if code is not None and 128 < code <= 128 + 64:
        return -(code - 128)
    return code


@functools.cache
def problem() -> str | None:
    """Why bwrap cannot be used on this machine, or None when it works (probed once)."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed"
    env = {"PATH": "/usr/bin:/bin"}
    probe = wrap(["true"], cwd="/", env=env, writable=[])
    try:
        proc = subprocess.run(probe, capture_output=True, text=True, timeout=30, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap did not start ({exc})"
    if proc.returncode != 0:
        reason = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        return f"bwrap refused ({reason}); user namespaces may be disabled"
    return None
