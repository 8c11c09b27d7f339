"""Parameters declared as fixed-size arrays (``const uint8_t key[32]``, ``uint8_t hash[64]``).

Also ``const char fourcc[4]``. The header's type (``uint8_t[64]``) is no type a local can be
declared with, and the callee reads or writes exactly that many elements whatever the harness
passes. An input array is a local of that size filled from the fuzz input (from its start when
the call takes no other input, else from option bytes); an output array is a zeroed local of
that size.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from agents.offline import ckinds
from agents.offline.synth_types import Role
from fuzzkit.api import Param

if TYPE_CHECKING:
    from agents.offline.synth_kinds import Call

ARRAY = re.compile(r"^(?P<elem>[^\[\]]+?)\s*\[(?P<n>\d+)\]$")
MAX_ELEMENTS = 1 << 16


def mark_arrays(params: list[Param], out: list[Role | None]) -> None:
    """Give each fixed-size array parameter its role: ``fixed_in`` (const elements) or ``fixed_out``."""
    for i, p in enumerate(params):
        m = ARRAY.match(p.type.strip())
        if out[i] is not None or not m or not 0 < int(m.group("n")) <= MAX_ELEMENTS:
            continue
        kind = "fixed_in" if ckinds.is_const_target(m.group("elem") + " *") else "fixed_out"
        out[i] = Role(kind, i, p, choices=(int(m.group("n")),))


def fixed_array(c: Call, r: Role) -> None:
    """A local array of the parameter's size: zeroed, then filled from the input for an input one."""
    m = ARRAY.match(r.param.type.strip())
    assert m is not None
    elem = re.sub(r"\bconst\b", "", m.group("elem")).strip()
    n = r.choices[0]
    v = c.pl.f.name(r.param.name or "array")
    c.pl.f.decls += [f"{elem} {v}[{n}];", f"memset({v}, 0, sizeof {v});"]
    c.pl.f.include("<string.h>")
    if r.kind == "fixed_in" and r.index == c.main:
        c.pl.fed = True
        c.pl.f.setup.append(f"memcpy({v}, data, size < sizeof {v} ? size : sizeof {v});")
    elif r.kind == "fixed_in":
        c.pl.f.need("input")
        c.pl.f.opts.append(f"for (size_t lf_k = 0; lf_k < sizeof {v}; lf_k++) "
                           f"((unsigned char *){v})[lf_k] = lf_take_byte(&{c.pl.f.cursor});")
    c.args[r.index] = v
