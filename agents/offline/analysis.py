"""Function analysis: which usage archetype a C function follows, and how its API must be used.

:func:`analyze_function` reads a target's prototype against the library's other prototypes
(signature shapes, naming, which functions create and destroy the types involved) and returns
the archetype with a confidence, plain-English usage constraints, the lifecycle of every type
involved and related functions worth calling on the same objects.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from agents.offline import cdecl, type_table
from agents.offline.synth_api import ApiIndex, words
from agents.offline.synth_knowledge import stream_fields
from agents.offline.synth_roles import payload_slot, roles
from agents.offline.synth_types import Role
from agents.offline.synth_vocab import CONSUME, RISKY
from fuzzkit.api import FunctionDecl

ARCHETYPES = (
    "stateless_parser", "object_lifecycle", "state_machine", "stream_processor", "round_trip",
    "file_based", "buffer_codec", "object_builder", "callback_driven", "incremental_digest",
)  # fmt: skip
HIGH, MEDIUM, LOW = "HIGH", "MEDIUM", "LOW"
DIGEST_WORDS = {
    "crc",
    "hash",
    "digest",
    "checksum",
    "sum",
    "update",
    "md5",
    "sha",
    "xxh",
    "murmur",
    "fnv",
}
MUTATE = {
    "add",
    "insert",
    "append",
    "replace",
    "detach",
    "delete",
    "remove",
    "attach",
    "put",
    "set",
    "push",
    "prepend",
}
PRINT_WORDS = {
    "print",
    "dump",
    "serialize",
    "stringify",
    "emit",
    "unparse",
    "write",
    "format",
    "encode",
    "render",
    "export",
}
PIECE_VERBS = {"feed", "push", "write", "update", "append", "process"}
_LAST_FLAG = re.compile(r"(final|last|done|finish|more)", re.I)
HOOK_WORDS = ("hooks", "callbacks", "handlers", "vtable", "allocator")
PRODUCE_WORDS = {"parse", "scan", "load", "next", "read", "fetch", "pull", "lex", "step"}


@dataclass
class Analysis:
    """What the analyzer concluded about one function."""

    function: str
    archetype: str
    confidence: str
    reasoning: str
    constraints: list[str] = field(default_factory=list)
    lifecycle: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    related: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "function": self.function,
            "archetype": self.archetype,
            "confidence": self.confidence,
            "reasoning": self.reasoning,
            "constraints": list(self.constraints),
            "lifecycle": {k: dict(v) for k, v in self.lifecycle.items()},
            "related": list(self.related),
        }


def with_target(target: FunctionDecl, api: list[FunctionDecl]) -> list[FunctionDecl]:
    """The API list with ``target`` in it (prompts sometimes list it separately)."""
    return list(api) if any(f.name == target.name for f in api) else [*api, target]


def analyze_function(target: FunctionDecl, api: list[FunctionDecl]) -> Analysis:
    """Classify ``target`` into an archetype and describe how to use it safely."""
    idx = ApiIndex(with_target(target, api))
    rs = roles(target, idx)
    archetype, confidence, why = classify(target, idx, rs)
    types = _types_involved(target, idx)
    return Analysis(
        function=target.name,
        archetype=archetype,
        confidence=confidence,
        reasoning=why,
        constraints=constraints(target, idx, rs, archetype),
        lifecycle={t: _life(idx, t) for t in types},
        related=related_functions(target, idx, types),
    )


def classify(target: FunctionDecl, idx: ApiIndex, rs: list[Role]) -> tuple[str, str, str]:
    """``(archetype, confidence, reasoning)`` for ``target``."""
    name = target.name
    kinds = {r.kind for r in rs}
    verbs = set(idx.verbs(name)) | set(words(name))
    first = rs[0] if rs else None
    key = next((r.type_key for r in rs if r.kind in ("object", "handle", "out_object")), None)
    io = kinds & {"file", "path", "fd"}
    if io:
        return "file_based", HIGH, f"{name} takes a {'/'.join(sorted(io))}: the input must be a file"
    if (
        key
        and idx.is_handle(key)
        and any(
            r.kind in ("path", "fd", "file")
            for c in idx.lifecycle(key).create
            for r in roles(idx.by_name[c], idx)
        )
    ):
        return "file_based", MEDIUM, f"{name} works on a {key}, which is opened from a file"
    if "callback" in kinds:
        return "callback_driven", HIGH, f"{name} registers a callback the library will call"
    others = [n for n in idx.lifecycle(key).create + idx.lifecycle(key).init if n != name] if key else []
    if key and not others and any(w in key.lower() for w in HOOK_WORDS):
        # Prototypes carry no struct fields: a table of callbacks is recognized by its name.
        return "callback_driven", MEDIUM, f"{name} takes a table of callbacks ({key})"
    running = (
        first is not None
        and first.kind == "int"
        and cdecl.base_name(first.param.type) == cdecl.base_name(target.return_type)
    )
    # A value of the return type going in first, bytes after: a running checksum, whatever
    # its algorithm is called (a plain int in and out is too common to say so).
    folds = running and cdecl.base_name(target.return_type) not in ("int", "bool", "_Bool")
    if "bytes" in kinds and (verbs & DIGEST_WORDS or folds):
        how = "a running value" if running else "a digest context"
        return "incremental_digest", HIGH, f"{name} folds bytes into {how}"
    if "outbuf" in kinds and "bytes" in kinds and not key:
        return "buffer_codec", HIGH, f"{name} transforms an input buffer into a caller buffer"
    if (
        key
        and stream_fields(key) is not None
        and idx.kind(target) not in ("init", "destroy")
        and (any(r.param.name in ("flush", "action") for r in rs))
    ):
        return "stream_processor", HIGH, f"{name} advances a {key} over chunks of input"
    if key and any(f.name == target.name for f in idx.feeders(key)):
        return "state_machine", MEDIUM, f"{name} gives input to a {key} that is then stepped"
    if key and "out_object" in kinds and verbs & PRODUCE_WORDS:
        return "state_machine", HIGH, f"{name} yields one item per call from a {key}"
    if "consumed" in kinds and verbs & PRINT_WORDS:
        return "round_trip", HIGH, f"{name} re-emits items that a parser of the same library makes"
    fed = key and any(payload_slot(roles(idx.by_name[c], idx)) is not None for c in idx.lifecycle(key).create)
    printing = verbs & PRINT_WORDS and (cdecl.is_string(target.return_type) or "outbuf" in kinds)
    if key and fed and printing:
        return "round_trip", HIGH, f"{name} prints a {key} that the library's parser builds"
    if (
        key
        and verbs & MUTATE
        and not (idx.kind(target) == "destroy" and len(rs) == 1)
        and ("consumed" in kinds or idx.lifecycle(key).create or verbs & (MUTATE - {"set"}))
    ):
        return "object_builder", HIGH, f"{name} mutates a {key} with values from the input"
    if (
        key
        and "bytes" in kinds
        and verbs & {"parse", "feed", "write", "push", "process", "decode", "update"}
        and _feeds_in_pieces(target, idx, rs)
    ):
        return "stream_processor", MEDIUM, f"{name} consumes input pieces through a {key}"
    if key:
        kind = idx.kind(target)
        conf = HIGH if kind in ("init", "destroy") or idx.returns_owned(target) else MEDIUM
        return "object_lifecycle", conf, f"{name} needs a {key} built first and released after"
    if payload_slot(rs) is not None:
        conf = (
            HIGH
            if idx.type_key(target.return_type)
            or verbs & {"parse", "decode", "load", "read", "minify", "scan", "validate"}
            else MEDIUM
        )
        return "stateless_parser", conf, f"{name} takes the input directly and keeps no state"
    return "stateless_parser", LOW, f"{name} has no input parameter: options only"


def _feeds_in_pieces(target: FunctionDecl, idx: ApiIndex, rs: list[Role]) -> bool:
    """Whether ``target`` takes one piece of input on an object that keeps the rest.

    A method-style call (the object first, the bytes after: ``feed(ctx, buf, len)``) does;
    a one-shot call with its options last (``decode(buf, len, &opts)``) or one that returns a
    new object made from the bytes does not: calling it per piece would decode each piece
    from scratch, or make (and leak) an object per piece.
    """
    first = rs[0] if rs else None
    if first is None or first.kind not in ("object", "handle"):
        return False
    if idx.returns_owned(target) and idx.type_key(target.return_type):
        return False
    if any(r.kind in ("int", "bool") and _LAST_FLAG.search(r.param.name) for r in rs):
        return True  # `parse(p, buf, len, is_final)`: made for pieces
    if (set(idx.verbs(target.name)) | set(words(target.name))) & PIECE_VERBS:
        return True
    # A parse/decode into a struct the caller owns and can see into (`parse(&cert, der, len)`)
    # takes whole messages; an opaque context made by the library keeps state between calls.
    record = type_table.active().record(first.type_key or "")
    return record is None or record.opaque


def _types_involved(target: FunctionDecl, idx: ApiIndex) -> list[str]:
    found: list[str] = []
    for t in [target.return_type, *(p.type for p in target.params)]:
        key = idx.type_key(t)
        if key and key not in found:
            found.append(key)
    return found


def _life(idx: ApiIndex, key: str) -> dict[str, list[str]]:
    life = idx.lifecycle(key).to_dict()
    best = idx.destructor(key, (life["init"] or life["create"] or [""])[0])
    if best and best in life["destroy"]:
        life["destroy"] = [best] + [d for d in life["destroy"] if d != best]
    return life


def related_functions(target: FunctionDecl, idx: ApiIndex, types: list[str]) -> list[str]:
    """Functions worth calling on the same objects, most useful first (at most 16)."""
    scored: list[tuple[int, str]] = []
    for f in idx.api:
        if f.name == target.name or RISKY.search(f.name) or not f.params:
            continue
        key = idx.type_key(f.params[0].type)
        if key not in types or idx.kind(f) in ("init", "destroy"):
            continue
        ws = set(words(f.name)) | set(idx.verbs(f.name))
        if cdecl.is_string(f.return_type) and idx.returns_owned(f):
            # Printers with options reach more of the printing code.
            score = 0 if len(f.params) > 1 else 1
        elif ws & {"size", "count", "length"}:
            score = 2
        elif ws & {"is", "has"}:
            score = 3
        elif ws & {"get", "find", "lookup", "root", "node"}:
            score = 4
        elif ws & {"compare", "dup", "duplicate", "copy", "equal"}:
            score = 5
        elif ws & CONSUME or ws & MUTATE:
            score = 7
        else:
            score = 6
        scored.append((score, f.name))
    from agents.offline.synth_chunks import inverse_of

    inverse = inverse_of(idx, target.name)
    names = [n for _, n in sorted(scored)]
    if inverse:
        names.insert(0, inverse.name)
    return list(dict.fromkeys(names))[:16]


def constraints(target: FunctionDecl, idx: ApiIndex, rs: list[Role], archetype: str) -> list[str]:
    """Short usage rules a harness author must respect, from the roles and lifecycles."""
    out: list[str] = []
    for r in rs:
        n = r.param.name
        if r.kind == "text":
            out.append(f"{n} must be a NUL-terminated string")
        elif r.kind == "bytes" and r.pair is not None:
            out.append(f"{rs[r.pair].param.name} bounds the read of {n}")
        elif r.kind == "outbuf" and r.pair is not None:
            out.append(f"{n} must have at least {rs[r.pair].param.name} writable bytes")
        elif r.kind in ("object", "handle") and r.type_key:
            life = idx.lifecycle(r.type_key)
            dtor = idx.destructor(r.type_key, (life.init or life.create or [target.name])[0])
            if life.init and not life.create and r.index == 0 and idx.kind(target) != "init":
                from agents.offline.synth_objects import choose_init

                chosen = choose_init(idx, r.type_key, target.name, set())
                init = chosen.name if chosen else life.init[0]
                dtor = idx.destructor(r.type_key, init)
                out.append(
                    f"{r.type_key} must be zeroed and initialised with {init} before "
                    f"{target.name}" + (f" and released with {dtor}" if dtor else "")
                )
            elif life.create and dtor:
                out.append(
                    f"{n} must come from {life.create[0]} (or another constructor) and be "
                    f"released with {dtor}"
                )
        elif r.kind == "consumed":
            out.append(
                f"{n} belongs to the object once {target.name} succeeds: free it only if the call failed"
            )
        elif r.kind == "child":
            out.append(f"{n} must be an item inside {rs[0].param.name}")
        elif r.kind == "out_object" and r.type_key:
            dtor = idx.destructor(r.type_key, target.name)
            if dtor:
                out.append(f"each {r.type_key} filled by {target.name} must be released with {dtor}")
        elif r.kind == "int" and len(r.choices) == 2 and r.choices[0] < r.choices[1]:
            out.append(f"{n} should stay within {r.choices[0]}..{r.choices[1]}")
        elif r.kind == "int" and len(r.choices) > 2:
            out.append(f"{n} should be one of {', '.join(map(str, r.choices[:8]))}...")
        elif r.kind == "callback":
            out.append(f"{n} must match {r.param.type} exactly and never give more than asked")
        elif r.kind == "version":
            integer = not cdecl.is_pointer(r.param.type)
            out.append(f"{n} must be {idx.version_function(target.name, integer)}()")
        elif r.kind == "struct_size":
            out.append(f"{n} must be sizeof({r.type_key})")
    rkey = idx.type_key(target.return_type)
    if rkey and idx.returns_owned(target):
        dtor = idx.destructor(rkey, target.name)
        out.append(f"the returned {rkey} must be freed with {dtor or 'free'}")
    elif idx.returns_owned(target):
        out.append(f"the returned memory must be freed with {idx.free_function() or 'free'}")
    elif rkey:
        out.append(f"the returned {rkey} is borrowed: never free it")
    if archetype in ("state_machine", "stream_processor"):
        out.append("loop a bounded number of times and stop at the end state or the first error")
    return out
