"""Kernel namespaces for untrusted children: no network, and writes only inside chosen directories.

Both are set up in the child between ``fork`` and ``exec`` (a ``preexec_fn``):

* **network**: a new network namespace holds only a loopback interface that is down, so
  nothing can be reached, not even this machine's own ports.
* **writes**: a new mount namespace in which every mount is made read-only
  (``mount_setattr(AT_RECURSIVE, MOUNT_ATTR_RDONLY)``, Linux 5.12+) except bind mounts of
  the writable directories, so ``fopen("/var/x", "w")`` or ``../x`` fails with ``EROFS``.
  Device nodes such as ``/dev/null`` stay writable: writing to a device does not modify
  the read-only mount.

Root may create these namespaces directly; other users create a user namespace first
(``CLONE_NEWUSER``), which most distributions allow. Where the kernel refuses, the child
writes which feature failed to a pipe (Python does not pass a ``preexec_fn``'s exception
text to the parent), and :mod:`fuzzkit.sandbox` logs a warning and runs without it (cwd and
``TMPDIR`` then still point into the run directory, but nothing enforces it).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
from collections.abc import Callable, Sequence

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
_MS_BIND = 0x1000
_MS_REC = 0x4000
_MS_PRIVATE = 1 << 18
_AT_FDCWD = -100
_AT_RECURSIVE = 0x8000
_MOUNT_ATTR_RDONLY = 0x1
# mount_setattr has the same number in the x86_64 and the generic (arm64, riscv) tables.
_NR_MOUNT_SETATTR = 442
_PR_SET_PDEATHSIG = 1

NETWORK = "network"
WRITES = "writes"
_PREFIX = "isolation-failed:"


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


_libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)


class IsolationError(OSError):
    """Raised in the child when a namespace step fails; names the feature that failed."""

    def __init__(self, feature: str, step: str, errno: int) -> None:
        super().__init__(errno, f"{_PREFIX}{feature}: {step}: {os.strerror(errno)}")
        self.feature = feature


def die_with_parent() -> None:
    """Child side: have the kernel SIGKILL this process when the tool dies.

    This covers the direct child only; with bwrap, ``--die-with-parent`` and the PID
    namespace take the whole tree down.
    """
    _libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)


def failed_feature(text: str) -> str | None:
    """Which feature the child reported as failed (``network``/``writes``), or None."""
    if _PREFIX not in text:
        return None
    return text.split(_PREFIX, 1)[1].split(":", 1)[0].strip()


def _check(result: int, feature: str, step: str) -> None:
    if result != 0:
        raise IsolationError(feature, step, ctypes.get_errno())


def _setattr(path: str, attr_set: int, attr_clr: int) -> None:
    attr = _MountAttr(attr_set, attr_clr, 0, 0)
    result = _libc.syscall(
        _NR_MOUNT_SETATTR, _AT_FDCWD, path.encode(), _AT_RECURSIVE, ctypes.byref(attr), ctypes.sizeof(attr)
    )
    _check(result, WRITES, f"mount_setattr {path}")


def isolate(features: frozenset[str], writable: Sequence[str], report_fd: int) -> Callable[[], None]:
    """A child-side step that applies ``features`` (``network``, ``writes``).

    Args:
        features: Which isolations to apply.
        writable: Absolute directories that stay writable under ``writes``; the child's
            working directory is re-entered afterwards so it refers to the writable mount.
        report_fd: Where the child writes the failure (read it with :func:`failed_feature`).

    Returns:
        A function for the child to call before ``exec``; it raises :class:`IsolationError`.
    """
    dirs = [os.path.abspath(d).encode() for d in writable]

    def apply() -> None:
        try:
            _apply(features, dirs)
        except IsolationError as exc:
            os.write(report_fd, str(exc).encode())
            raise

    return apply


def _apply(features: frozenset[str], dirs: list[bytes]) -> None:
    if not features:
        return
    flags = (CLONE_NEWNET if NETWORK in features else 0) | (CLONE_NEWNS if WRITES in features else 0)
    if os.geteuid() != 0:
        flags |= CLONE_NEWUSER
    _check(_libc.unshare(flags), NETWORK if NETWORK in features else WRITES, "unshare")
    if WRITES not in features:
        return
    cwd = os.getcwd()
    # Private propagation keeps our mounts from leaking back into the parent's namespace.
    _check(_libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None), WRITES, "make / private")
    for path in dirs:
        _check(_libc.mount(path, path, None, _MS_BIND | _MS_REC, None), WRITES, "bind writable dir")
    _setattr("/", _MOUNT_ATTR_RDONLY, 0)
    for path in dirs:
        _setattr(path.decode(), 0, _MOUNT_ATTR_RDONLY)
    # The inherited cwd still points at the directory under the read-only mount.
    os.chdir(cwd)
