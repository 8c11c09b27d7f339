"""Constructors that read an object from data, and which of them may take a share of the input.

A target that takes the fuzz input (an expression, a query) may need an object that is itself
read from data (the document it is evaluated on). Fed the same bytes, the document would be
the expression too; it gets its own share of the input instead (``lf_take_part``: an option
byte says how much, from the input's end), and the target the rest.
"""

from __future__ import annotations

from agents.offline.synth_api import ApiIndex
from agents.offline.synth_roles import payload_slot, roles
from fuzzkit.api import FunctionDecl

READ_VERBS = {"parse", "load", "read", "decode", "scan", "deserialize", "unpack", "import"}
_IO_KINDS = ("fd", "path", "file")


def reads_from_io(idx: ApiIndex, f: FunctionDecl) -> bool:
    """Whether ``f`` reads from a descriptor, a path or a ``FILE *``."""
    return any(r.kind in _IO_KINDS for r in roles(f, idx))


def reader_rank(idx: ApiIndex, ctor: FunctionDecl, io: bool = False) -> tuple[bool, bool, bool, int, str]:
    """A sort key for constructors fed the payload.

    In memory before files and descriptors, readers (``node_loads``, ``acme_parse``) before
    value wrappers (``node_string``), then the simplest.
    """
    reads = bool(set(idx.verbs(ctor.name)) & READ_VERBS)
    return (io, not reads, "parse" not in ctor.name.lower(), len(ctor.params), ctor.name)


def share_readers(idx: ApiIndex, fed: list[FunctionDecl]) -> list[FunctionDecl]:
    """Of the fed constructors, the in-memory readers of a buffer with its length, best first.

    ``doc_read_memory(const char *buf, int len, ...)`` qualifies; a value wrapper
    (``doc_new(const char *version)``) does not: it reads nothing.
    """
    found = []
    for c in fed:
        rs = roles(c, idx)
        slot = payload_slot(rs)
        if (slot is not None and rs[slot].pair is not None and not reads_from_io(idx, c)
                and set(idx.verbs(c.name)) & READ_VERBS):
            found.append(c)
    return sorted(found, key=lambda c: reader_rank(idx, c))
