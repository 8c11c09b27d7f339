"""A throwaway control group per sandboxed run: a process cap and an RSS cap that ASan tolerates.

``RLIMIT_NPROC`` counts every process of the user and root ignores it entirely, so the
process cap uses the ``pids`` controller instead. ``RLIMIT_AS``/``RLIMIT_DATA`` cannot bound
an ASan binary (it reserves about 16 TB of shadow address space at start), so the memory
cap uses the ``memory`` controller, which counts resident pages only.

Both cgroup v1 (one hierarchy per controller) and v2 (one unified hierarchy) are handled.
A group can only be created where the hierarchy is writable (root, or a delegated subtree);
v2 also needs the controller enabled for children of our own group. :func:`create_group`
returns None otherwise, and the caller falls back (see :mod:`fuzzkit.sandbox`).
"""

from __future__ import annotations

import itertools
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

_counter = itertools.count()
_PREFIX = "logicfuzz-"
_swept = False


def _own_groups() -> dict[str, str]:
    """Controller name (``pids``, ``memory``; ``""`` for v2) to our group's path."""
    groups: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            groups[name] = path
    return groups


def _mounts() -> dict[str, Path]:
    """Controller name (``""`` for the v2 hierarchy) to its mount point."""
    found: dict[str, Path] = {}
    for line in Path("/proc/self/mounts").read_text().splitlines():
        parts = line.split()
        if len(parts) < 4:
            continue
        if parts[2] == "cgroup2":
            found.setdefault("", Path(parts[1]))
        elif parts[2] == "cgroup":
            for option in parts[3].split(","):
                found.setdefault(option, Path(parts[1]))
    return found


def _parent_dir(controller: str) -> Path | None:
    """Where a child group limiting ``controller`` can be made, or None."""
    try:
        own, mounts = _own_groups(), _mounts()
    except OSError:
        return None
    if controller in own and controller in mounts:
        parent = mounts[controller] / own[controller].lstrip("/")
    elif "" in own and "" in mounts:
        parent = mounts[""] / own[""].lstrip("/")
        try:
            enabled = (parent / "cgroup.subtree_control").read_text().split()
        except OSError:
            return None
        if controller not in enabled:
            return None
    else:
        return None
    return parent if os.access(parent, os.W_OK) else None


@dataclass
class RunGroup:
    """The groups one sandboxed run lives in (one per hierarchy)."""

    dirs: list[Path] = field(default_factory=list)
    limited: set[str] = field(default_factory=set)

    def join_files(self) -> list[str]:
        """``cgroup.procs`` files the child writes its pid to before ``exec``."""
        return [str(d / "cgroup.procs") for d in self.dirs]

    def _read(self, name: str) -> str:
        for directory in self.dirs:
            try:
                return (directory / name).read_text()
            except OSError:
                continue
        return ""

    def hit(self) -> str | None:
        """``processes`` or ``memory`` when the kernel enforced that cap, else None."""
        if "memory" in self.limited:
            events = dict(_pairs(self._read("memory.events") or self._read("memory.oom_control")))
            if int(events.get("oom_kill", 0)) > 0:
                return "memory"
        if "pids" in self.limited and int(dict(_pairs(self._read("pids.events"))).get("max", 0)) > 0:
            return "processes"
        return None

    def pids(self) -> list[int]:
        """Every process still in the group."""
        found: set[int] = set()
        for directory in self.dirs:
            try:
                found.update(int(p) for p in (directory / "cgroup.procs").read_text().split())
            except (OSError, ValueError):
                continue
        return sorted(found)

    def kill_and_remove(self, deadline: float = 5.0) -> None:
        """SIGKILL everything in the group (also processes that left the process group)."""
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            alive = self.pids()
            if not alive:
                break
            for pid in alive:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.02)
        for directory in self.dirs:
            for _ in range(50):
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)  # a killed process leaves the group a moment later


def _pairs(text: str) -> list[tuple[str, str]]:
    return [(k, v) for k, _, v in (line.partition(" ") for line in text.splitlines()) if v]


def _owner_alive(name: str) -> bool:
    """Whether the tool process that made group ``logicfuzz-<pid>-<n>`` still runs."""
    pid = name[len(_PREFIX) :].split("-", 1)[0]
    if not pid.isdigit():
        return True  # not ours to judge
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def group_dirs(owner: int) -> list[Path]:
    """Directories of the groups tool process ``owner`` made that still exist."""
    parents = {d for d in (_parent_dir(c) for c in ("pids", "memory")) if d is not None}
    return sorted(d for parent in parents for d in parent.glob(f"{_PREFIX}{owner}-*") if d.is_dir())


def remove_stale_groups() -> list[Path]:
    """Kill what is left in, and remove, groups whose owning tool process is dead.

    A tool killed with SIGKILL cannot remove its groups; the next start does. Groups of
    live tool processes (other runs on this machine) are left alone. Returns what was removed.
    """
    removed: list[Path] = []
    parents = {d for d in (_parent_dir(c) for c in ("pids", "memory")) if d is not None}
    for parent in parents:
        try:
            stale = [d for d in parent.iterdir() if d.name.startswith(_PREFIX) and not _owner_alive(d.name)]
        except OSError:
            continue
        for directory in stale:
            group = RunGroup(dirs=[directory])
            group.kill_and_remove()
            if not directory.exists():
                removed.append(directory)
    return removed


def create_group(processes: int | None, memory_mb: int | None) -> RunGroup | None:
    """A fresh group capping processes and resident memory, or None if none can be made.

    Only the caps that can be enforced are set; :attr:`RunGroup.limited` says which. The
    first call in a process also removes groups left by dead tool processes.
    """
    global _swept
    if not _swept:
        _swept = True
        remove_stale_groups()
    wanted = {"pids": processes, "memory": memory_mb}
    group = RunGroup()
    made: dict[Path, Path] = {}
    name = f"{_PREFIX}{os.getpid()}-{next(_counter)}"
    for controller, value in wanted.items():
        if not value:
            continue
        parent = _parent_dir(controller)
        if parent is None:
            continue
        directory = made.get(parent)
        try:
            if directory is None:
                directory = parent / name
                directory.mkdir()
                made[parent] = directory
                group.dirs.append(directory)
            if controller == "pids":
                (directory / "pids.max").write_text(str(value))
            else:
                limit = str(value * 1024 * 1024)
                target = "memory.max" if (directory / "memory.max").exists() else "memory.limit_in_bytes"
                (directory / target).write_text(limit)
            group.limited.add(controller)
        except OSError:
            continue
    if not group.dirs:
        return None
    return group
