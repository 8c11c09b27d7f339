r"""libFuzzer dictionaries: one made from the library's own string literals, and shipped ones.

A parser compares its input with the keywords, tags and magic numbers its code spells out
(``"%PDF-"``, ``"GIF89a"``, ``"BEGIN:VCARD"``, ``"@media"``). From an empty corpus libFuzzer rarely
builds such a token byte by byte within a short run: its comparison tracing only sees the
comparisons made through the functions it intercepts, and a keyword table scanned a byte at a
time is not one. The string literals of the library's compiled sources are those tokens, and
they come from the library itself, read at prepare time (:func:`library_dictionary`).

Kept from each literal (C escapes decoded): the whole literal when it is 2..:data:`MAX_TOKEN`
bytes and not a ``printf`` format, and each word of it (letters, digits, ``_``, ``-``, at least
3 characters). The :data:`MAX_ENTRIES` most frequent are written, ties broken by text, in
libFuzzer's dictionary format (``"token"``, non-printable bytes as ``\xNN``).

A text library decodes UTF-8 and then compares the character it decoded with code points its
code spells out (``case 0x200C:``, ``cp >= 0x0660``). libFuzzer's comparison tracing offers the
compared value's own bytes, never its UTF-8 encoding, so such a branch waits for a mutation to
spell two to four exact bytes. When the sources speak of UTF-8, the code points they compare with
(written with at least four hex digits, as code points are, U+0080..U+10FFFF, surrogates left
out) are added in their UTF-8 encoding, :data:`MAX_CODE_POINTS` of them at most, beside the
literals (:func:`code_points`).

:func:`shipped_dictionary` finds the dictionary a library ships beside one of its own fuzz
harnesses (OSS-Fuzz's convention: ``name.dict`` next to ``name.c``), for comparisons that give
each side the dictionary it comes with.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from fuzzkit.paths import file_lock

VERSION = 3  # part of the cached file's name: a change to what is read makes a new file
MAX_TOKEN = 24
MAX_ENTRIES = 2000
MAX_CODE_POINTS = 256
MAX_SOURCE_BYTES = 16 << 20  # an amalgamation of a few MiB is common; a generated table is not
# One pass, leftmost first: a comment, a character constant or a string literal (its body in
# group 1), so that `"http://"` is a literal and `'"'` or `/* "x" */` opens none.
_TOKEN = re.compile(
    r"/\*.*?\*/|//[^\n]*"  # comments
    r"|'(?:[^'\\\n]|\\.)+'"  # character constants
    r'|(?<!\w)(?:u8|L|u|U)?"((?:[^"\\\n]|\\.)*)"',  # string literals
    re.S,
)
_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(?:include|line|error|warning|pragma)\b[^\n]*", re.M)
_FORMAT = re.compile(rb"%[-+ #0-9.*]*(?:hh|h|ll|l|z|j|t|L)?[diouxXeEfgGcspn]")
_WORD = re.compile(rb"[A-Za-z][A-Za-z0-9_-]{2,}")
# A hex constant of 4..6 digits that a value is compared with: a case label or a comparison.
_COMPARED_CODE = re.compile(r"(?:\bcase[ \t]+|[=!<>]=[ \t]*|[^-<>][<>][ \t]*)0[xX]([0-9A-Fa-f]{4,6})\b")
_SPEAKS_UTF8 = re.compile(r"utf-?8", re.I)
_ESCAPES = {"n": 10, "t": 9, "r": 13, "0": 0, "a": 7, "b": 8, "f": 12, "v": 11, "e": 27,
            "\\": 92, '"': 34, "'": 39, "?": 63}


def decode_literal(body: str) -> bytes | None:
    r"""The bytes of a C string literal's body (``\x41``, octal and named escapes decoded)."""
    out = bytearray()
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out += ch.encode("utf-8", "replace")
            i += 1
            continue
        nxt = body[i + 1 : i + 2]
        m = re.match(r"x([0-9A-Fa-f]{1,2})|([0-7]{1,3})", body[i + 1 :])
        if m and m.group(1):
            out.append(int(m.group(1), 16))
            i += 1 + len(m.group(0))
        elif m and m.group(2):
            out.append(int(m.group(2), 8) & 0xFF)
            i += 1 + len(m.group(0))
        elif nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        else:
            return None  # \u, line continuations: not worth guessing
    return bytes(out)


