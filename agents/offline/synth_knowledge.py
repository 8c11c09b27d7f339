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
from agents.offline.type_table import TypeTable, active

# Parameter name -> values a fuzzer should choose from (lo, hi) or an explicit set.
INT_CHOICES: list[tuple[str, tuple[int, int] | tuple[int, ...]]] = [
    (r"^level$", (-1, 9)),
    (r"^(which|index|idx|pos|position|item_index)$", (-1, 7)),
    (r"^(count|n|num|nitems|nmemb)$", (0, 8)),
    (r"(fmt|format|pretty|recurse|case_sensitive|implicit|canonical|unicode|require|"
     r"null_terminated|is_final|isFinal|final|boolean)", (0, 1)),
    (r"^indent$", (-1, 10)),
    (r"^width$", (-1, 200)),
    (r"^(c|ch|byte|value)$", (0, 255)),
    (r"^(whence)$", (0, 2)),
    (r"(len|size|length|bytes)", (0, 4096)),
]  # fmt: skip
DEFAULT_INT = (0, 255)
DEFAULT_ENUM = (0, 7)
# Float parameter name -> the documented range a fuzzer should stay in (a codec's quality).
FLOAT_CHOICES: list[tuple[str, tuple[int, int]]] = [
    (r"(quality|percent)", (0, 100)),
]


def float_choices(param_name: str) -> tuple[int, int] | None:
    """The whole-number range for a float parameter named like a bounded setting, if any."""
    return next((c for pattern, c in FLOAT_CHOICES if re.search(pattern, param_name, re.I)), None)


def option_name(function: str, index: int, name: str) -> str:
    """A parameter's name, or for an unnamed one (``arg2``) the name the header's wrapper gives it."""
    if name and not re.fullmatch(r"arg\d+", name):  # as the prototype parser names unnamed ones
        return name
    return active().arg_names.get(function, {}).get(index, "")




def _words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return [w.lower() for w in re.split(r"[_\W]+", spaced) if w]


def _constant_choices(param_name: str, table: TypeTable) -> tuple[int, ...] | None:
    """Values of the header's constant group named like the parameter (``mode`` -> ``X_MODE_*``).

    A ``MAX_<name>`` constant alone bounds the range from 0 instead.
    """
    pwords = [w for w in _words(param_name) if len(w) > 2]
    if not pwords:
        return None
    joined = "".join(pwords)
    for group in table.groups:
        named = [c for c in group if set(pwords) <= set(_words(c)) or joined in _words(c)]
        if not named or _status_group(group, table):
            continue  # error codes named after a parameter (`X_INVALID_FLAGS`) are not its values
        if len(group) == 1 and _words(group[0])[:1] == ["max"]:
            return tuple(range(0, min(table.constants[group[0]], 64) + 1))
        values = _value_set(group, table)
        if values:
            return values
    return None


def _value_set(names: list[str], table: TypeTable) -> tuple[int, ...]:
    """The distinct values of these constants, as an option set (empty past 64 values)."""
    values = tuple(dict.fromkeys(table.constants[c] for c in names if c in table.constants))
    return values if len(values) <= 64 else ()


def _as_choices(values: tuple[int, ...]) -> tuple[int, ...]:
    """A value set as option choices read it: two values would read as a range, so one repeats."""
    return values if len(values) != 2 else (*values, values[-1])


def enum_members(ctype: str) -> list[str]:
    """The constants the header's enum behind ``ctype`` (a typedef or an ``enum`` tag) defines."""
    table = active()
    base = ckinds.base_name(ctype)
    enum = table.canonical.get(base, "").replace("enum ", "", 1) or base
    return table.enum_members.get(enum) or table.enum_members.get(base) or []


def enum_values(ctype: str) -> tuple[int, ...]:
    """The values the header's enum type defines, as an option set (empty if unknown)."""
    return _as_choices(_value_set(enum_members(ctype), active()))


def _status_group(group: list[str], table: TypeTable) -> bool:
    """A group of status codes: one is named like success, or most values are negative."""
    if any(_words(c)[-1:] and _words(c)[-1] in ("ok", "success") for c in group):
        return True
    values = [table.constants[c] for c in group if c in table.constants]
    return bool(values) and sum(v < 0 for v in values) * 2 > len(values)


def int_choices(param_name: str, function: str) -> tuple[int, int] | tuple[int, ...]:
    """The range ``(lo, hi)`` (2-tuple) or explicit value set (other length) for an int param."""
    from_header = _constant_choices(param_name, active())
    if from_header is not None:
        return _as_choices(from_header)
    for pattern, choice in INT_CHOICES:
        if re.search(pattern, param_name):
            return choice
    return DEFAULT_INT


_COUNTING = re.compile(r"(^|_)(read|write|fread|fwrite|puts|putc|printf|get|put)s?$", re.I)


def _status_constant(table: TypeTable, names: tuple[str, ...] = ("OK", "SUCCESS")) -> str | None:
    """The library's one success status constant (``X_OK``), if the header has exactly one."""
    found = [c for c in table.constants if _words(c)[-1:] and _words(c)[-1].upper() in names
             and len(_words(c)) <= 2]
    return found[0] if len(found) == 1 else None


def documented_success(note: str, rc: str, table: TypeTable) -> str | None:
    """A success test from a documented return convention, if the note states one."""
    text = note.lower()
    for const in re.findall(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b", note):
        if const in table.constants and re.search(rf"{const.lower()}[^.,;]*\b(on |if )?succe", text):
            return f"{rc} == {const}"
    if re.search(r"\b1\b[^.]*succe|succe[^.]*\breturns? (@c )?1\b", text):
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
    if _COUNTING.search(function) or any(w in ("read", "write") for w in _words(function)):
        return f"{rc} > 0"  # read/write-style functions return how much they moved
    enum = table.canonical.get(ckinds.base_name(return_type), "")
    own = [c for c in enum_members(return_type) if _words(c)[-1:] and _words(c)[-1] in ("ok", "success")]
    if len(own) == 1:
        return f"{rc} == {own[0]}"  # the returned enum's own success member
    status = _status_constant(table)
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
    ptr = next(((n, t) for n, t in fields if "*" in t and side in _words(n)
                and (ckinds.is_bytes(t) or ckinds.is_string(t))), None)
    count = next(((n, t) for n, t in fields if "*" not in t and side in _words(n)
                  and set(_words(n)) & {"avail", "left", "len", "size", "remaining"}
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
    finish = next((c for c in table.constants if _words(c)[-1:] == ["finish"]), None)
    ok = _status_constant(table) or _status_constant(table, ("RUN", "OK"))
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
        if ("root" in _words(f.name) and ckinds.is_pointer(f.return_type) and len(f.params) == 1
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
INVERSES = [("print", "parse"), ("Print", "Parse"), ("dump", "load"), ("format", "parse"),
            ("serialize", "deserialize"), ("encode", "decode"), ("pack", "unpack"),
            ("escape", "unescape"), ("encrypt", "decrypt"), ("compress", "uncompress"),
            ("compress", "decompress")]  # fmt: skip
INVERSE_PREFIXES = ("de", "in", "un", "en", "")


def retained_strings(function: str) -> tuple[str, ...]:
    """String parameters the function keeps by reference (from the documentation notes)."""
    return ("*",) if function in active().retains else ()


LITERAL_KEYS = ("", "a", "key", "name", "0", "items", "\\u00e9", "x y")
