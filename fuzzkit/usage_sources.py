"""Where a library's own code uses its API: tests, examples, tools, benchmarks, documentation.

The headers say what each function takes; the library's authors show how the API is meant to
be used somewhere else: in the programs of its test suite, its examples and command-line tools,
and the code blocks of its documentation. This module finds those files in a source tree and
pulls the code blocks out of documentation (Markdown fences, Doxygen ``@code`` blocks, man pages'
EXAMPLES sections).

Never read: a file that defines or calls ``LLVMFuzzerTestOneInput`` and every file in a fuzzing
folder. A library's fuzz harnesses are the yardstick LogicFuzz is compared with; learning from
them would measure nothing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from fuzzkit.detect_tree import in_fuzz_folder
from fuzzkit.usage_models import Origin

CODE_SUFFIXES = frozenset({".c", ".cc", ".cpp", ".cxx"})
DOC_SUFFIXES = frozenset({".md", ".markdown", ".dox", ".txt", ".h", ".3", ".1", ".man"})
MAX_CODE_FILES = 400
MAX_DOC_FILES = 400
MAX_BYTES = 1 << 20
_SKIP = frozenset({".git", ".pc", "debian", ".github", "CMakeFiles", "autom4te.cache", ".deps", ".libs"})
# Folder names, by what their programs are to the library.
_ORIGINS: tuple[tuple[Origin, frozenset[str]], ...] = (
    (
        "test",
        frozenset(
            "test tests testing testsuite regress regression check checks t unittest unittests "
            "unit_tests conformance".split()
        ),
    ),
    ("example", frozenset("example examples sample samples demo demos contrib tutorial tutorials".split())),
    ("bench", frozenset("bench benchmark benchmarks perf".split())),
    ("tool", frozenset("tool tools util utils utilities programs progs apps app bin cli cmd".split())),
    ("doc", frozenset("doc docs documentation manual man".split())),
)
_HARNESS = "LLVMFuzzerTestOneInput"
_MAIN = re.compile(r"\bmain\s*\(")


@dataclass(frozen=True)
class UsageSource:
    """A file (or a documentation block) of the library's own code that may use its API."""

    rel: str  # relative to the source root; a block adds ``#N``
    origin: Origin
    text: str
    path: Path | None = None  # the file on disk (None for a documentation block)


def origin_of(rel: Path) -> Origin | None:
    """What the folders of ``rel`` say its code is (None: no usage folder)."""
    parts = [p.lower() for p in rel.parts[:-1]]
    stem = rel.stem.lower()
    for origin, names in _ORIGINS:
        if any(p in names for p in parts):
            return origin
    for origin, names in _ORIGINS:  # a word of a folder's name (test_libFLAC, api-examples)
        if any(w in names for p in parts for w in re.split(r"[_\-.]", p) if len(w) > 1 and w != p):
            return origin
    for origin, names in _ORIGINS[:3]:  # a test or example program at the top (test_api.c, example1.c)
        if any(stem.startswith(n) or stem.endswith(n) for n in names if len(n) > 2):
            return origin
    return None


def is_yardstick(rel: Path, text: str) -> bool:
    """A fuzz harness or anything in a fuzzing folder: never read."""
    return in_fuzz_folder(rel) or _HARNESS in text


def _walk(root: Path) -> list[Path]:
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP and not d.startswith("."))
        found += [Path(dirpath, n) for n in sorted(filenames)]
    return found


def _read(path: Path) -> str | None:
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_BYTES:
            return None
        return path.read_text(errors="replace")
    except OSError:
        return None


def usage_sources(
    root: Path, library_sources: Collection[str | Path] = ()
) -> tuple[list[UsageSource], list[str]]:
    """The usage code under ``root`` and the yardstick files left out (relative paths).

    Code files are those in test, example, tool, benchmark or documentation folders, and any
    other program (a file defining ``main``) that is not one of the library's own sources;
    documentation blocks come from Markdown, Doxygen and man pages anywhere in the tree.
    """
    root = Path(root)
    own = {Path(s).resolve() for s in library_sources}
    code: list[UsageSource] = []
    docs: list[UsageSource] = []
    left_out: list[str] = []
    for path in _walk(root):
        rel = path.relative_to(root)
        suffix = path.suffix.lower()
        if suffix not in CODE_SUFFIXES and suffix not in DOC_SUFFIXES:
            continue
        text = _read(path)
        if text is None:
            continue
        if is_yardstick(rel, text):
            left_out.append(str(rel))
            continue
        if suffix in CODE_SUFFIXES and path.resolve() not in own:
            origin = origin_of(rel) or ("tool" if _MAIN.search(text) else None)
            if origin is not None and len(code) < MAX_CODE_FILES:
                code.append(UsageSource(str(rel), origin, text, path))
        if suffix in DOC_SUFFIXES or suffix in CODE_SUFFIXES:
            for n, block in enumerate(doc_blocks(text, suffix)):
                if len(docs) < MAX_DOC_FILES:
                    docs.append(UsageSource(f"{rel}#{n + 1}", "doc", block))
    return code + docs, left_out


_MD_FENCE = re.compile(r"^[ \t]*```[ \t]*(?P<lang>[\w+-]*)[ \t]*\n(?P<body>.*?)^[ \t]*```", re.M | re.S)
_DOXY = re.compile(r"[@\\]code\b(?:\{[^}]*\})?(?P<body>.*?)[@\\]endcode\b", re.S)
_MAN_EXAMPLE = re.compile(r"^\.SH\s+\"?EXAMPLES?\"?[ \t]*\n(?P<body>.*?)(?=^\.SH\b|\Z)", re.M | re.S)
_ROFF_ESCAPES = (
    ("\\-", "-"),
    ("\\e", "\\"),
    ("\\(aq", "'"),
    ("\\(dq", '"'),
    ("\\(rs", "\\"),
    ("\\fB", ""),
    ("\\fI", ""),
    ("\\fR", ""),
    ("\\fP", ""),
    ("\\&", ""),
    ("\\ ", " "),
)
_C_LANGS = frozenset({"c", "cpp", "c++", "cc", "h", ""})


def doc_blocks(text: str, suffix: str) -> list[str]:
    """The C code blocks of a documentation text (Markdown, Doxygen comments, man pages)."""
    blocks: list[str] = []
    if suffix in (".md", ".markdown", ".txt", ".dox"):
        blocks += [m.group("body") for m in _MD_FENCE.finditer(text) if m.group("lang").lower() in _C_LANGS]
    if "code" in text:
        for m in _DOXY.finditer(text):
            body = "\n".join(
                re.sub(r"^[ \t]*\*?[ \t]?", "", line, count=1) if line.lstrip().startswith("*") else line
                for line in m.group("body").splitlines()
            )
            blocks.append(body)
    if suffix in (".3", ".1", ".man"):
        for m in _MAN_EXAMPLE.finditer(text):
            lines = [ln for ln in m.group("body").splitlines() if not ln.startswith((".", "'"))]
            body = "\n".join(lines)
            for old, new in _ROFF_ESCAPES:
                body = body.replace(old, new)
            blocks.append(body)
    return [b.strip("\n") for b in blocks if "(" in b and len(b.strip()) > 10]
