"""Constructors that read an object from data, and which of them may take a share of the input.

A target that takes the fuzz input (an expression, a query) may need an object that is itself
read from data (the document it is evaluated on). Fed the same bytes, the document would be
the expression too; it gets its own share of the input instead (``lf_take_part``: an option
byte says how much, from the input's end), and the target the rest.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from agents.offline import ckinds
from agents.offline.synth_api import ApiIndex
from agents.offline.synth_roles import payload_slot, roles
from agents.offline.synth_tries import restore, snapshot
from agents.offline.synth_types import Unsupported
from agents.offline.synth_vocab import maker_stem
from fuzzkit.api import FunctionDecl
from fuzzkit.vocabulary import words_of

if TYPE_CHECKING:
    from agents.offline.synth_plan import Planner

READ_VERBS = words_of("parse")
_IO_KINDS = ("fd", "path", "file")


def own_family(ctors: list[FunctionDecl], near: str) -> list[FunctionDecl]:
    """``ctors`` without those of a sibling family when one of the call's own family is there.

    One context type may serve several formats whose constructors name the format before the
    verb (``tagCreatePushCtxt``, ``docCreatePushCtxt``): ``docParseDocument`` gets a context of its
    own family, not the tag format's, whose state its parser overruns. Constructors that name no
    family (``tagReaderForMemory``) stay.
    """
    families = {c.name: maker_stem(c.name) for c in ctors}
    if not near or not any(f != n and near.startswith(f) for n, f in families.items()):
        return ctors
    return [c for c in ctors if families[c.name] == c.name or near.startswith(families[c.name])]


def reads_from_io(idx: ApiIndex, f: FunctionDecl) -> bool:
    """Whether ``f`` reads from a descriptor, a path or a ``FILE *``."""
    return any(r.kind in _IO_KINDS for r in roles(f, idx))


def reader_rank(idx: ApiIndex, ctor: FunctionDecl, io: bool = False,
                near: str = "") -> tuple[bool, bool, bool, bool, int, int, str]:
    """A sort key for constructors fed the payload.

    Readers in memory (``node_loads``, ``acme_parse``, a buffer with its length) first, then
    whatever opens a file or a descriptor (it reads what it opens), then value wrappers
    (``node_string``, a handle made from a device or a name: text with no length, of which it
    reads nothing), then the simplest; of equals, the one named most like ``near`` (the call the
    object is for): ``doc_read_file`` gets its context from ``doc_create_ctxt``, not from the
    sibling format's ``html_create_ctxt``, whose context it overruns.
    """
    reads = bool(set(idx.verbs(ctor.name)) & READ_VERBS)
    rs = roles(ctor, idx)
    slot = payload_slot(rs)
    sized = slot is not None and rs[slot].pair is not None
    return (not (reads or sized or io), io, not reads, "parse" not in ctor.name.lower(),
            len(ctor.params), -len(os.path.commonprefix([ctor.name, near])), ctor.name)


def share_readers(idx: ApiIndex, fed: list[FunctionDecl], near: str = "") -> list[FunctionDecl]:
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
    return sorted(found, key=lambda c: reader_rank(idx, c, near=near))


_NEEDS_MORE = ("object", "handle", "unsupported", "fd", "path", "file", "callback", "out_ptr")


def values_only(idx: ApiIndex, f: FunctionDecl) -> bool:
    """Whether ``f`` needs nothing but values: no object, handle, file, callback or out-pointer."""
    return not any(r.kind in _NEEDS_MORE for r in roles(f, idx))


def fall_back(pl: Planner, var: str, ctors: list[FunctionDecl], readers: list[FunctionDecl]) -> None:
    """When the share does not read as an object, one is made empty, so the target still runs.

    A share of random bytes rarely parses: the document a query runs on would else gate the
    query, and most inputs would never reach the target. ``var`` holds the reader's result;
    the first constructor needing nothing but values (``doc_new(version)``) makes the stand-in,
    which the same destructor releases. Without one, or when it cannot be built, nothing changes.
    """
    failing = f"if ({var} == NULL) {pl.f.fail()}"
    makers = [c for c in ctors if c not in readers and c.name not in pl.avoid and values_only(pl.idx, c)]
    if failing not in pl.f.setup or not makers:
        return
    at = len(pl.f.setup) - 1 - pl.f.setup[::-1].index(failing)
    start, saved = len(pl.f.setup), snapshot(pl)
    try:
        plan = pl.plan(makers[0], payload=False)
    except Unsupported:
        restore(pl, saved)
        return
    made = pl.f.setup[start:]  # what its arguments need goes before it
    del pl.f.setup[start:]
    pl.f.setup[at:at] = [*made, f"if ({var} == NULL) {var} = {plan.text};"]


def simplicity(idx: ApiIndex, ctor: FunctionDecl, key: str, near: str) -> tuple[bool, int, bool, int]:
    """How plain a constructor of ``key`` is (lower first), for one made without the input.

    First whether it reads another object of the library through a const pointer
    (``ext_create_context(const struct ext_instance *ext, ctx **out)``: a zeroed one of those
    crashes it, where ``ctx_new(dir, options, ctx **out)`` needs nothing), then the parameter
    count, whether it reads a name or text, and the family closest to the caller's.
    """
    rs = roles(ctor, idx)
    reads_object = any(r.kind == "object" and r.type_key not in (None, key)
                       and ckinds.is_const_target(r.param.type) for r in rs)
    text = any(r.kind in ("text", "path", "bytes", "file", "fd") for r in rs)
    return (reads_object, len(ctor.params), text, -len(os.path.commonprefix([ctor.name, near])))
