"""Conventions a C programmer knows by heart, and what the prompt's Types section says.

General conventions (value ranges of common parameter names, success tests by return shape,
word pairs naming inverse operations) live here as mechanisms; everything about a particular
library — its status constants, stream structs, end-of-stream markers, callback signatures,
documented return values — is read from the ``## Types`` section of the prompt
(:mod:`agents.offline.type_table`), so unknown libraries get the same treatment as known ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agents.offline import ckinds
from agents.offline.synth_choices import enum_members, name_words
from agents.offline.type_table import TypeTable, active
from fuzzkit.vocabulary import alternation, inverse_pairs

_COUNTING = re.compile(rf"(^|_){alternation('counting')}s?$", re.I)


def status_constant(table: TypeTable, names: tuple[str, ...] = ("OK", "SUCCESS")) -> str | None:
    """The library's one success status constant (``X_OK``), if the header has exactly one."""
    found = [c for c in table.constants if name_words(c)[-1:] and name_words(c)[-1].upper() in names
             and len(name_words(c)) <= 2]
    return found[0] if len(found) == 1 else None


def documented_success(note: str, rc: str, table: TypeTable) -> str | None:
    """A success test from a documented return convention, if the note states one."""
    text = note.lower()
    for const in re.findall(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b", note):
        if const in table.constants and re.search(rf"{const.lower()}[^.,;]*\b(on |if )?succe", text):
            return f"{rc} == {const}"
    if re.search(r"(?<![-\w])1\b[^.]*succe|succe[^.]*\breturns? (@c )?1\b", text):  # not "-1 if ..."
        return rc
    if re.search(r"\b0\b[^.]*\bon succe|succe[^.]*\breturns? (@c )?0\b|zero on succe", text):
        return f"{rc} == 0"
    if re.search(r"negative[^.]*(error|fail)", text):
        return f"{rc} >= 0"
    return None


def success_test(function: str, return_type: str, rc: str, bool_like: bool, pointer: bool) -> str:
    """A C condition that is true when ``function`` returned success in ``rc``."""
    table = active()
    documented = documented_success(table.returns.get(function, ""), rc, table)
    if documented:
        return documented
    if pointer:
        return f"{rc} != NULL"
    if bool_like:
        return rc
    if _COUNTING.search(function) or any(w in ("read", "write") for w in name_words(function)):
        return f"{rc} > 0"  # read/write-style functions return how much they moved
    enum = table.canonical.get(ckinds.base_name(return_type), "")
    own = [c for c in enum_members(return_type) if name_words(c)[-1:] in (["ok"], ["success"])]
    if len(own) == 1:
        return f"{rc} == {own[0]}"  # the returned enum's own success member
    status = status_constant(table)
    if status and (enum.startswith("enum ") or ckinds.is_integer(return_type)):
        return f"{rc} == {status}"
    return f"{rc} >= 0"


@dataclass(frozen=True)
class StreamFields:
    """Cursor fields of a caller-managed stream struct and its result codes."""

    next_in: str
    avail_in: str
    next_out: str
    avail_out: str
    in_cast: str
    out_cast: str
    avail_cast: str
    keep_going: str  # condition on {rc} meaning "call again"
    finish: str  # the flush/action value that finishes the stream


def _cursor(fields: tuple[tuple[str, str], ...], side: str) -> tuple[str, str, str, str] | None:
    """(pointer field, its type, count field, its type) for the ``in`` or ``out`` side."""
    ptr = next(((n, t) for n, t in fields if "*" in t and side in name_words(n)
                and (ckinds.is_bytes(t) or ckinds.is_string(t))), None)
    count = next(((n, t) for n, t in fields if "*" not in t and side in name_words(n)
                  and set(name_words(n)) & {"avail", "left", "len", "size", "remaining"}
                  and ckinds.is_integer(t)), None)
    if ptr is None or count is None:
        return None
    return ptr[0], ptr[1], count[0], count[1]


def stream_fields(type_key: str | None) -> StreamFields | None:
    """The stream struct ``type_key`` by its fields: input pointer + count, output pointer + count."""
    if not type_key:
        return None
    table = active()
    record = table.record(type_key)
    if record is None or record.opaque:
        return None
    cin, cout = _cursor(record.fields, "in"), _cursor(record.fields, "out")
    if cin is None or cout is None:
        return None
    finish = next((c for c in table.constants if name_words(c)[-1:] == ["finish"]), None)
    ok = status_constant(table) or status_constant(table, ("RUN", "OK"))
    keep = f"{{rc}} == {ok}" if ok else "{rc} == 0"
    return StreamFields(cin[0], cin[2], cout[0], cout[2], cin[1].replace("const ", "", 1)
                        if not cin[1].startswith("const") else cin[1], cout[1], cin[3], keep,
                        finish or "1")


def end_test(type_key: str, api: list | tuple = ()) -> str | None:
    """A C condition (on ``{v}``) meaning a stepped machine's out-struct marks the end.

    By the struct's ``type`` field: the ``..._END`` constant paired with the outermost
    ``..._START`` of that enum; else a getter of the struct's root returning NULL.
    """
    table = active()
    record = table.record(type_key)
    if record is None:
        return None
    for name, ftype in record.fields:
        consts = enum_members(ftype)
        if name == "type" and consts:
            starts = sorted((table.constants[c], c) for c in consts if "START" in c.upper())
            for _v, start in starts:
                end = start.upper().replace("START", "END")
                match = next((c for c in consts if c.upper() == end), None)
                if match:
                    return f"{{v}}.{name} == {match}"
    for f in api:
        if ("root" in name_words(f.name) and ckinds.is_pointer(f.return_type) and len(f.params) == 1
                and ckinds.base_name(f.params[0].type) == type_key):
            return f"{f.name}(&{{v}}) == NULL"
    return None


@dataclass(frozen=True)
class Callback:
    """A callback type's C signature and what a harness implementation should return."""

    return_type: str
    params: tuple[str, ...]
    shape: str  # reader | writer | pull | sink
    ok_value: str


def always_consumes(function: str) -> bool:
    """Whether the documentation says ``function`` takes its object even when it fails."""
    return function in active().consumes


# Running-value functions: the documented first call of a checksum takes no data.
def digest_init(fn_name: str, params: int) -> str:
    """The initial running value of a checksum-style function (``f(0, NULL, 0)``)."""
    return f"{fn_name}(0, NULL, 0)" if params == 3 else "0"


# Word pairs that name a function and its inverse; prefixes that turn a verb into its inverse.
INVERSES = list(inverse_pairs())
INVERSE_PREFIXES = ("de", "in", "un", "en", "")


def retained_strings(function: str) -> tuple[str, ...]:
    """String parameters the function keeps by reference (from the documentation notes)."""
    return ("*",) if function in active().retains else ()


LITERAL_KEYS = ("", "a", "key", "name", "0", "items", "\\u00e9", "x y")
