"""The ``sources`` detector: a library that builds from its ``.c`` files and a few ``-D`` macros.

Many small libraries need nothing else; some also need version macros, which
this detector reads from ``configure.ac`` (``AC_DEFINE`` with ``m4_define`` values) or
from CMake ``add_definitions``/``add_compile_definitions``. A candidate set is accepted
only when every file passes ``clang -fsyntax-only``; a file failing only on a header that
exists nowhere in the tree and has no template (``windows.h``) is a platform file and is
dropped, while a header with a template (``config.h.in``) means a configure step is needed,
and this detector gives way to the build-system ones.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from fuzzkit.detect_tree import INCLUDE as _INCLUDE
from fuzzkit.detect_tree import candidate_sources, generated_headers, public_headers, read_text, walk
from fuzzkit.errors import ToolchainError
from fuzzkit.library import BuildRecipe
from fuzzkit.tools import tool

_MISSING = re.compile(r"fatal error: '([^']+)' file not found")
_INCLUDE_C = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+\.c)[>"]', re.M)
# An include guarded by the configure step's own switch is optional by design.
_CONDITIONAL_INCLUDE = re.compile(
    r"^\s*#\s*if(?:def)?\s*[(\s]*(?:defined\s*\(?\s*)?HAVE_CONFIG_H.*\n(?:\s*#\s*include.*\n)+", re.M
)
_M4_DEFINE = re.compile(r"m4_define\(\s*\[?(\w+)\]?\s*,\s*\[?([^\])]*)\]?\s*\)")
_AC_DEFINE = re.compile(r"AC_DEFINE\(\s*\[?(\w+)\]?\s*,\s*\[?([^\],)]*)\]?")
_CMAKE_DEFS = re.compile(r"add_(?:compile_)?definitions\s*\(([^)]*)\)", re.I)


def harvested_defines(root: Path) -> list[str]:
    """``NAME=VALUE`` macros the build files define unconditionally with literal values."""
    defines: dict[str, str] = {}
    configure_ac = read_text(root / "configure.ac") or read_text(root / "configure.in")
    m4 = dict(_M4_DEFINE.findall(configure_ac))
    for name, raw in _AC_DEFINE.findall(configure_ac):
        value = raw.strip()
        for key, sub in m4.items():
            value = re.sub(rf"\b{key}\b", sub.strip(), value)
        if "$" in value or name.startswith(("HAVE_", "USE_", "ENABLE_")) or not value:
            continue  # values computed by configure, or feature switches it tests for
        if not re.fullmatch(r"-?\d+|\"[^\"]*\"", value):
            value = f'"{value}"' if re.fullmatch(r"[\w.+-]+", value) else ""
        if value:
            defines.setdefault(name, value)
    for block in _CMAKE_DEFS.findall(read_text(root / "CMakeLists.txt")):
        for token in block.split():
            token = token.removeprefix("-D")
            if re.fullmatch(r"\w+(=[\w.]+)?", token):
                name, _, value = token.partition("=")
                defines.setdefault(name, value or "1")
    return [f"{k}={v}" for k, v in defines.items()]


def object_symbols(source: Path, flags: list[str], cwd: Path, obj: Path) -> tuple[str, set[str]]:
    """Compile ``source`` quickly (``-O0``, no warnings) and list its global definitions.

    Returns:
        (compiler errors, ``""`` on success; the global symbols the object defines).
    """
    cmd = [tool("clang"), "-c", "-O0", "-w", *flags, str(source), "-o", str(obj)]
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        return proc.stderr or "compilation failed", set()
    nm = subprocess.run([tool("llvm-nm"), "--defined-only", "-g", str(obj)], capture_output=True, text=True)
    return "", {f[-1] for f in (ln.split() for ln in nm.stdout.splitlines()) if len(f) >= 3}


def is_program(source: Path, flags: list[str], cwd: Path) -> bool:
    """Whether ``source`` compiled with ``flags`` defines ``main`` or a fuzz entry (not library)."""
    with tempfile.TemporaryDirectory() as tmp:
        _, symbols = object_symbols(source, flags, cwd, Path(tmp, "probe.o"))
    return bool(symbols & {"main", "LLVMFuzzerTestOneInput"})


def _include_dirs(root: Path, sources: list[Path]) -> list[str]:
    dirs = ["."]
    if (root / "include").is_dir():
        dirs.append("include")
    for parent in sorted({p.parent for p in sources}):
        rel = parent.relative_to(root).as_posix()
        if rel not in dirs:
            dirs.append(rel)
    return dirs


def _header_dirs(root: Path, failed: list[str], incs: list[str]) -> list[str]:
    """Directories of the tree (outside tests, docs, examples) holding headers the compiles missed.

    A library may keep its headers in a folder of their own (``src/headers``, ``inc``) that no
    source sits in; each missing name is looked up there, the shallowest match first.
    """
    names = {Path(m).name for err in failed for m in _MISSING.findall(err) if "/" not in m}
    found: list[str] = []
    for header in sorted(walk(root, (".h",)), key=lambda h: (len(h.parts), h.as_posix())):
        rel = header.parent.relative_to(root).as_posix()
        if header.name in names and rel not in incs and rel not in found:
            found.append(rel)
            names.discard(header.name)
    return found


def _compile_finding_headers(
    root: Path, sources: list[Path], incs: list[str], defines: list[str]
) -> dict[Path, tuple[str, set[str]]]:
    """:func:`_compile_all`, adding to ``incs`` the tree's folders that hold headers a compile missed."""
    results = _compile_all(root, sources, incs, defines)
    for _ in range(2):  # a header found may include another, elsewhere
        more = _header_dirs(root, [err for err, _ in results.values() if err], incs)
        if not more:
            break
        incs += more
        results = {**results, **_compile_all(root, [s for s, (e, _) in results.items() if e], incs, defines)}
    return results


