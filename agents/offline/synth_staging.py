"""Input staged in the library's own buffer: ``get_buffer(p, len)``, then ``parse_buffer(p, len, last)``.

A streaming parser may take no data pointer at all: the caller asks it for a buffer of ``len``
bytes, fills it, and tells it how many bytes to parse. Called with a length from option bytes
and nothing staged, the parser reads a buffer that holds no input (or reads past what an
earlier call left in it); the input never reaches it. The getter is recognised by its shape
(same object first, an integer size, a writable ``void *``/byte pointer back, ``buffer`` in its
name), the consumer by taking the object and integers only.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from agents.offline import ckinds
from agents.offline.synth_finders import words
from agents.offline.synth_types import decl_cast
from fuzzkit.api import FunctionDecl

if TYPE_CHECKING:
    from agents.offline.synth_api import ApiIndex
    from agents.offline.synth_kinds import Call

_BYTES = ("void", "char", "unsigned char")
_LENGTH = re.compile(r"^(len|length|size|n|nbytes|count|bytes)$", re.I)


def staging_getter(idx: ApiIndex, fn: FunctionDecl) -> tuple[FunctionDecl, int] | None:
    """The buffer getter that stages ``fn``'s input, and ``fn``'s length parameter; or None."""
    if len(fn.params) < 2:
        return None
    head = fn.params[0].type
    if not (ckinds.is_pointer(head) or idx.is_handle(ckinds.base_name(head))):
        return None  # the object it parses into comes first
    rest = fn.params[1:]
    if any(ckinds.is_pointer(p.type) for p in rest):
        return None  # it takes its data (or an out-parameter) itself
    length = next((i + 1 for i, p in enumerate(rest)
                   if ckinds.is_integer(p.type) and _LENGTH.match(p.name)), None)
    if length is None:
        return None
    first = ckinds.base_name(fn.params[0].type)
    for g in idx.api:
        ret = g.return_type
        if (g.name != fn.name and len(g.params) == 2 and ckinds.base_name(g.params[0].type) == first
                and ckinds.is_integer(g.params[1].type) and ckinds.pointer_depth(ret) == 1
                and not ckinds.is_const_target(ret) and ckinds.canonical_base(ret) in _BYTES
                and {"buffer", "buf"} & set(words(g.name))):
            return g, length
    return None


def stage_input(c: Call, getter: FunctionDecl, length: int) -> None:
    """Stage the payload through ``getter`` before ``c``'s call, whose ``length`` gets its size."""
    pl = c.pl
    buf = pl.var("void *", "stage", "NULL")
    pl.f.setup.append(f"{buf} = {getter.name}({c.args[0]}, (int)size);")
    pl.f.setup.append(f"if ({buf} == NULL) {pl.f.fail()}")
    pl.f.setup.append(f"if (size > 0) memcpy({buf}, data, size);")
    pl.f.include("<string.h>")
    pl.f.calls.append(getter.name)
    c.args[length] = f"({decl_cast(c.fn.params[length].type)})size"
    pl.fed = True
