"""Choosing a library's fuzz targets from its public API, for ``logicfuzz init-benchmark``.

A good default set favours entry points that take untrusted data (a buffer with a size,
or a string), especially parsers and decoders, mixes archetypes (buffer+size, string,
object/stream APIs such as ``inflate(z_streamp, int)``, encoders for round trips), and
skips what fuzzing cannot exercise: version and error-string getters, free/destroy
functions, allocator hooks, setters and functions that take a ``FILE *``, a file name or
a callback.
"""

from __future__ import annotations

import difflib
import re

from fuzzkit.api import FunctionDecl
from fuzzkit.errors import ToolchainError

_PARSE_VERBS = (
    "parse", "load", "read", "decode", "decompress", "uncompress", "inflate", "scan", "unpack",
    "deserialize", "tokenize", "tokener", "lex", "unescape", "import", "loads", "loadb", "eval",
    "match", "compile", "minify",
)  # fmt: skip
_WRITE_VERBS = (
    "compress",
    "deflate",
    "encode",
    "emit",
    "dump",
    "print",
    "serialize",
    "write",
    "pack",
    "escape",
)
_CHECKSUM = ("crc", "adler", "hash", "checksum", "digest")
# Lifecycle, accessors and plumbing: not where untrusted data goes in.
_SKIP_WORDS = frozenset(
    """version free delete destroy cleanup release dispose deinit error strerror errmsg alloc
    malloc realloc calloc allocator hooks callback handler reset bound flags debug init
    initialize end get set is has copy prime tune params pending mark open close fd fdopen
    file sizeof size count type""".split()
)
_SKIP_SUFFIXES = ("open", "close", "free", "init", "end", "reset", "file", "fd")
# Container plumbing: data goes in, but the interesting code (the parser) is elsewhere.
_PLUMBING = frozenset("detach replace insert append del deln remove put lookup add item".split())
_INPUT_NAMES = re.compile(r"(path|filename|fname|^file$|^fd$|^mode$|^dir|^fmt$|^format$|version)", re.I)
_LENGTH_NAMES = re.compile(r"(^|_)(len|length|size|sz|n|count|nbytes|bytes)$|(Len|Length|Size)$", re.I)
_INTEGER = re.compile(
    r"^(const )?(size_t|z_size_t|ssize_t|int|unsigned|unsigned int|long|unsigned long|uLong|uInt|"
    r"u?int\d+_t)$"
)
_DATA = re.compile(r"^const (char|unsigned char|signed char|uint8_t|u_char|Bytef|void|int8_t|\w*char\w*) \*$")


_ENOUGH = 3  # a plain object function scores 2: not worth a target on its own


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return [w for w in spaced.lower().split("_") if w]


def archetype(decl: FunctionDecl) -> str:
    """``buffer`` (input data + size), ``string``, ``object`` (takes a struct pointer) or ``other``."""
    params = decl.params
    for i, param in enumerate(params):
        if not _DATA.match(param.type) or _INPUT_NAMES.search(param.name):
            continue
        after = params[i + 1] if i + 1 < len(params) else None
        if (after and _INTEGER.match(after.type)) or any(
            _INTEGER.match(p.type) and _LENGTH_NAMES.search(p.name) for p in params
        ):
            return "buffer"
    if any(p.type == "const char *" and not _INPUT_NAMES.search(p.name) for p in params):
        return "string"
    if params and params[0].type.endswith("*") and not re.search(r"\b(char|void)\b", params[0].type):
        return "object"
    if params and not _INTEGER.match(params[0].type) and "*" not in params[0].type:
        return "object"  # an opaque handle typedef (z_streamp, gzFile)
    return "other"


def score(decl: FunctionDecl) -> int:
    """How promising ``decl`` is as a fuzz target (higher is better; below 0 is skipped)."""
    words = _words(decl.name)
    kind = archetype(decl)
    total = {"buffer": 6, "string": 4, "object": 2, "other": 0}[kind]
    if any(w.startswith(v) for w in words for v in _PARSE_VERBS):
        total += 4
    elif any(w.startswith(v) for w in words for v in _WRITE_VERBS):
        total += 2
    if any(c in w for w in words for c in _CHECKSUM):
        total += 1
    # jansson-style length variants (getn, setn, deln) count as their base word.
    bases = {w.rstrip("0123456789") for w in words} | {w[:-1] for w in words if w.endswith("n")}
    if bases & _SKIP_WORDS or any(w.endswith(_SKIP_SUFFIXES) for w in words):
        total -= 8
    if bases & _PLUMBING:
        total -= 4
    if any(w in ("create", "new", "add") for w in words):
        total -= 2
    types = " ".join(p.type for p in decl.params)
    if re.search(r"\bFILE\b|\(\*\)|va_list", types):
        total -= 6
    if any(_INPUT_NAMES.search(p.name) for p in decl.params):
        total -= 4
    if not decl.params:
        total -= 5
    return total


def _related(a: str, b: str) -> bool:
    """Whether two names are variants of one function.

    ``uncompress``/``uncompress2`` and ``json_parse_int64``/``json_parse_double`` are;
    different verbs on one object (``yaml_parser_parse``/``yaml_parser_load``) are not.
    """
    if a.startswith(b) or b.startswith(a):
        return True
    wa, wb = _words(a), _words(b)
    verbs = (*_PARSE_VERBS, *_WRITE_VERBS)
    same_family = len(wa) > 1 and wa[:-1] == wb[:-1]
    return same_family and not (wa[-1].startswith(verbs) and wb[-1].startswith(verbs))


def choose_functions(decls: list[FunctionDecl], max_functions: int = 8) -> list[FunctionDecl]:
    """A varied, promising default set of at most ``max_functions`` targets, best first.

    The best function of each archetype comes first, then the rest by score; each already
    chosen variant of a function (``uncompress2`` after ``uncompress``) lowers its score,
    and nothing weaker than a plain object function is added just to fill the set.
    """
    ranked = sorted((d for d in decls if score(d) >= _ENOUGH), key=lambda d: (-score(d), d.name))
    chosen: list[FunctionDecl] = []
    for kind in ("buffer", "string", "object"):
        best = next((d for d in ranked if archetype(d) == kind and d not in chosen), None)
        if best is not None and len(chosen) < max_functions:
            chosen.append(best)

    def adjusted(d: FunctionDecl) -> int:
        return score(d) - 7 * sum(_related(d.name, c.name) for c in chosen)

    while len(chosen) < max_functions:
        rest = sorted((d for d in ranked if d not in chosen), key=lambda d: (-adjusted(d), d.name))
        if not rest or adjusted(rest[0]) < _ENOUGH:
            break
        chosen.append(rest[0])
    return sorted(chosen, key=lambda d: (-score(d), d.name))


def pick_named(decls: list[FunctionDecl], names: list[str]) -> list[FunctionDecl]:
    """The declarations named ``names``, in that order.

    Raises:
        ToolchainError: A name is not in the public API (the message suggests close names).
    """
    by_name = {d.name: d for d in decls}
    missing = [n for n in names if n not in by_name]
    if missing:
        hints = {n: difflib.get_close_matches(n, list(by_name), n=3) for n in missing}
        shown = "; ".join(f"{n} (did you mean {', '.join(h)}?)" if h else n for n, h in hints.items())
        raise ToolchainError(
            f"not in the library's public API: {shown}",
            "name functions declared in the library's public headers and defined in the library",
        )
    return [by_name[n] for n in names]