def literals(text: str) -> Iterable[bytes]:
    """The string literals of C source ``text`` (comments and ``#include`` lines left out)."""
    for m in _TOKEN.finditer(_DIRECTIVE.sub(" ", text)):
        if m.group(1) is not None:
            data = decode_literal(m.group(1))
            if data:
                yield data


def tokens(sources: Iterable[Path]) -> Counter[bytes]:
    """Candidate dictionary entries of ``sources`` with how often each occurs."""
    return _literal_tokens(_texts(sources))


def _literal_tokens(texts: Iterable[str]) -> Counter[bytes]:
    counts: Counter[bytes] = Counter()
    for text in texts:
        for data in literals(text):
            if 2 <= len(data) <= MAX_TOKEN and not _FORMAT.search(data) and b"\0" not in data[:-1]:
                counts[data] += 1
            if len(data) > 3:
                for word in _WORD.findall(data):
                    if len(word) <= MAX_TOKEN and word != data:
                        counts[word] += 1
    return counts


def code_points(texts: Iterable[str]) -> Counter[bytes]:
    """The UTF-8 encodings of the code points ``texts`` compare with, with how often each occurs.

    Empty unless some text mentions UTF-8 (a library that never decodes it compares numbers).
    """
    found: Counter[int] = Counter()
    speaks = False
    for text in texts:
        speaks = speaks or bool(_SPEAKS_UTF8.search(text))
        found.update(int(m.group(1), 16) for m in _COMPARED_CODE.finditer(text))
    if not speaks:
        return Counter()
    usable = {cp: n for cp, n in found.items() if 0x80 <= cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF}
    return Counter({chr(cp).encode("utf-8"): n for cp, n in usable.items()})


def _texts(sources: Iterable[Path]) -> Iterable[str]:
    for path in sources:
        try:
            if path.stat().st_size <= MAX_SOURCE_BYTES:
                yield path.read_text(errors="replace")
        except OSError:
            continue


def entry(token: bytes) -> str:
    """One line of libFuzzer's dictionary format."""
    text = "".join(
        chr(b) if 0x20 <= b < 0x7F and b not in (0x22, 0x5C) else f"\\x{b:02X}" for b in token
    )
    return f'"{text}"'


def write_dictionary(sources: Iterable[Path], dest: Path, limit: int = MAX_ENTRIES) -> int:
    """Write the dictionary of ``sources`` to ``dest``; return its number of entries."""
    texts = list(_texts(sources))  # read once: the literals and the code points come from the same text
    counts = _literal_tokens(texts)
    chosen = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    codes = code_points(texts)
    extra = [kv for kv in sorted(codes.items(), key=lambda kv: (-kv[1], kv[0])) if kv[0] not in counts]
    chosen += extra[:MAX_CODE_POINTS]
    lines = ["# libFuzzer dictionary: string literals of the library's own sources and the"
             " UTF-8 of the code points it compares with (LogicFuzz)"]
    lines += [entry(tok) for tok, _n in chosen]
    dest.write_text("\n".join(lines) + "\n")
    return len(chosen)


def library_dictionary(sources: Iterable[Path], dest: Path) -> Path | None:
    """The dictionary of a library build, made once at ``dest`` (None when it has no literals).

    Concurrent callers share one file: the first writes it under a lock, renamed into place.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(dest.parent / f"{dest.name}.lock"):
        if not dest.is_file():
            fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}-", dir=dest.parent)
            os.close(fd)
            try:
                write_dictionary(sorted(set(sources)), Path(tmp))
                os.replace(tmp, dest)
            finally:
                Path(tmp).unlink(missing_ok=True)
    entries = sum(1 for ln in dest.read_text().splitlines() if ln.startswith('"'))
    return dest if entries else None


def shipped_dictionary(harness: Path) -> Path | None:
    """The dictionary a library ships for its fuzz harness ``harness``, if any.

    ``name.dict`` beside ``name.c``; else the one ``.dict`` file of the harness's directory
    (or of its ``config/`` subdirectory), which all of that directory's harnesses share.
    """
    own = harness.with_suffix(".dict")
    if own.is_file():
        return own
    for folder in (harness.parent, harness.parent / "config"):
        found = sorted(folder.glob("*.dict")) if folder.is_dir() else []
        if len(found) == 1:
            return found[0]
    return None
