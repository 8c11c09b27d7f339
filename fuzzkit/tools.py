"""Locating clang and the LLVM tools, which may carry a version suffix (``clang-14``)."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess

from fuzzkit.errors import ToolchainError

_INSTALL_HINT = (
    "install clang with libFuzzer and the LLVM tools, e.g. on Debian/Ubuntu: "
    "`apt-get install clang llvm libclang-rt-14-dev` (any clang >= 11 works), "
    "or set LOGICFUZZ_CLANG to the clang binary to use"
)


@functools.cache
def clang_version() -> str:
    """The full first line of ``clang --version`` (part of every build's cache key)."""
    out = subprocess.run([tool("clang"), "--version"], capture_output=True, text=True, check=False).stdout
    return out.splitlines()[0].strip() if out else "unknown"


@functools.cache
def _clang_major() -> str | None:
    match = re.search(r"version (\d+)\.", clang_version())
    return match.group(1) if match else None


@functools.cache
def tool(name: str) -> str:
    """The path of an LLVM tool, preferring one that matches clang's major version.

    Args:
        name: ``clang``, ``clang++``, ``llvm-ar``, ``llvm-cov``, ``llvm-profdata``
            or ``llvm-symbolizer``.

    Raises:
        ToolchainError: The tool is not installed.
    """
    candidates: list[str] = []
    if name in ("clang", "clang++") and os.environ.get("LOGICFUZZ_CLANG"):
        override = os.environ["LOGICFUZZ_CLANG"]
        candidates.append(override if name == "clang" else override.replace("clang", "clang++"))
    if name not in ("clang", "clang++"):
        major = _clang_major()
        if major:
            # A mismatched llvm-profdata cannot read the profiles clang's runtime writes.
            candidates.append(f"{name}-{major}")
    candidates.append(name)
    candidates += [f"{name}-{v}" for v in range(20, 10, -1)]
    for candidate in candidates:
        found = shutil.which(candidate)
        if found:
            return found
    raise ToolchainError(f"`{name}` was not found on PATH", _INSTALL_HINT)


@functools.cache
def resource_include_dir() -> str | None:
    """A directory holding compiler builtin headers (``stddef.h``), or None.

    libclang without it silently treats ``size_t`` as ``int``.
    """
    commands = [["gcc", "-print-file-name=include"]]
    try:
        commands.insert(0, [tool("clang"), "-print-resource-dir"])
    except ToolchainError:
        pass  # header parsing only needs some compiler's builtin headers
    for cmd in commands:
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, check=False).stdout.strip()
        except OSError:
            continue
        for candidate in (os.path.join(out, "include"), out):
            if out and os.path.isfile(os.path.join(candidate, "stddef.h")):
                return candidate
    return None
