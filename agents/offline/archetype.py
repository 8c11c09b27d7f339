"""Which usage archetype a C function follows, read from its roles, names and lifecycles.

:func:`classify` tries one rule per archetype family in a fixed order (a file or descriptor
first, then callbacks, digests, codecs, streams, state machines, round trips, builders, object
lifecycles); the first rule that recognizes the function names its archetype.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agents.offline import ckinds, type_table
from agents.offline.synth_api import ApiIndex, words
from agents.offline.synth_knowledge import stream_fields
from agents.offline.synth_objects import producer
from agents.offline.synth_roles import payload_slot, roles
from agents.offline.synth_types import Role
from agents.offline.synth_vocab import LAST_PIECE
from fuzzkit.api import FunctionDecl
from fuzzkit.vocabulary import words_of

HIGH, MEDIUM, LOW = "HIGH", "MEDIUM", "LOW"
DIGEST_WORDS = {"crc", "hash", "digest", "checksum", "sum", "update", "md5", "sha", "xxh", "murmur", "fnv"}
MUTATE = words_of("edit")
PRINT_WORDS = words_of("write")
PIECE_VERBS = words_of("feed")
HOOK_WORDS = ("hooks", "callbacks", "handlers", "vtable", "allocator")
PRODUCE_WORDS = words_of("produce")

Verdict = tuple[str, str, str]  # (archetype, confidence, reasoning)


@dataclass
class _Shape:
    """What the rules read of one function."""

    target: FunctionDecl
    idx: ApiIndex
    rs: list[Role]
    name: str
    kinds: set[str]
    verbs: set[str]
    first: Role | None
    key: str | None


def classify(target: FunctionDecl, idx: ApiIndex, rs: list[Role]) -> Verdict:
    """``(archetype, confidence, reasoning)`` for ``target``."""
    name = target.name
    key = next((r.type_key for r in rs if r.kind in ("object", "handle", "out_object")), None)
    s = _Shape(target, idx, rs, name, {r.kind for r in rs}, set(idx.verbs(name)) | set(words(name)),
               rs[0] if rs else None, key)  # fmt: skip
    for rule in _RULES:
        if (found := rule(s)) is not None:
            return found
    return _stateless(s)


def _file_based(s: _Shape) -> Verdict | None:
    io = s.kinds & {"file", "path", "fd"}
    if io:
        return "file_based", HIGH, f"{s.name} takes a {'/'.join(sorted(io))}: the input must be a file"
    idx = s.idx
    if (
        s.key
        and idx.is_handle(s.key)
        and any(
            r.kind in ("path", "fd", "file")
            for c in idx.lifecycle(s.key).create
            for r in roles(idx.by_name[c], idx)
        )
    ):
        return "file_based", MEDIUM, f"{s.name} works on a {s.key}, which is opened from a file"
    return None


def _callback_driven(s: _Shape) -> Verdict | None:
    if "callback" in s.kinds:
        return "callback_driven", HIGH, f"{s.name} registers a callback the library will call"
    key, idx = s.key, s.idx
    others = [n for n in idx.lifecycle(key).create + idx.lifecycle(key).init if n != s.name] if key else []
    if key and not others and any(w in key.lower() for w in HOOK_WORDS):
        # Prototypes carry no struct fields: a table of callbacks is recognized by its name.
        return "callback_driven", MEDIUM, f"{s.name} takes a table of callbacks ({key})"
    return None


def _digest_or_codec(s: _Shape) -> Verdict | None:
    target = s.target
    running = (
        s.first is not None
        and s.first.kind == "int"
        and ckinds.base_name(s.first.param.type) == ckinds.base_name(target.return_type)
    )
    # A value of the return type going in first, bytes after: a running checksum, whatever
    # its algorithm is called (a plain int in and out is too common to say so).
    folds = running and ckinds.base_name(target.return_type) not in ("int", "bool", "_Bool")
    if "bytes" in s.kinds and (s.verbs & DIGEST_WORDS or folds):
        how = "a running value" if running else "a digest context"
        return "incremental_digest", HIGH, f"{s.name} folds bytes into {how}"
    if "outbuf" in s.kinds and "bytes" in s.kinds and not s.key:
        return "buffer_codec", HIGH, f"{s.name} transforms an input buffer into a caller buffer"
    return None


def _stream_or_machine(s: _Shape) -> Verdict | None:
    key, idx = s.key, s.idx
    if (
        key
        and stream_fields(key) is not None
        and idx.kind(s.target) not in ("init", "destroy")
        and (any(r.param.name in ("flush", "action") for r in s.rs))
    ):
        return "stream_processor", HIGH, f"{s.name} advances a {key} over chunks of input"
    if key and any(f.name == s.name for f in idx.feeders(key)) and _stepped(idx, key):
        return "state_machine", MEDIUM, f"{s.name} gives input to a {key} that is then stepped"
    if key and "out_object" in s.kinds and s.verbs & PRODUCE_WORDS:
        return "state_machine", HIGH, f"{s.name} yields one item per call from a {key}"
    return None


def _stepped(idx: ApiIndex, key: str) -> bool:
    """Whether some function steps an object of ``key`` (fills an out struct from it per call)."""
    return producer(idx, set(), key=key) is not None


def _round_trip(s: _Shape) -> Verdict | None:
    key, idx = s.key, s.idx
    if "consumed" in s.kinds and s.verbs & PRINT_WORDS:
        return "round_trip", HIGH, f"{s.name} re-emits items that a parser of the same library makes"
    fed = key and any(payload_slot(roles(idx.by_name[c], idx)) is not None for c in idx.lifecycle(key).create)
    printing = s.verbs & PRINT_WORDS and (ckinds.is_string(s.target.return_type) or "outbuf" in s.kinds)
    if key and fed and printing:
        return "round_trip", HIGH, f"{s.name} prints a {key} that the library's parser builds"
    return None


def _builder_or_pieces(s: _Shape) -> Verdict | None:
    key, idx = s.key, s.idx
    if (
        key
        and s.verbs & MUTATE
        and not (idx.kind(s.target) == "destroy" and len(s.rs) == 1)
        and ("consumed" in s.kinds or idx.lifecycle(key).create or s.verbs & (MUTATE - {"set"}))
    ):
        return "object_builder", HIGH, f"{s.name} mutates a {key} with values from the input"
    if (
        key
        and "bytes" in s.kinds
        and s.verbs & words_of("stream_input")
        and _feeds_in_pieces(s.target, idx, s.rs)
    ):
        return "stream_processor", MEDIUM, f"{s.name} consumes input pieces through a {key}"
    return None


def _object_lifecycle(s: _Shape) -> Verdict | None:
    if not s.key:
        return None
    kind = s.idx.kind(s.target)
    conf = HIGH if kind in ("init", "destroy") or s.idx.returns_owned(s.target) else MEDIUM
    return "object_lifecycle", conf, f"{s.name} needs a {s.key} built first and released after"


def _stateless(s: _Shape) -> Verdict:
    if payload_slot(s.rs) is not None:
        conf = (
            HIGH
            if s.idx.type_key(s.target.return_type)
            or s.verbs & (words_of("parse") | {"minify", "validate"})
            else MEDIUM
        )
        return "stateless_parser", conf, f"{s.name} takes the input directly and keeps no state"
    return "stateless_parser", LOW, f"{s.name} has no input parameter: options only"


_RULES: tuple[Callable[[_Shape], Verdict | None], ...] = (
    _file_based, _callback_driven, _digest_or_codec, _stream_or_machine, _round_trip, _builder_or_pieces,
    _object_lifecycle,
)  # fmt: skip


def _feeds_in_pieces(target: FunctionDecl, idx: ApiIndex, rs: list[Role]) -> bool:
    """Whether ``target`` takes one piece of input on an object that keeps the rest.

    A method-style call (the object first, the bytes after: ``feed(ctx, buf, len)``) does;
    a one-shot call with its options last (``decode(buf, len, &opts)``) or one that returns a
    new object or buffer made from the bytes (or hands it back through a ``T **``) does not:
    calling it per piece would decode each piece from scratch, or make (and leak) a result per
    piece.
    """
    first = rs[0] if rs else None
    if first is None or first.kind not in ("object", "handle"):
        return False
    if not any(r.kind == "bytes" and r.pair is not None for r in rs):
        return False  # `decode(st, byte *frame, ...)` takes no length: it reads a whole frame
    if idx.returns_owned(target) and idx.type_key(target.return_type):
        return False
    if any(r.kind == "out_ptr" for r in rs):
        return False  # `decode(session, &dest, &dest_len, src, n)`: a new result per call
    if any(r.kind in ("int", "bool") and (LAST_PIECE.search(r.param.name) or "more" in r.param.name.lower())
           for r in rs):
        return True  # `parse(p, buf, len, is_final)`: made for pieces
    if (set(idx.verbs(target.name)) | set(words(target.name))) & PIECE_VERBS:
        return True
    # A parse/decode into a struct the caller owns and can see into (`parse(&cert, der, len)`)
    # takes whole messages; an opaque context made by the library keeps state between calls.
    record = type_table.active().record(first.type_key or "")
    return record is None or record.opaque

