"""Reading a C source tree: which files are library code, which headers are public.

Shared by every detector in :mod:`fuzzkit.detect`. Everything here reads files only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from fuzzkit.vocabulary import c_words

# Directory names that hold no library code (matched case-insensitively, whole segment).
SKIP_DIRS = frozenset(
    """test tests testing testsuite unittest unittests t example examples sample samples demo
    demos fuzz fuzzing fuzzer fuzzers ossfuzz oss-fuzz bench benchmark benchmarks perf doc docs
    contrib tool tools util utils utilities programs apps app bin cmd cli scripts debian .pc .git
    .github build cmake win32 windows msvc vms amiga os2 os400 msdos nintendods qnx watcom old
    android ios macos third_party thirdparty vendor external deps node_modules regress regression
    regressions""".split()
)
# Where library sources live besides the top directory (searched recursively).
SOURCE_DIRS = ("src", "lib", "source", "sources", "library", "libsrc")
PRIVATE_NAME = re.compile(r"(private|internal|[-_]int$|^config$|compat|_impl$|guts|^test)", re.I)
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)  # the name an #include names
_FUZZ_ENTRY = re.compile(r"LLVMFuzzerTestOneInput\s*\([^;{)]*\)\s*\{")
_HEADER_TOKEN = re.compile(r"(?<![\w.+-])([A-Za-z0-9_+-]+(?:\.[A-Za-z0-9_+-]+)*\.h)\b")
# automake variables of headers that are shipped or built but never installed.
_NOT_INSTALLED = re.compile(r"^\s*(?:\w+_)?(?:noinst|EXTRA|check)_\w*HEADERS\s*[+:]?=|^\s*noinst_", re.I)
_ASSIGNMENT = re.compile(r"^\s*(\w+)\s*[+:?]?=")
_TEMPLATE_SUFFIXES = (".in", ".cmake", ".cmakein", ".meson", ".build")


_BUILD_FILES = ("CMakeLists.txt", "configure", "configure.ac", "Makefile", "Makefile.am", "meson.build")


def project_dir(root: Path) -> Path:
    """The directory holding the library's build files.

    That is ``root``, or its one subdirectory that has them when ``root`` has none
    (some Debian sources keep the library in a subdirectory named like the project).
    """

    def has_build(d: Path) -> bool:
        return any((d / n).is_file() for n in _BUILD_FILES) or any(d.glob("*.c"))

    if has_build(root):
        return root
    subdirs = [d for d in root.iterdir() if d.is_dir() and not skipped(Path(d.name, "x")) and has_build(d)]
    return subdirs[0] if len(subdirs) == 1 else root


def read_text(path: Path) -> str:
    """A source file's text (bad bytes replaced), or ``""`` when unreadable."""
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def skipped(rel: Path) -> bool:
    """Whether a path relative to the root lies in a directory that holds no library code."""
    return any(part.lower() in SKIP_DIRS or part.startswith(".") for part in rel.parts[:-1])


def walk(root: Path, suffixes: tuple[str, ...], skip: bool = True) -> Iterator[Path]:
    """Files under ``root`` with one of ``suffixes``, sorted, optionally outside :data:`SKIP_DIRS`."""
    for path in sorted(root.rglob("*")):
        if path.suffix in suffixes and path.is_file() and not (skip and skipped(path.relative_to(root))):
            yield path


def fuzz_harnesses(root: Path) -> list[str]:
    """Files in the tree that define ``LLVMFuzzerTestOneInput`` (relative paths, sorted)."""
    found = []
    for path in walk(root, (".c", ".cc", ".cpp", ".cxx"), skip=False):
        rel = path.relative_to(root)
        if rel.parts[0] in (".pc", ".git", "debian") or any(p.startswith(".logicfuzz") for p in rel.parts):
            continue
        if _FUZZ_ENTRY.search(read_text(path)):
            found.append(rel.as_posix())
    return found


def in_fuzz_folder(rel: Path) -> bool:
    """Whether a path relative to the source root lies in a fuzzing folder (``fuzz/``, ``oss-fuzz/``...).

    Any directory whose name contains ``fuzz`` counts (``fuzzing``, ``libfuzzer-driver``), a
    wider net than :data:`SKIP_DIRS`: such a folder holds the yardstick or its helpers.
    """
    # LogicFuzz's own build folder (`.logicfuzz-build`) in a configured copy is no fuzzing folder.
    return any("fuzz" in part.lower().replace("logicfuzz", "") for part in rel.parts[:-1])


def mentions_fuzz_entry(path: Path) -> bool:
    """Whether a file defines, declares or calls ``LLVMFuzzerTestOneInput`` (a fuzz harness's)."""
    return "LLVMFuzzerTestOneInput" in read_text(path)


