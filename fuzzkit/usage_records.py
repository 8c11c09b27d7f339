"""The fields the library's own code sets on a record before it passes the record to the API.

A "control record" is filled by its caller before the call (``desc.version = ACME_VERSION;
desc.width = w;`` then ``acme_write(&desc, ...)``); zeroed, the library rejects it and only its
error path runs. For each record type the target takes (or its usage sequence holds by value),
the usage functions that pass a local record of that type to the target (else to any call) are
read: the fields at least half of them set before that call, in the order they set them, each
with the value most of them write when it is a header constant or a literal, else an integer
drawn from the input (only for a field known to be an integer; pointers are left alone).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from fuzzkit.api import FunctionDecl
from fuzzkit.usage_index import base_names
from fuzzkit.usage_models import (
    CallSite,
    FieldAssignment,
    FieldValue,
    RecordFields,
    TargetProtocol,
    UsageFunction,
    UsageIndex,
    type_key,
)

INPUT_RANGE = (1, 64)  # an integer field the usage sets from its own data (a width, a count)
MAX_FIELDS = 16
_INTEGER = re.compile(
    r"\b(char|short|int|long|unsigned|signed|size_t|ssize_t|bool|_Bool|enum|u?int\d+_t|u?int_least\d+_t)\b"
)

# (usage function, the record variable, the call taking it)
Evidence = tuple[UsageFunction, str, CallSite]


def value_type(ctype: str) -> str:
    """The record a type names, pointers and qualifiers left out (``const acme_desc *`` -> ``acme_desc``)."""
    return type_key(ctype.replace("*", " ")).strip()


def record_fields(
    index: UsageIndex,
    target: FunctionDecl,
    protocol: TargetProtocol | None,
    api_types: set[str],
    same: Callable[[str], str],
    records: Mapping[str, Mapping[str, str]],
    canonical: Mapping[str, str],
) -> list[RecordFields]:
    """The fields set on each record type ``target`` (or its usage sequence) takes (see the module doc).

    ``records``: record name (tag or typedef) -> field -> type, from the headers.
    """
    candidates = [p.type for p in target.params if p.type.count("*") <= 1]
    if protocol is not None:
        candidates += [t for t in protocol.variables.values() if "*" not in t and "[" not in t]
    out: list[RecordFields] = []
    done: set[str] = set()
    for ctype in candidates:
        want = value_type(same(value_type(ctype)))  # through a pointer typedef (`acme_descp`)
        if want in done or not base_names(ctype) & api_types or ctype.lstrip().startswith("enum "):
            continue
        done.add(want)
        evidence = _evidence(index, target.name, want, same)
        found = _aggregate(evidence, records, canonical) if evidence else []
        if found:
            spelled = Counter(value_type(fn.variables[var]) for fn, var, _c in evidence).most_common(1)[0][0]
            call = Counter(c.function for _f, _v, c in evidence).most_common(1)[0][0]
            out.append(RecordFields(type=spelled, call=call, fields=found, uses=len(evidence)))
    return out


def _local_record(fn: UsageFunction, var: str) -> bool:
    """A record of the function's own: a value on its stack, or a pointer to one (or to a fresh block)."""
    vtype = fn.variables.get(var, "")
    if not vtype or var in fn.params or "[" in vtype:
        return False
    init = fn.inits.get(var, "").strip()
    return "*" not in vtype or vtype.count("*") == 1 and (init.startswith("&") or "alloc" in init)


def _evidence(index: UsageIndex, target: str, want: str, same: Callable[[str], str]) -> list[Evidence]:
    """Per usage function, its first call of ``target`` taking a local record of ``want`` (else of any call).

    Only functions calling the target count when some do.
    """
    at_target: list[Evidence] = []
    elsewhere: list[Evidence] = []
    for fn in index.functions:
        first: Evidence | None = None
        hit: Evidence | None = None
        for c in fn.calls:
            for a in c.args:
                if not a.var or not _local_record(fn, a.var):
                    continue
                if value_type(same(value_type(fn.variables[a.var]))) != want:
                    continue
                if "*" in fn.variables[a.var] and a.address:
                    continue  # `&p`: the call writes the pointer
                first = first or (fn, a.var, c)
                if c.function == target and hit is None:
                    hit = (fn, a.var, c)
        if hit is not None:
            at_target.append(hit)
        elif first is not None:
            elsewhere.append(first)
    return at_target or elsewhere


