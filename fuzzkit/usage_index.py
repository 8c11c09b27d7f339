"""The usage index: every call the library's own code makes of its API, read at prepare time.

For each usage file (:mod:`fuzzkit.usage_sources`) every function is read with libclang, with
the build's include directories and defines; errors are tolerated (a test's own helpers may be
missing), and a file or documentation block libclang cannot read is read lexically instead.
Each call of an API function (and of ``free``) is recorded with its arguments, each classed by
what it is (a constant or an OR of constants, a library object, the data, its size, a string, a
callback), the variable its result is stored in and the check made on it. The index is cached
beside the library's build; a library with no such code gets an empty index.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from fuzzkit.api import FunctionDecl
from fuzzkit.paths import file_lock
from fuzzkit.usage_clang import clang_functions
from fuzzkit.usage_lexical import lexical_functions
from fuzzkit.usage_models import INDEX_VERSION, Arg, UsageFunction, UsageIndex
from fuzzkit.usage_sources import UsageSource, usage_sources
from fuzzkit.vocabulary import c_words

CLANG_SECONDS = 90  # libclang's share of one index; a big tree's remaining files are read from tokens
MAX_CLANG_BYTES = 400_000  # bigger files are read lexically (a generated test of every function)
_SIZE_NAME = re.compile(r"(?i)(len|size|count|length|bytes|nbytes|^n$|^sz$)")
_BYTES_TYPE = re.compile(
    r"\b(char|uint8_t|int8_t|u_char|unsigned char|void|[A-Za-z_]*byte[A-Za-z_]*)\b.*(\*|\[)"
)


def api_type_names(api: Iterable[FunctionDecl]) -> set[str]:
    """The named types an API's prototypes use (``acme_doc`` for ``const acme_doc *``)."""
    names: set[str] = set()
    for d in api:
        for t in (d.return_type, *(p.type for p in d.params)):
            names |= base_names(t)
    return names


_SKIP_WORDS = c_words("qualifier", "tag", "sign", "type") | {"__restrict", "size_t", "ssize_t"}


def base_names(ctype: str) -> set[str]:
    """The type names a spelling uses, C's own words left out."""
    return {
        w
        for w in re.findall(r"[A-Za-z_]\w*", ctype)
        if w not in _SKIP_WORDS and not re.fullmatch(r"u?int\d+_t|u?intptr_t|FILE", w)
    }


def classify(arg: Arg, variables: dict[str, str], api_types: set[str]) -> Arg:
    """``arg`` with its kind set from the variable types of its function."""
    if arg.kind in ("string", "callback", "null", "constant"):
        return arg
    text = arg.text.strip()
    if re.search(r"\b(sizeof|strlen)\b", text) and not arg.address:
        return arg.model_copy(update={"kind": "size"})
    if arg.var and arg.var in variables:
        vtype = variables[arg.var]
        if base_names(vtype) & api_types:
            return arg.model_copy(update={"kind": "object"})
        if _BYTES_TYPE.search(vtype + (" *" if arg.address else "")) and not arg.address:
            return arg.model_copy(update={"kind": "data"})
        if _SIZE_NAME.search(arg.var) and not arg.address and "*" not in vtype:
            return arg.model_copy(update={"kind": "size"})
        return arg.model_copy(update={"kind": "variable"})
    if arg.var and _SIZE_NAME.search(arg.var):
        return arg.model_copy(update={"kind": "size"})
    return arg


def build_index(
    root: Path,
    api: Sequence[FunctionDecl],
    include_dirs: Sequence[str] = (),
    defines: Sequence[str] = (),
    library_sources: Sequence[str] = (),
    constants: Iterable[str] = (),
) -> UsageIndex:
    """Read every usage file under ``root`` (see the module doc)."""
    sources, left_out = usage_sources(Path(root), library_sources)
    names = {d.name for d in api}
    api_types = api_type_names(api)
    known = set(constants)
    functions: list[UsageFunction] = []
    read: list[str] = []
    deadline = time.monotonic() + CLANG_SECONDS
    for src in sources:
        clang = time.monotonic() < deadline  # past the budget, the rest is read from tokens
        found = _read_source(src, names, api_types, known, include_dirs, defines, Path(root), clang)
        if found:
            read.append(src.rel)
            functions += found
    return UsageIndex(files=read, left_out=left_out, functions=functions)


def _read_source(
    src: UsageSource,
    names: set[str],
    api_types: set[str],
    known: set[str],
    include_dirs: Sequence[str],
    defines: Sequence[str],
    root: Path,
    clang: bool = True,
) -> list[UsageFunction]:
    if not any(n in src.text for n in _candidates(src.text, names)):
        return []
    found: list[UsageFunction] = []
    if clang and src.path is not None and len(src.text) <= MAX_CLANG_BYTES:
        try:
            found = clang_functions(src, names, known, include_dirs, defines, root)
        except Exception:  # noqa: BLE001 - libclang failing on one file: read it lexically
            found = []
    if not found:
        found = lexical_functions(src, names, known)
    out = []
    for fn in found:
        calls = [
            c.model_copy(update={"args": [classify(a, fn.variables, api_types) for a in c.args]})
            for c in fn.calls
        ]
        if any(c.function in names for c in calls):
            out.append(fn.model_copy(update={"calls": calls}))
    return out


def _candidates(text: str, names: set[str]) -> set[str]:
    return {w for w in set(re.findall(r"[A-Za-z_]\w*(?=\s*\()", text)) if w in names}


_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(?![\w(])", re.M)


def header_macro_names(headers: Iterable[str]) -> set[str]:
    """Every object-like macro the library's headers define (string and expression ones included)."""
    names: set[str] = set()
    for header in headers:
        try:
            names.update(_DEFINE.findall(Path(header).read_text(errors="replace")))
        except OSError:
            continue  # a header the build lists but the tree lacks: its macros are unknown
    return names


def usage_index(lib: Any, api: Sequence[FunctionDecl], constants: Iterable[str] = ()) -> UsageIndex:
    """The index of a built library (a :class:`fuzzkit.library.LibraryBuild`), cached beside it.

    The cache is keyed by the API and constants it was read for: init-benchmark and a run may
    ask with different function lists, and calls of functions outside the list are not kept.
    """
    constants = sorted(set(constants))
    key = hashlib.sha256("\n".join([*sorted(d.name for d in api), "", *constants]).encode()).hexdigest()[:12]
    dest = Path(lib.fuzz_archive).parent / f"usage-v{INDEX_VERSION}-{key}.json"
    if dest.is_file():
        try:
            return UsageIndex.model_validate_json(dest.read_text())
        except ValueError:
            pass  # an unreadable cache is rebuilt
    with file_lock(dest.with_suffix(".lock")):
        if dest.is_file():
            try:
                return UsageIndex.model_validate_json(dest.read_text())
            except ValueError:
                pass
        index = build_index(Path(lib.root), api, lib.include_dirs, lib.defines, lib.sources, constants)
        tmp = dest.with_suffix(".tmp")
        tmp.write_text(json.dumps(index.model_dump(mode="json")))
        tmp.replace(dest)
    return index
