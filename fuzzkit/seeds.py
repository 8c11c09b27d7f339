"""A seed corpus from the sample files a library ships with its sources.

A library that reads a file format checks the whole header before any function a harness
targets can run: from an empty corpus, libFuzzer rarely builds a file that opens within a
short run, and the target is never reached. The library's own test and example files (images
under ``test/images``, documents under ``test/``, streams under ``tests/files``) are valid
inputs of exactly that format: run once through a harness, they show whether it reaches its
target and handles valid input cleanly (``nodes/execution.py``).

The files are taken from directories named like test data, leaving out source code, build
files and documentation; small files first, at most :data:`MAX_FILES` spread over the file
types found, each at most :data:`MAX_BYTES`. Each is seeded twice: as it is, and followed by
:data:`PAD` zero bytes, since a harness takes its option bytes from the end of the input (which
would otherwise eat the file's last bytes).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from fuzzkit.paths import file_lock

MAX_FILES = 128
MAX_BYTES = 64 * 1024
PAD = 16
_DATA_DIRS = frozenset(
    """test tests testing testdata test-data test_data testsuite testfiles test-files data samples
    sample examples example corpus corpora seeds images pics files inputs regress regression
    conformance fixtures""".split()
)
_NOT_INPUT = frozenset(
    """.c .h .cc .cpp .cxx .hh .hpp .hxx .m .mm .s .asm .py .pyc .pl .pm .sh .bash .bat .cmd .ps1
    .am .in .ac .m4 .mk .mak .cmake .o .a .so .la .lo .obj .lib .dll .dylib .exe .pc .spec
    .patch .diff .md .rst .tex .texi .man .1 .3 .pod .log .orig .rej .sln .vcxproj .filters .def
    .yml .yaml .toml .cfg .ini .sed .awk .rb .js .java .go .rs .php .lua .cs .swift .kt .dict
    .options .supp""".split()
)
_NOT_INPUT_NAMES = frozenset(
    """makefile gnumakefile cmakelists.txt readme readme.txt readme.md changelog changes news
    copying license licence authors install todo thanks version configure meson.build""".split()
)
_SKIP_PARTS = frozenset({".git", ".pc", "debian", ".github", "build", "CMakeFiles"})


def sample_files(root: Path) -> list[Path]:
    """Candidate seed files under ``root``: small test and example data, spread over file types."""
    by_type: dict[str, list[tuple[int, str, Path]]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel = Path(dirpath).relative_to(root)
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_PARTS and not d.startswith("."))
        if not any(part.lower() in _DATA_DIRS for part in rel.parts):
            continue
        for name in filenames:
            path = Path(dirpath, name)
            suffix = path.suffix.lower()
            if suffix in _NOT_INPUT or name.lower() in _NOT_INPUT_NAMES or name.startswith("."):
                continue
            try:
                size = path.stat().st_size
            except OSError:
                continue
            if 0 < size <= MAX_BYTES and path.is_file() and not path.is_symlink():
                by_type.setdefault(suffix, []).append((size, str(path.relative_to(root)), path))
    queues = [sorted(files) for _suffix, files in sorted(by_type.items())]
    chosen: list[Path] = []
    while len(chosen) < MAX_FILES and any(queues):  # one of each type in turn: variety first
        for queue in queues:
            if queue and len(chosen) < MAX_FILES:
                chosen.append(queue.pop(0)[2])
    return chosen


def seed_corpus(root: Path, dest: Path) -> Path | None:
    """The seed directory for the library whose sources are in ``root``, made once in ``dest``.

    Returns None when the sources ship no sample files. Concurrent callers share one directory:
    the first writes it under a lock, into a temporary directory renamed into place.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    done = dest.parent / f"{dest.name}.done"
    with file_lock(dest.parent / f"{dest.name}.lock"):
        if not done.is_file():
            tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
            try:
                for path in sample_files(root):
                    data = path.read_bytes()
                    for content in (data, data + bytes(PAD)):
                        name = hashlib.sha1(content).hexdigest()  # noqa: S324 - a name, not security
                        (tmp / name).write_bytes(content)
                shutil.rmtree(dest, ignore_errors=True)
                os.rename(tmp, dest)
                done.write_text("")
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    return dest if dest.is_dir() and any(dest.iterdir()) else None
