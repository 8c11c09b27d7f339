"""A settings record nothing constructs, made usable: what zero leaves undefined is set.

A constructor that takes a settings record (``session_create(&s, &policy)``) rejects an
all-zero one when zero means "not set": an enum field whose zero member is named undefined,
a sub-record of cipher settings the API fills with a default setter, a key pointer left NULL.
A zeroed record with no constructor or initializer of its own gets, field by field:

- an enum whose zero member is named as no value (``x_undefined``, ``X_INVALID``): one of its other
  members, drawn from option bytes;
- a record field the API has a one-argument setter of defaults for (``x_policy_set_default(T *)``):
  that call on it;
- a byte pointer named as a key or secret: 64 bytes from option bytes.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from agents.offline import ckinds, type_table
from agents.offline.synth_choices import as_choices, enum_members, enum_values, name_words
from agents.offline.synth_finders import words

if TYPE_CHECKING:
    from agents.offline.synth_plan import Planner

_UNSET = {"undefined", "unknown", "invalid", "unset", "unspecified"}  # not "none": often a real choice
_SECRET = re.compile(r"^(key|keys|secret|master_?key|salt|password|passphrase)$", re.I)
KEY_BYTES = 64


def settle_fields(pl: Planner, key: str, var: str, depth: int = 0) -> None:
    """Set the fields of the zeroed ``var`` (a ``key``) that zero leaves undefined.

    A record field with no setter of defaults is settled the same way (``policy.ssrc.type``),
    two levels down at most.
    """
    table = type_table.active()
    rec = table.record(key)
    if rec is None or rec.opaque:
        return
    for name, ftype in rec.fields:
        if ckinds.pointer_depth(ftype) == 0 and table.record(ftype) is not None:
            setter = _default_setter(pl, ftype, name)
            if setter is not None:
                pl.f.setup.append(f"{setter}(&{var}.{name});")
                pl.f.calls.append(setter)
            elif depth < 2:
                settle_fields(pl, ftype, f"{var}.{name}", depth + 1)
        elif ckinds.pointer_depth(ftype) == 0 and ckinds.is_enum_like(ftype):
            _enum_field(pl, var, name, ftype)
        elif ckinds.pointer_depth(ftype) == 1 and ckinds.is_bytes(ftype) and _SECRET.match(name):
            pl.f.need("input")
            buf = pl.f.name(f"{name}_bytes")
            pl.f.decls.append(f"unsigned char {buf}[{KEY_BYTES}] = {{0}};")
            pl.f.opts.append(f"for (int lf_k = 0; lf_k < {KEY_BYTES}; lf_k++) {buf}[lf_k] = "
                             f"lf_take_byte(&{pl.f.cursor});")
            pl.f.setup.append(f"{var}.{name} = ({ftype}){buf};")


def _enum_field(pl: Planner, var: str, name: str, ftype: str) -> None:
    table = type_table.active()
    members = enum_members(ftype)
    zero = [m for m in members if table.constants.get(m) == 0]
    if not zero or not set(name_words(zero[0])) & _UNSET:
        return
    choices = as_choices(tuple(dict.fromkeys(v for v in enum_values(ftype) if v != 0)))
    if choices:
        pl.f.opts.append(f"{var}.{name} = ({ftype}){pl.f.take_int(choices)};")


def _default_setter(pl: Planner, rtype: str, field: str) -> str | None:
    """The API's one-argument function that fills a ``rtype`` with defaults, if it has one.

    Of several, the one named for the field (``set_rtcp_default`` for a field ``rtcp``).
    """
    key = pl.idx.type_key(f"{rtype} *")
    found = [f.name for f in pl.idx.api if len(f.params) == 1 and f.name not in pl.avoid
             and pl.idx.type_key(f.params[0].type) == key and "default" in words(f.name)
             and not ckinds.is_const_target(f.params[0].type)]
    return sorted(found, key=lambda n: (field.lower() not in words(n), len(n)))[0] if found else None


def listed(name: str, key: str) -> bool:
    """A parameter named in the plural (``filters``, ``entries``): an array, not one record.

    Not a record of function pointers (``callbacks``, ``hooks``) nor of settings (``options``).
    """
    one = re.search(r"(options|settings|params|args|attrs|prefs|opts|flags|stats|status|ss)$", name, re.I)
    record = type_table.active().record(key)
    return bool(re.search(r"[a-z]s$", name)) and not one and not (record and record.functions)
