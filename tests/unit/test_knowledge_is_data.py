"""Knowledge is data, never code: no engine module names a particular C library.

What a library's header says reaches the engine at run time (the prompt's ``## Types``
section); rules in Python must be general. This test collects the identifiers of the
benchmark libraries (function, parameter type and return type names, headers, project
names) from ``benchmarks/*.yaml``, their API prefixes (the common prefix of each library's
function names), and a list kept here of the development-set libraries' prefixes, then
searches every Python module of the engine packages, comments and docstrings included.
"""

from __future__ import annotations

import os
import re
import subprocess
from functools import cache
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("agents", "nodes", "fuzzkit", "agent_graph", "long_term_memory", "logicfuzz")

# Libraries used during development that have no benchmark file here: their API prefixes
# (regular expressions) and names. Unseen libraries are used for judging, so a rule written
# for any of these would be a rule for one library.
DEV_PREFIXES = (
    "XML_",  # expat
    "xml[A-Z]",  # libxml2
    "mbedtls_",
    "pcre2_",
    "WebP",  # libwebp
    "VP8",  # libwebp's codec internals
    "idn2_",
    "sqlite3_",
    "LZ4",
    "lz4",
    "json_",  # jansson
)
DEV_NAMES = ("lz4", "jansson", "expat", "libxml2", "mbedtls", "pcre2", "libwebp", "libidn2")
# Prefixes of the benchmark libraries' wider API that their curated functions do not show
# (the zlib benchmark's functions share no prefix; its constants, types and file API do).
BENCH_PREFIXES = ("Z_", "z_", "gz", "inflate", "deflate")

# General English words that are also the name of some benchmark library's function.
# Reviewed: each one names a mechanism any library may have, not one library's API.
ENGLISH = {
    "uncompress": "a general verb (and the Unix command) for undoing compression",
}
# Names from Python libraries that share a C library's prefix; not C identifiers.
PYTHON_NAMES = {
    "json_schema": "an OpenAI structured-output argument",
    "json_object": "the OpenAI response format that servers constrain by grammar",
    "json_repair": "the Python package that repairs model JSON",
}
_C_BUILTIN = re.compile(
    r"^(void|char|short|int|long|float|double|signed|unsigned|bool|_Bool|size_t|ssize_t|"
    r"ptrdiff_t|u?int\d+_t|u?intptr_t|FILE|va_list)$"
)
_ID = r"[A-Za-z0-9_]"


def _type_names(ctype: str) -> set[str]:
    names = set(re.findall(r"[A-Za-z_]\w*", ctype)) - {"const", "struct", "enum", "union", "volatile"}
    return {n for n in names if not _C_BUILTIN.match(n)}


def _api_prefix(names: list[str]) -> str:
    """The common prefix of a library's function names, cut after its last ``_``."""
    common = os.path.commonprefix(names) if len(names) > 1 else ""
    return common[: common.rfind("_") + 1] if "_" in common else ""


@cache
def vocabulary() -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """(whole identifiers, identifier prefixes as regexes, library names)."""
    idents: set[str] = set()
    prefixes = set(DEV_PREFIXES) | set(BENCH_PREFIXES)
    names = set(DEV_NAMES)
    for path in sorted((REPO / "benchmarks").glob("*.yaml")):
        spec = yaml.safe_load(path.read_text())
        names.add(spec["project"])
        functions = spec.get("functions") or []
        for fn in functions:
            idents.add(fn["name"])
            idents |= _type_names(fn.get("return_type") or "")
            for param in fn.get("params") or []:
                idents |= _type_names(param.get("type") or "")
        for header in (spec.get("build") or {}).get("headers") or []:
            idents.add(Path(header).name)
        prefix = _api_prefix([fn["name"] for fn in functions])
        if prefix:
            # A library's macros and constants carry its prefix in capitals.
            prefixes |= {re.escape(prefix), re.escape(prefix.upper())}
    idents -= set(ENGLISH)
    return frozenset(idents), frozenset(prefixes), frozenset(names)


@cache
def _pattern() -> re.Pattern[str]:
    idents, prefixes, names = vocabulary()
    # An API name, or a name extending one (inflateInit_, crc32_combine); an English word
    # passes alone but not extended (uncompress2 is still that library's).
    whole = "|".join(
        rf"{re.escape(i)}(?:[A-Z0-9_]{_ID}*)?(?!{_ID})" for i in sorted(idents, key=len, reverse=True)
    )
    whole += "".join(rf"|{re.escape(w)}[A-Z0-9_]{_ID}*" for w in sorted(ENGLISH))
    pref = "|".join(rf"(?:{p}){_ID}+" for p in sorted(prefixes))
    lib = "|".join(rf"(?i:{re.escape(n)}){_ID}*" for n in sorted(names))
    return re.compile(rf"(?<!{_ID})(?<!\.)(?:{whole}|{pref}|{lib})")


def library_names_in(text: str) -> list[tuple[int, str]]:
    """(line number, name) of every library identifier, prefix or name in ``text``."""
    found = []
    for n, line in enumerate(text.splitlines(), 1):
        for m in _pattern().finditer(line):
            if m.group(0) not in PYTHON_NAMES:
                found.append((n, m.group(0)))
    return found


def engine_modules() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", *(f"{p}/*.py" for p in PACKAGES)],
        cwd=REPO, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return out.stdout.split()


def _params() -> list[object]:
    return list(engine_modules())


@pytest.mark.parametrize("module", _params())
def test_engine_module_names_no_c_library(module: str) -> None:
    hits = library_names_in((REPO / module).read_text())
    assert not hits, f"{module} names a particular C library (write the rule generally): " + ", ".join(
        f"line {n}: {name}" for n, name in hits
    )


def test_every_benchmark_identifier_is_caught() -> None:
    idents, _, names = vocabulary()
    assert idents and names
    for ident in idents:
        assert library_names_in(f"    # then call {ident}(x) twice"), ident
    for project in names:
        assert library_names_in(f'"""As {project} does."""'), project


def test_prefixed_and_extended_names_are_caught() -> None:
    synthetic = {  # one shape each: a capitalised constant, a family member, a dev-set prefix
        "ret == YAML_NO_ERROR": "YAML_NO_ERROR",
        "call inflateInit2_ first": "inflateInit2_",
        "then xmlReadMemory": "xmlReadMemory",
        "see idn2_to_ascii_8z": "idn2_to_ascii_8z",
        "or uncompress2 (not the word uncompress)": "uncompress2",
    }
    for text, name in synthetic.items():
        assert [n for _, n in library_names_in(text)] == [name]


def test_python_names_and_english_words_pass() -> None:
    text = "from json_repair import repair_json\nschema = json.loads(json_schema)\n# uncompress it"
    assert library_names_in(text) == []
    functions = {fn["name"] for p in (REPO / "benchmarks").glob("*.yaml")
                 for fn in yaml.safe_load(p.read_text()).get("functions") or []}  # fmt: skip
    assert set(ENGLISH) <= functions, "keep the allowlist to words that need it"