def harness_helpers(harness: Path) -> list[Path]:
    """Helper sources next to an upstream harness that it needs.

    These are the files in its directory defining neither a fuzz entry point nor ``main``
    (a ``fuzz/data_producer.c`` beside the harnesses) and defining a function the harness, or
    a helper it needs, calls without defining it. A test directory of hundreds of programs
    and ``#include``d fragments gives only what is used (often nothing).
    """
    candidates: dict[Path, set[str]] = {}
    for path in sorted(harness.parent.iterdir()):
        if path == harness or path.suffix not in (".c", ".cc", ".cpp", ".cxx"):
            continue
        text = read_text(path)
        if not _FUZZ_ENTRY.search(text) and not re.search(r"\bmain\s*\([^;{)]*\)\s*\{", text):
            candidates[path] = _defined_functions(text)
    chosen: list[Path] = []
    texts = [read_text(harness)]
    while texts:
        text = texts.pop()
        wanted = set(_CALLED.findall(_strip_comments(text))) - _defined_functions(text)
        for path, defines in candidates.items():
            if path not in chosen and defines & wanted:
                chosen.append(path)
                texts.append(read_text(path))
    return sorted(chosen)


_CALLED = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_DEFINITION = re.compile(r"^(?!\s*static\b)(?:[A-Za-z_][\w \t\*]*?[\s\*])?([A-Za-z_]\w*)\s*\([^;{)]*\)\s*\{",
                         re.M)


def _strip_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)


def _defined_functions(text: str) -> set[str]:
    """Names of the non-static functions a C file defines (by their definition's shape)."""
    return set(_DEFINITION.findall(_strip_comments(text))) - c_words("statement")


def candidate_sources(root: Path) -> list[Path]:
    """``.c`` files that may be library code: top level and the usual source directories.

    Fuzz targets are left out here; programs and ``#include``d fragments are recognized
    from the symbols their objects define (:mod:`fuzzkit.detect_sources`), since ``main``
    often sits in a comment or an ``#ifdef`` (a ``crc.c`` whose table generator is guarded).
    """
    files = [p for p in sorted(root.glob("*.c")) if p.is_file()]
    for name in SOURCE_DIRS:
        for directory in (d for d in root.iterdir() if d.is_dir() and d.name.lower() == name):
            # .S: preprocessed assembly the C sources call (assembly for another machine fails
            # to assemble and is dropped as a platform file).
            files += [p for p in walk(directory, (".c", ".S")) if not skipped(p.relative_to(directory))]
    return [p for p in files if not _FUZZ_ENTRY.search(read_text(p))]


def generated_headers(root: Path) -> set[str]:
    """Names of headers a configure step would generate (``config.h`` from ``config.h.in``)."""
    names: set[str] = set()
    for path in root.rglob("*"):
        for suffix in _TEMPLATE_SUFFIXES:
            if path.name.endswith(".h" + suffix):
                names.add(path.name[: -len(suffix)])
    return names


def _install_mentions(root: Path) -> set[str]:
    """Header names the build files install or call public."""
    names: set[str] = set()
    for path in root.rglob("*"):
        if not path.is_file() or skipped(path.relative_to(root)):
            continue
        if path.name == "CMakeLists.txt" or path.name == "meson.build":
            blocks = _cmake_header_blocks(read_text(path))
        elif path.name in ("Makefile", "Makefile.am", "Makefile.in", "GNUmakefile", "makefile"):
            blocks = _make_header_blocks(read_text(path))
        else:
            continue
        for block in blocks:
            names.update(_HEADER_TOKEN.findall(block))
    return names


def _make_header_blocks(text: str) -> list[str]:
    """The parts of a Makefile that name installed headers.

    An automake ``*_HEADERS`` variable (not ``noinst_``, ``EXTRA_``, ``check_``), and the
    rule lines that install into ``includedir`` (``for i in $(PUBHDR); do $(INSTALL_DATA)
    ...``), with ``$(VAR)`` expanded. Any other variable is a list, not an install: a
    distribution list holding every header and ``install-sh`` names nothing public.
    """
    joined = text.replace("\\\n", " ")
    variables = _make_variables(joined)
    blocks = []
    for line in joined.splitlines():
        assignment = _ASSIGNMENT.match(line)
        if assignment:
            # automake's own `HEADERS = $(x_HEADERS) $(noinst_HEADERS)` adds up every kind.
            if assignment.group(1).upper().endswith("_HEADERS") and not _NOT_INSTALLED.match(line):
                blocks.append(_expanded(line, variables))
        elif re.search(r"includedir|install", line, re.I):
            # A recipe line installs what its variables hold; a rule line's prerequisites
            # (``install: $(BUILT_SOURCES)``) are only built first.
            blocks.append(_expanded(line, variables) if line.startswith("\t") else line)
    return blocks


