"""Encoded input: a decoder that takes bytes without a length gets its own encoder's output.

``decode(T **objs, int n, const uint8_t *bytes, ...)`` has no length for ``bytes``: the data
says how long it is, and the library trusts it (its documentation says to pass only what the
matching encoder wrote). Fuzz bytes there make it read past the buffer on nearly every input,
a crash of the harness, not of the library. The API that writes that format is found by name
(``encode``/``decode``, ``serialize``/``deserialize``: the inverse, or a writer of the same name
family) and by shape: it hands back a fresh byte buffer (``uint8_t **``) and its size. The
harness builds the encoder's objects from the input, encodes them, and gives the decoder the
result; the buffer goes back with the releaser the header names for it.

An input array of objects (``const T **objs, int n``) gets one object, built as any object
argument is (from the input, or one already in scope), and a count of 1.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from agents.offline import ckinds, type_releasers
from agents.offline.synth_finders import inverse_of, words
from agents.offline.synth_knowledge import INVERSES
from agents.offline.synth_objects import build_object
from agents.offline.synth_types import Role, decl_cast, decl_type
from fuzzkit.api import FunctionDecl

if TYPE_CHECKING:
    from agents.offline.synth_api import ApiIndex
    from agents.offline.synth_kinds import Call

# The writing half of each inverse pair (`serialize`, `encode`, `pack`...).
_WRITERS = {a.lower() for a, _ in INVERSES}


def bare_bytes(fn: FunctionDecl, slot: int | None, rs: list[Role]) -> bool:
    """Whether parameter ``slot`` is read-only bytes (not text) with no length beside it."""
    if slot is None:
        return False
    r, t = rs[slot], fn.params[slot].type
    return (r.kind == "text" and r.pair is None and ckinds.is_const_target(t)
            and ckinds.is_bytes(t) and not ckinds.is_string(t) and ckinds.canonical_base(t) != "void")


def encoder_for(idx: ApiIndex, fn: FunctionDecl, slot: int | None,
                rs: list[Role]) -> tuple[FunctionDecl, int, int] | None:
    """What writes the bytes ``fn`` reads at ``slot``: (encoder, its buffer and size out-parameters)."""
    if not bare_bytes(fn, slot, rs):
        return None
    unit = ckinds.canonical_base(fn.params[slot or 0].type)
    inverse = inverse_of(idx, fn.name)
    family = [g for g in idx.api if g.name != fn.name and _same_family(g.name, fn.name)
              and _WRITERS & set(words(g.name))]
    for g in ([inverse] if inverse else []) + sorted(family, key=lambda g: (len(g.params), g.name)):
        shape = _writes_buffer(g, unit)
        if shape is not None:
            return g, *shape
    return None


def _same_family(a: str, b: str) -> bool:
    """Names sharing a prefix of two or more words (``lib_blob_encode``, ``lib_blob_count``)."""
    prefix = os.path.commonprefix([a, b])
    return len(words(prefix[: prefix.rfind("_") + 1] if "_" in prefix else prefix)) >= 2


def _writes_buffer(g: FunctionDecl, unit: str) -> tuple[int, int] | None:
    """The (buffer, size) out-parameters of ``g`` handing back a fresh buffer of ``unit``s."""
    out = size = None
    for i, p in enumerate(g.params):
        t = p.type
        if (out is None and ckinds.pointer_depth(t) == 2 and not ckinds.is_const_target(ckinds.pointee(t))
                and ckinds.canonical_base(t) == unit):
            out = i
        elif (out is not None and size is None and ckinds.pointer_depth(t) == 1
              and ckinds.is_integer(ckinds.pointee(t)) and not ckinds.is_const_target(t)):
            size = i
    return (out, size) if out is not None and size is not None else None


def encode_input(c: Call, slot: int, encoder: FunctionDecl, out: int, size: int) -> None:
    """Encode objects built from the input with ``encoder``; ``c``'s ``slot`` reads the result."""
    pl = c.pl
    buf_type = decl_type(ckinds.pointee(encoder.params[out].type))
    buf = pl.var(buf_type, "encoded", "NULL")
    length = pl.var(decl_type(ckinds.pointee(encoder.params[size].type)), "encoded_len")
    avoid = pl.avoid
    pl.avoid = avoid | {c.fn.name}  # the decoder does not make what it is given
    try:
        plan = pl.plan(encoder, bind={out: f"&{buf}", size: f"&{length}"}, payload=True)
        pl.emit(plan, pl.f.setup)
    finally:
        pl.avoid = avoid
    pl.f.setup.append(f"if ({buf} == NULL || {length} == 0) {pl.f.fail()}")
    releaser = (type_releasers.type_releaser(buf_type, producer=encoder.name) or pl.idx.generic_free()
                or "free")
    if releaser == "free":
        pl.f.include("<stdlib.h>")
    pl.f.cleanup.append(f"if ({buf} != NULL) {releaser}({buf});")
    c.args[slot] = f"({decl_cast(c.fn.params[slot].type)}){buf}"
    pl.f.notes.append(f"{c.fn.name} reads what {encoder.name} writes: its input is encoded first")


def object_array(c: Call, r: Role) -> None:
    """``const T **objs, int n``: one object, from the input or already in scope, and n = 1."""
    key = r.type_key or ""
    one = build_object(c.pl, c.fn, Role("object", r.index, r.param, type_key=key), c.args, c.plan)
    arr = c.pl.f.name("objs")
    elem = decl_type(ckinds.pointee(r.param.type))
    c.pl.f.decls.append(f"{elem} {arr}[1] = {{NULL}};")
    c.pl.f.setup.append(f"{arr}[0] = {one};")
    c.args[r.index] = f"({decl_cast(r.param.type)}){arr}"
    if r.pair is not None:
        c.args[r.pair] = f"({decl_cast(c.fn.params[r.pair].type)})1"