def _set_before(fn: UsageFunction, var: str, call: CallSite) -> dict[str, FieldAssignment]:
    """Each field ``fn`` sets on ``var`` before ``call``, with the last value it sets (first-set order)."""
    out: dict[str, FieldAssignment] = {}
    for f in fn.fields:
        if f.var == var and f.line < call.line:
            out[f.field] = f  # a dict keeps the first-set order
    return out


def _aggregate(evidence: Sequence[Evidence], records: Mapping[str, Mapping[str, str]],
               canonical: Mapping[str, str]) -> list[FieldValue]:
    """The fields at least half the usage functions set, in the order the fullest of them sets them."""
    per_fn = [(fn, var, _set_before(fn, var, call)) for fn, var, call in evidence]
    counts = Counter(name for _f, _v, fields in per_fn for name in fields)
    kept = {name for name, n in counts.items() if 2 * n >= len(per_fn)}
    fullest = max(per_fn, key=lambda e: len(kept & set(e[2])))
    order = [n for n in fullest[2] if n in kept]
    order += [n for _f, _v, fields in per_fn for n in fields if n in kept and n not in order]
    out = []
    for name in dict.fromkeys(order):
        seen = [(fn, var, fields[name]) for fn, var, fields in per_fn if name in fields]
        value = _value(name, seen, records, canonical)
        if value is not None:
            out.append(value)
    return out[:MAX_FIELDS]


def _value(name: str, seen: list[tuple[UsageFunction, str, FieldAssignment]],
           records: Mapping[str, Mapping[str, str]], canonical: Mapping[str, str]) -> FieldValue | None:
    """What a harness sets ``name`` to: the usage's constant or literal, the record's size, an input int."""
    fn, var, first = seen[0]
    if all(re.fullmatch(rf"sizeof\s*\(?\s*(\*\s*)?{re.escape(v)}\s*\)?", a.value) for _f, v, a in seen):
        return FieldValue(field=name, kind="record_size")
    fixed = Counter((a.kind, a.value) for _f, _v, a in seen if a.kind in ("constant", "literal"))
    if fixed and 2 * sum(fixed.values()) >= len(seen):
        (kind, text), _n = fixed.most_common(1)[0]
        return FieldValue(field=name, kind="constant" if kind == "constant" else "literal", value=text)
    ftype = field_type(records, canonical, value_type(fn.variables[var]), name)
    if not ftype and re.fullmatch(r"[A-Za-z_]\w*", first.value):
        ftype = fn.variables.get(first.value, "")  # `desc.width = w;` with `int w`
    if ftype and is_integer(ftype, canonical):
        return FieldValue(field=name, kind="input", low=INPUT_RANGE[0], high=INPUT_RANGE[1])
    return None  # a pointer, or a value of unknown type: left as zero


def field_type(records: Mapping[str, Mapping[str, str]], canonical: Mapping[str, str], record: str,
               path: str) -> str:
    """The type of field ``path`` (``info.width``) of ``record``, from the headers ('' if unknown)."""
    ctype = record
    for part in path.split("."):
        name = re.sub(r"^(struct|union)\s+", "", type_key(ctype)).strip()
        fields = records.get(name) or records.get(re.sub(r"^(struct|union)\s+", "", canonical.get(name, "")))
        if not fields or part not in fields:
            return ""
        ctype = fields[part]
    return ctype


def is_integer(ctype: str, canonical: Mapping[str, str]) -> bool:
    """Whether ``ctype`` is an integer (or enum) value, through its typedef if need be."""
    if "*" in ctype or "[" in ctype or "(" in ctype:
        return False
    if _INTEGER.search(ctype):
        return True
    under = canonical.get(type_key(ctype), "")
    return bool(under) and "*" not in under and "[" not in under and bool(_INTEGER.search(under))
