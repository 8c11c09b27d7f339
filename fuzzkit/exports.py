"""Which functions a built library defines, and the targets it does not.

A target the library does not define (a typo, a function of a part not built, a macro) can
never link; found only at the harness's link step, it costs every fix round of the target.
Checked once the library is built, before any model call, it costs one ``llvm-nm``.
"""

from __future__ import annotations

import difflib
import functools
import subprocess
from collections.abc import Iterable
from pathlib import Path

from fuzzkit.library import LibraryBuild
from fuzzkit.tools import tool


def defined_functions(lib: LibraryBuild) -> set[str]:
    """Names of the functions the built library defines (``T`` symbols of its archive)."""
    return _kinds(lib, "TW")


def defined_data(lib: LibraryBuild) -> set[str]:
    """Names of the variables the built library defines (data, read-only data, BSS, common)."""
    return _kinds(lib, "DRBCVG")


def _kinds(lib: LibraryBuild, letters: str) -> set[str]:
    archive = Path(lib.cov_archive)
    try:
        stamp = archive.stat().st_mtime_ns
    except OSError:
        return set()
    return {name for name, kind in _defined(str(archive), stamp) if kind in letters}


@functools.lru_cache(maxsize=16)
def _defined(archive: str, _stamp: int) -> frozenset[tuple[str, str]]:
    out = subprocess.run(
        [tool("llvm-nm"), "--defined-only", "-g", archive],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    return frozenset((f[2], f[1]) for f in (line.split() for line in out.splitlines()) if len(f) == 3)


def missing_functions(lib: LibraryBuild, names: Iterable[str], library: str) -> dict[str, str]:
    """For each of ``names`` the library does not define, one line saying so.

    The line names the function and the library and lists close matches when there are
    some. An archive ``llvm-nm`` cannot read yields no verdict (an empty dict): the link
    step still reports a missing function then.

    Args:
        lib: The built library.
        names: Target function names.
        library: The library's name as the user knows it (the benchmark's project).
    """
    defined = defined_functions(lib)
    if not defined:
        return {}
    missing: dict[str, str] = {}
    for name in names:
        if name in defined:
            continue
        close = difflib.get_close_matches(name, sorted(defined), n=3, cutoff=0.6)
        fix = (f"did you mean {', '.join(close)}?" if close else
               "list the functions it defines with `logicfuzz init-benchmark` on the same source")
        missing[name] = (f"function {name} is not defined by the built library {library} "
                         f"(it defines {len(defined)} functions); {fix}")
    return missing
