"""A packet transformed in place: ``protect(ctx, void *packet, int *len)``.

A function whose only data is a writable buffer with a pointer to its length reads the bytes
there and writes its result over them (a packet it encrypts or authenticates, growing by a
trailer): as the target, it gets a copy of the input in a heap buffer with room to grow, and
its length set to the input's. Taken for an output buffer, it was given an empty one and the
input never reached it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents.offline import ckinds
from agents.offline.synth_types import Role, decl_cast, decl_type
from fuzzkit.api import FunctionDecl

if TYPE_CHECKING:
    from agents.offline.synth_api import ApiIndex
    from agents.offline.synth_kinds import Call

ROOM = 4096  # what a transform may append (trailers, tags, padding)


def in_place_slot(idx: ApiIndex, fn: FunctionDecl, rs: list[Role]) -> int | None:
    """The writable buffer with a length pointer, when the call takes no other data.

    Not when the API gives the call's object its input some other way, with its length
    (``set_input(ctx, data, len)``): then the buffer is only where a result goes.
    """
    if any(r.kind in ("bytes", "blob", "text", "pixels", "cursor", "path", "file", "fd") for r in rs):
        return None
    key = idx.first_object(fn)
    sized = [f for f in (idx.input_feeders(fn, key) if key else [])
             if any(ckinds.is_integer(p.type) and not ckinds.is_pointer(p.type) for p in f.params[2:])]
    if sized:  # a pointer alone (`set_user_data(ctx, void *)`) is no input
        return None
    found = [r for r in rs if r.kind == "outbuf" and r.pair is not None and rs[r.pair].kind == "outlen_ptr"]
    return found[0].index if len(found) == 1 else None


def in_place(c: Call, slot: int) -> None:
    """A heap copy of the payload (with :data:`ROOM` more) at ``slot``, its length in/out beside it."""
    pl, r = c.pl, c.rs[slot]
    assert r.pair is not None
    buf = pl.var("uint8_t *", "packet", "NULL")
    pl.f.setup.append(f"{buf} = (uint8_t *)malloc(size + {ROOM});")
    pl.f.setup.append(f"if ({buf} == NULL) {pl.f.fail()}")
    pl.f.setup.append(f"if (size > 0) memcpy({buf}, data, size);")
    pl.f.cleanup.append(f"free({buf});")
    pl.f.include("<stdlib.h>", "<string.h>")
    inner = decl_type(ckinds.pointee(c.rs[r.pair].param.type))
    length = pl.var(inner, "packet_len")
    pl.f.setup.append(f"{length} = ({inner})size;")
    c.args[slot] = f"({decl_cast(r.param.type)}){buf}"
    c.args[r.pair] = f"&{length}"
    pl.fed = True
