"""How data reaches a candidate fuzz target when it takes no buffer: a file it names, or a reader callback.

Part of choosing targets (:mod:`fuzzkit.select_functions`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from fuzzkit.api import FunctionDecl
from fuzzkit.param_kinds import spellings
from fuzzkit.vocabulary import words_of


def words(name: str) -> list[str]:
    """The lower-case words of an identifier (``ABCDecodeRGBA``: abc, decode, rgba)."""
    # `ABCDecodeRGBA`-style names: an acronym run ends before a capitalised word.
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name))
    return [w for w in spaced.lower().split("_") if w]


_FILE_NAME = re.compile(r"(^|_)(path|path_?name|file_?name|fname|file|file_?path)$")  # of lower-case words
# What a harness cannot hand the input through: a `FILE *`, a callback, a `va_list`.
IO_TYPES = re.compile(r"\bFILE\b|\(\*\)|va_list|_IO_FILE")


def reads_file(decl: FunctionDecl, canonical: Mapping[str, str] | None = None) -> bool:
    """``int db_open(const char *filename, unsigned flags, db_t *db)``: the input is a file it names.

    A ``char`` string parameter named for a file, a name that reads (open, load, read...), and
    nothing that is a ``FILE *``, a callback or a ``va_list`` (whose input a harness cannot hand
    over as a file).
    """
    canon = canonical or {}
    named = any(_FILE_NAME.search("_".join(words(p.name))) and re.fullmatch(
        r"(const )?char ?\*( ?const)?", canon.get(p.type, p.type).strip()) for p in decl.params)
    types = " ".join(t for p in decl.params for t in spellings(p, canon))
    reads = set(words(decl.name)) & (words_of("parse") | {"open", "from", "file"})
    # (`connect_unix(const char *path)` names a socket, not a file to read)
    return named and bool(reads) and not IO_TYPES.search(types)


_FUNCTION_POINTER = re.compile(r"^(?P<ret>.*?)\s*\(\*\)\s*\((?P<args>.*)\)$")
_BYTES = re.compile(r"^(unsigned char|signed char|char|void|u?int8_t) ?\*$")
# (a size it may be handed by pointer: `size_t *bytes`, asked for on the way in, given on the way out)
_COUNT = re.compile(r"^(unsigned |signed )?(int|long|long long|short|size_t|ssize_t|long unsigned int"
                    r"|unsigned)( ?\*)?$")


def _fills_bytes(ctype: str) -> bool:
    """A callback type that fills a writable byte buffer of a size it is given.

    ``int (*)(obj *, uint8_t *buf, int n)`` or ``(void *ctx, void *buf, size_t n)``: after the
    first argument (the object or the user pointer), a writable byte pointer, then its size
    (or a pointer to it: ``(obj *, uint8_t *buf, size_t *bytes, void *user)``).
    """
    m = _FUNCTION_POINTER.match(ctype.strip())
    # (`void *(*)(void *ctx, void *ptr, int size)` hands back memory: an allocator, no reader)
    if not m or "*" in m["ret"]:
        return False
    args = [re.sub(r"\s+", " ", a).strip() for a in m["args"].split(",")]
    return any(_BYTES.match(a) and _COUNT.match(b) for a, b in zip(args[1:], args[2:], strict=False))


def reads_through_callback(decl: FunctionDecl, canonical: Mapping[str, str] | None = None) -> bool:
    """``obj *open(void *user, int (*read)(obj *, uint8_t *, int), int *err)``: input via a reader.

    A callback parameter that fills a writable byte buffer of a given size, with a ``void *``
    beside it: the harness implements the callback, serving the input from the user pointer.
    """
    canon = canonical or {}
    types = [canon.get(p.type, p.type).strip() for p in decl.params]
    user = any(re.fullmatch(r"(const )?void ?\*", t) for t in types)
    return user and any(_fills_bytes(t) for t in types)