def _compile_all(
    root: Path, sources: list[Path], incs: list[str], defines: list[str]
) -> dict[Path, tuple[str, set[str]]]:
    flags = [f"-I{root / d}" for d in incs] + [f"-D{d}" for d in defines]
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(max_workers=2) as pool:
        objs = [Path(tmp, f"{i}.o") for i in range(len(sources))]
        results = list(
            pool.map(
                lambda pair: object_symbols(pair[0], flags, root, pair[1]), zip(sources, objs, strict=True)
            )
        )
    return dict(zip(sources, results, strict=True))


def _needs_configure(root: Path, sources: list[Path]) -> str:
    """A generated header (one with a template) that a source includes unconditionally."""
    generated = generated_headers(root) - {p.name for p in root.rglob("*.h")}
    for source in sources:
        text = _CONDITIONAL_INCLUDE.sub("", read_text(source))
        for name in _INCLUDE.findall(text):
            if Path(name).name in generated:
                return (
                    f"{source.relative_to(root).as_posix()} includes {name}, which a configure step generates"
                )
    return ""


def _drop_fragments(root: Path, symbols: dict[Path, set[str]], notes: list[str]) -> list[Path]:
    """Leave out files that define nothing global, and files another file ``#include``s."""
    kept = [s for s, syms in symbols.items() if syms]
    notes += [
        f"dropped {s.relative_to(root).as_posix()}: defines no global symbol"
        for s in symbols
        if not symbols[s]
    ]
    owners: dict[str, list[Path]] = {}
    for source in kept:
        for symbol in symbols[source]:
            owners.setdefault(symbol, []).append(source)
    dropped: set[Path] = set()
    for symbol, files in owners.items():
        if len(files) < 2:
            continue
        for a in files:
            includes = set(_INCLUDE_C.findall(read_text(a)))
            for b in files:
                if b != a and any(Path(i).name == b.name for i in includes):
                    dropped.add(b)
        if len([f for f in files if f not in dropped]) > 1:
            names = ", ".join(f.relative_to(root).as_posix() for f in files)
            raise ToolchainError(f"{names} all define {symbol} (alternative implementations)")
    notes += [
        f"dropped {s.relative_to(root).as_posix()}: #included by another source" for s in sorted(dropped)
    ]
    return [s for s in kept if s not in dropped]


def detect_sources(root: Path) -> tuple[BuildRecipe, list[str]]:
    """A recipe compiling the tree's library ``.c`` files directly, and notes on what was dropped.

    Raises:
        ToolchainError: No candidate files, or they do not compile without a configure step.
    """
    sources = candidate_sources(root)
    if not sources:
        raise ToolchainError(f"no library .c files at the top of {root} or in src/, lib/")
    reason = _needs_configure(root, sources)
    if reason:
        raise ToolchainError(reason)
    incs = _include_dirs(root, sources)
    defines: list[str] = []
    results = _compile_finding_headers(root, sources, incs, defines)
    failing = [s for s, (err, _) in results.items() if err]
    harvested = harvested_defines(root) if failing else []
    if harvested:
        # Only the failing files are retried; macros the others did not need cannot hurt them.
        retry = _compile_all(root, failing, incs, harvested)
        if sum(bool(e) for e, _ in retry.values()) < len(failing):
            results, defines = {**results, **retry}, harvested
    generated = generated_headers(root)
    tree_headers = {p.name for p in root.rglob("*.h")}
    notes: list[str] = []
    failed = {s: err for s, (err, _) in results.items() if err}
    for source, err in failed.items():
        missing = _MISSING.findall(err)
        rel = source.relative_to(root).as_posix()
        if source.suffix == ".S":
            notes.append(f"dropped {rel}: assembly that does not assemble for this machine")
            continue
        if missing and all(Path(m).name in generated for m in missing):
            raise ToolchainError(f"{rel} needs {missing[0]}, which a configure step generates")
        if not missing or any(Path(m).name in tree_headers for m in missing):
            first = next((ln for ln in err.splitlines() if "error" in ln), err.strip()[:200])
            raise ToolchainError(f"{rel} does not compile on its own: {first}")
        notes.append(f"dropped {rel}: needs {missing[0]} (a platform header)")
    if sum(s.suffix != ".S" for s in failed) * 4 > len(sources):
        raise ToolchainError(f"{len(failed)} of {len(sources)} candidate files do not compile")
    symbols = {s: syms for s, (err, syms) in results.items() if not err}
    programs = [s for s, syms in symbols.items() if syms & {"main", "LLVMFuzzerTestOneInput"}]
    kept = _drop_fragments(root, {s: v for s, v in symbols.items() if s not in programs}, notes)
    if not kept:
        raise ToolchainError(f"no candidate .c file under {root} defines library functions")
    return (
        BuildRecipe(
            sources=[s.relative_to(root).as_posix() for s in kept],
            include_dirs=incs,
            defines=defines,
            headers=[h.relative_to(root).as_posix()
                     for h in public_headers(root, (), [root / d for d in incs])],
        ),
        notes,
    )
