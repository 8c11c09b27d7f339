"""The long-term knowledge teaches patterns, not the answers for the libraries it is judged on.

Every archetype, pitfall and skeleton is rendered into the prompts of every target. If a file names
an identifier of a benchmark library (or of a library used during development), a real model reads
the answer for that benchmark, and the knowledge says nothing about a library it has never seen.
Examples in the knowledge use invented names (``acme_reply_parse``, ``codec_ctx_new``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from long_term_memory.knowledge_files import DEFAULT_KNOWLEDGE_DIR

REPO = Path(__file__).resolve().parents[2]

# API prefixes of the development-set libraries and of the libraries tried as a new user.
DEV_SET_PREFIXES = (
    "XML_", "xml", "mbedtls_", "MBEDTLS_", "pcre2_", "PCRE2_", "WebP", "idn2_", "IDN2_",
    "sqlite3_", "SQLITE_", "LZ4", "json_", "JSON_", "cJSON", "yaml_", "YAML_", "z_stream",
    "z_", "Z_", "inflate", "deflate", "gz", "crc32", "adler32",
)  # fmt: skip
# Whole identifiers of the same libraries that no prefix above covers.
DEV_SET_NAMES = frozenset({
    "compress2", "compressBound", "uncompress", "uncompress2", "zlibVersion",
    "zError", "Bytef", "uLong", "uLongf", "uInt", "voidpf", "voidp", "get_crc_table",
})  # fmt: skip
# Library names themselves, matched case-insensitively at the start of a word.
LIBRARY_NAMES = (
    "zlib", "libyaml", "cjson", "expat", "libxml", "mbedtls", "pcre", "libwebp", "webp",
    "idn2", "libidn", "sqlite", "lz4", "jansson",
)  # fmt: skip
# Other real libraries the knowledge once cited: any real library may be among the unseen ones
# used for judging, so examples stay invented.
OTHER_REAL = (
    "BZ2_", "bz_", "EVP_", "XXH", "SHA256_", "png_", "toml_", "OPENSSL_", "lzma_", "LZMA_",
)  # fmt: skip
C_WORDS = frozenset({
    "const", "volatile", "struct", "union", "enum", "unsigned", "signed", "char", "short", "int",
    "long", "float", "double", "void", "size_t", "ssize_t", "uint8_t", "int8_t", "uint16_t",
    "int16_t", "uint32_t", "int32_t", "uint64_t", "int64_t", "FILE", "va_list", "bool",
})  # fmt: skip


def benchmark_names() -> tuple[set[str], set[str]]:
    """Function and type names of every benchmark, and the prefixes of its function names."""
    names: set[str] = set()
    prefixes: set[str] = set()
    for path in sorted((REPO / "benchmarks").glob("*.yaml")):
        for fn in yaml.safe_load(path.read_text())["functions"]:
            names.add(fn["name"])
            if "_" in fn["name"].strip("_"):
                prefixes.add(fn["name"][: fn["name"].index("_", 1) + 1])
            types = [fn.get("return_type", "")] + [p["type"] for p in fn.get("params", [])]
            for type_ in types:
                names |= set(re.findall(r"[A-Za-z_]\w*", type_)) - C_WORDS
    return names, prefixes


def knowledge_files() -> list[Path]:
    root = DEFAULT_KNOWLEDGE_DIR
    return sorted(
        p for sub in ("archetypes", "pitfalls", "skeletons") for p in (root / sub).iterdir() if p.is_file()
    )


def offending(text: str, names: set[str], prefixes: tuple[str, ...]) -> list[str]:
    found = []
    for token in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text):
        lower = token.lower()
        if token in names or token.startswith(prefixes) or lower.startswith(LIBRARY_NAMES):
            found.append(token)
    return sorted(set(found))


def test_the_forbidden_names_come_from_the_benchmarks() -> None:
    names, prefixes = benchmark_names()
    assert {"yaml_", "cJSON_"} <= prefixes
    assert {"uncompress", "crc32", "cJSON_Parse", "yaml_parser_parse", "z_streamp", "Bytef"} <= names


def test_the_check_catches_library_identifiers() -> None:
    names, prefixes = benchmark_names()
    forbidden = (*prefixes, *DEV_SET_PREFIXES, *OTHER_REAL)
    sample = "call inflateInit2 then XML_Parse; the zlib way; WebPDecode; Z_OK; acme_reply_parse"
    assert offending(sample, names | DEV_SET_NAMES, forbidden) == [
        "WebPDecode", "XML_Parse", "Z_OK", "inflateInit2", "zlib",
    ]  # fmt: skip


@pytest.mark.parametrize("path", knowledge_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_knowledge_file_names_no_benchmark_or_dev_set_identifier(path: Path) -> None:
    names, prefixes = benchmark_names()
    forbidden = (*prefixes, *DEV_SET_PREFIXES, *OTHER_REAL)
    found = offending(path.read_text(encoding="utf-8"), names | DEV_SET_NAMES, forbidden)
    assert not found, (
        f"{path.name} names identifiers of real libraries: {found}; write the pattern with "
        "invented names (acme_reply_parse, codec_ctx_new, struct tlv_record)"
    )


def test_every_knowledge_kind_is_checked() -> None:
    kinds = {p.parent.name for p in knowledge_files()}
    assert kinds == {"archetypes", "pitfalls", "skeletons"}
    assert len(knowledge_files()) >= 24
