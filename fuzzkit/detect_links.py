"""The system libraries a configured build links against, as the build system found them.

A library that uses an optional dependency when the machine has it compiles against its
headers; its archive then needs ``-lfoo`` at link time. CMake records what it found in
``CMakeCache.txt`` (``*_LIBRARY:FILEPATH=``), autotools in the generated Makefiles
(``LIBS = ...``, ``FOO_LIBS = ...``). Only flags that resolve on this machine are kept.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

from fuzzkit.tools import tool

_CACHE_LIB = re.compile(
    r"^\w*_LIBRAR(?:Y|IES)(?:_RELEASE)?:FILEPATH=(?P<path>/\S+\.(?:so|a)(?:\.[\d.]+)?)$", re.M)
_MAKE_LIBS = re.compile(r"^\w*LIBS\s*=\s*(?P<flags>.*)$", re.M)
_MAKE_INCLUDE = re.compile(r"^-?include\s+(?P<files>[^$\n]+)$", re.M)


def cmake_link_flags(build_dir: Path) -> list[str]:
    """Libraries CMake found for the project (absolute paths), from its cache."""
    cache = build_dir / "CMakeCache.txt"
    if not cache.is_file():
        return []
    found = [m["path"] for m in _CACHE_LIB.finditer(cache.read_text(errors="replace"))]
    return _resolving([p for p in dict.fromkeys(found) if Path(p).exists()])


def make_link_flags(tree: Path) -> list[str]:
    """``-l`` flags of the ``LIBS``-style variables of the generated top-level Makefile.

    The files it includes by a plain name count too: a configure step may write the variables
    into one of them (``include config.make``) rather than into the Makefile itself.
    """
    makefile = tree / "Makefile"
    if not makefile.is_file():
        return []
    text = makefile.read_text(errors="replace")
    included = [tree / n for m in _MAKE_INCLUDE.finditer(text) for n in m["files"].split()]
    text += "".join("\n" + f.read_text(errors="replace") for f in included if f.is_file())
    flags = [f for m in _MAKE_LIBS.finditer(text)
             for f in m["flags"].split() if re.fullmatch(r"-l[\w+.-]+", f)]
    return _resolving(list(dict.fromkeys(flags)))


def _resolving(flags: list[str]) -> list[str]:
    """The flags an empty program links with (one at a time: a missing one drops alone)."""
    kept = []
    with tempfile.TemporaryDirectory() as tmp:
        main = Path(tmp) / "m.c"
        main.write_text("int main(void) { return 0; }\n")
        for flag in flags:
            out = subprocess.run([tool("clang"), str(main), flag, "-o", str(Path(tmp) / "m")],
                                 capture_output=True, check=False, timeout=60)
            if out.returncode == 0:
                kept.append(flag)
    return kept
