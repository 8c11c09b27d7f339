"""The fields the library's own code sets on a record before passing it, set on the harness's record.

A zeroed control record (``desc.version = 0``) is rejected by the library on the first check and
only the error path runs. The usage facts (:class:`fuzzkit.usage_models.RecordFields`) say which
fields the library's tests and examples set before the call and to what: a header constant or a
literal as written, the record's own size, or an integer the harness draws from option bytes in
a small range. They are set right after the record is zeroed, in the order the usage sets them;
a field the header does not list, and a pointer given anything but a constant, are left alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from agents.offline import ckinds, type_table
from agents.offline.synth_types import decl_cast
from fuzzkit.usage_models import FieldValue, RecordFields

if TYPE_CHECKING:
    from agents.offline.synth_plan import Planner


def set_usage_fields(pl: Planner, key: str, var: str, into: list[str] | None = None) -> None:
    """Set on ``var`` (a zeroed ``key``) the fields the library's own code sets before its call."""
    found = pl.idx.usage_fields.get(key)
    if found is None:
        return

    def draw(f: FieldValue, ftype: str) -> str:
        ctype = ftype or "int"
        v = pl.var(ctype, f"{f.field.replace('.', '_')}_v")
        pl.f.opts.append(f"{v} = ({decl_cast(ctype)}){pl.f.take_int((f.low, f.high))};")
        return v

    lines = field_lines(var, found, key, draw)
    (pl.f.setup if into is None else into).extend(lines)
    if lines:
        names = ", ".join(line.split(" = ")[0].split(".", 1)[1] for line in lines)
        pl.f.notes.append(f"{var}: {names} set before {found.call}, as the library's code does")


def field_lines(var: str, found: RecordFields, key: str, draw: Callable[[FieldValue, str], str]) -> list[str]:
    """``var.field = value;`` for each field of ``found`` a harness can set on ``var`` (a ``key``).

    ``draw(field, its type or '')``: the expression an input integer is drawn with.
    """
    rec = type_table.active().record(key)
    types = dict(rec.fields) if rec is not None and not rec.opaque else {}
    lines = []
    for f in found.fields:
        if types and f.field.split(".")[0] not in types:
            continue  # the header lists no such field: it would not compile
        ftype = types.get(f.field, "")
        array, pointer = "[" in ftype, bool(ftype) and ckinds.is_pointer(ftype)
        if f.kind in ("constant", "literal") and not array:
            lines.append(f"{var}.{f.field} = {f.value};")
        elif f.kind == "record_size" and not (array or pointer):
            lines.append(f"{var}.{f.field} = sizeof {var};")
        elif f.kind == "input" and not (array or pointer):  # a pointer the usage fills from its own data
            lines.append(f"{var}.{f.field} = {draw(f, ftype)};")
    return lines