def _make_variables(text: str) -> dict[str, str]:
    """``name = value`` assignments of a Makefile (``+=`` appends), for ``$(name)`` in header lines."""
    found: dict[str, str] = {}
    for name, op, value in re.findall(r"^\s*(\w+)\s*([+:?]?)=\s*(.*)$", text, re.M):
        found[name] = f"{found.get(name, '')} {value}" if op == "+" else value
    return found


def _expanded(line: str, variables: dict[str, str]) -> str:
    """``include_HEADERS = $(libinc)`` with ``libinc = lib.h`` is ``include_HEADERS = lib.h`` (two levels)."""
    for _ in range(2):
        line = re.sub(r"\$[({](\w+)[)}]", lambda m: variables.get(m.group(1), ""), line)
    return line


def _cmake_header_blocks(text: str) -> list[str]:
    """The parts of a CMakeLists.txt (or meson.build) that name public headers.

    What ``install(...)`` installs, with ``${VAR}`` expanded from ``set(VAR ...)``, and
    ``PUBLIC_HEADER`` properties. Only when nothing installed names a header are variables
    named like header lists (``*_HEADERS``, ``PUBLIC_*``) taken instead: next to
    ``install(FILES ${PUB_HDRS})``, a ``set(HDRS ...)`` of internal headers is not public.
    """
    variables = {var: body for var, body in re.findall(r"set\s*\(\s*(\w+)([^)]*)\)", text, re.I)}
    installed = [re.sub(r"\$\{(\w+)\}", lambda m: variables.get(m.group(1), ""), block)
                 for block in re.findall(r"(?:install|install_headers)\s*\(([^)]*)\)", text, re.I)]
    blocks = installed + re.findall(r"PUBLIC_HEADER\s*\"?([^)\"]*)", text)
    if not any(_HEADER_TOKEN.search(b) for b in blocks):
        blocks += [body for var, body in variables.items()
                   if re.search(r"HEADER|HDR|PUBLIC|INCLUDE", var, re.I) and not PRIVATE_NAME.search(var)]
    return blocks


def public_headers(
    root: Path, extra_roots: Iterable[Path] = (), include_dirs: Iterable[Path] = ()
) -> list[Path]:
    """The library's public headers, most likely first.

    A header is public when the build files install it (CMake ``install``/``*_HEADERS``
    variables, automake ``include_HEADERS``, Makefile install or ``includedir`` lines) or
    it sits in a top-level ``include/`` directory none of whose headers the build files name
    (where they name some, the others are helpers it does not install); failing both, every header next to the
    library sources or in an in-tree include directory below the top (``include_dirs``: a
    ``src/headers`` the compiles use) is. Headers named like private ones (``*_private.h``, ``*internal*``,
    ``config.h``) are dropped unless installed by name or nothing else is left. ``extra_roots`` (a build
    directory) are searched for generated headers too.
    """
    headers = [p for r in (root, *extra_roots) for p in walk(r, (".h",)) if p.is_file()]
    mentioned = _install_mentions(root)
    include_dir = root / "include"
    under_include = [p for p in headers if p.is_relative_to(include_dir)]
    # Some of include/ installed by name: the rest of it (shared helpers, test support) is not.
    named = any(p.name in mentioned for p in under_include)
    chosen = [p for p in headers if p.name in mentioned or (p in under_include and not named)]
    if not chosen:
        source_dirs = {p.parent.resolve() for p in candidate_sources(root)}
        source_dirs |= {d.resolve() for d in include_dirs if d.resolve() != root.resolve()}
        chosen = [p for p in headers if p.parent.resolve() in source_dirs]
    # (one the build installs by name is public, whatever its name: `parserInternals.h`)
    public = [p for p in chosen if p.name in mentioned or not PRIVATE_NAME.search(p.stem)] or chosen
    by_name: dict[str, Path] = {}
    for path in public:
        by_name.setdefault(path.name, path)  # a copy in the build directory adds nothing
    public = list(by_name.values())
    project = _project_words(root)
    # The header named like the project (``acme.h`` for project acme) is usually the main one.
    return sorted(dict.fromkeys(public), key=lambda p: (p.stem.lower() not in project, len(p.parts), p.name))


def _project_words(root: Path) -> set[str]:
    name = root.name.lower()
    base = re.split(r"[-_]\d", name)[0]
    return {base, base.removeprefix("lib"), base.replace("-", "_")}
