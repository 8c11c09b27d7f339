"""Finding a sandboxed run's processes from outside, for the sandbox and security tests.

Inside a PID namespace a harness sees its own numbering (its first child is pid 3), so the
pids it prints mean nothing here. A process is recognized by its working directory instead:
every sandboxed command starts in its run directory, and its children inherit it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path


def alive(pid: int) -> bool:
    """Whether ``pid`` (a pid of this namespace) exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def processes_in(directory: Path) -> list[int]:
    """Live processes whose working directory is ``directory`` or below it."""
    root = str(Path(directory).resolve())
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cwd = os.readlink(f"/proc/{entry.name}/cwd")
        except OSError:
            continue
        if (cwd == root or cwd.startswith(root + "/")) and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def wait_gone(directory: Path, seconds: float = 5.0) -> list[int]:
    """Wait until no process works in ``directory``; the ones still there after ``seconds``."""
    deadline = time.monotonic() + seconds
    left = processes_in(directory)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = processes_in(directory)
    return left
