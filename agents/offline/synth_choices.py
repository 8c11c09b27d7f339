"""Which values an option parameter takes: a documented range, the header's constants, a default.

A parameter named like a well-known setting gets that setting's range (a compression level,
an index); a parameter the header gives a group of constants for (named like the parameter, or
after the function that takes it) gets those values. Everything about a particular library comes
from the prompt's ``## Types`` section (:mod:`agents.offline.type_table`).
"""

from __future__ import annotations

import re

from agents.offline import ckinds
from agents.offline.type_table import TypeTable, active
from fuzzkit.header_facts import OPTION_PARAM

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
    # a memory limit of a few bytes stops every input at once: 64 MiB to 1 GiB
    (r"(mem_?limit|memory_?limit|max_?mem(ory)?$)", (1 << 26, 1 << 28, 1 << 30)),
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


def name_words(name: str) -> list[str]:
    """The lower-case words of an identifier (``LIB_OPEN_FLAG``, ``libOpenFlag``)."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return [w.lower() for w in re.split(r"[_\W]+", spaced) if w]


# A flag that hands the caller's buffer to the library (to free or reallocate on its own):
# a harness that frees what it passed, or passed memory it does not own, breaks when it is set.
# A word of the name starts with it (`X_FREEONCLOSE`, `X_RESIZEABLE`), so `X_SHUTDOWN` is not one.
OWNERSHIP_FLAG = re.compile(r"(^|_)(FREE|OWN|TAKE|STEAL|RESIZ|REALLOC|NO_?COPY|ZERO_?COPY)", re.I)
# A flag telling the library to skip validating its input (`X_NO_UTF_CHECK`): the caller then
# promises valid input, which fuzz data is not, and a read past it is the harness's fault.
TRUSTING_FLAG = re.compile(r"(^|_)(NO_?(\w+_)?CHECK|UNCHECKED|TRUSTED|SKIP_?VALID\w*)(_|$)", re.I)


def _read_mode(param_name: str, function: str, table: TypeTable) -> tuple[int, ...] | None:
    """``open(path, int mode, ...)`` reading the input: the header's read mode (``X_READ``).

    The constant named for reading (``..._READ``, ``..._RDONLY``, ``..._READONLY``) sharing
    most words with the function, then the shortest: ``X_SET_DITHER_ON_READ`` is a command, not a
    mode. Other values open it for writing, and an open failing for every input reaches nothing.
    """
    fwords = set(name_words(function))
    if param_name.lower() != "mode" or "open" not in fwords:
        return None
    reads = sorted((c for c in table.constants if name_words(c)[-1:] in (["read"], ["rdonly"], ["readonly"])),
                   key=lambda c: (-len(fwords & set(name_words(c))), len(name_words(c)), c))
    return (table.constants[reads[0]],) if reads else None


def _function_group(param_name: str, function: str, table: TypeTable) -> tuple[int, ...] | None:
    """``f(..., unsigned flags)``: the values of the constant group named after ``f`` itself.

    ``lib_attach(..., flags)`` takes ``LIB_ATTACH_*``. Flags that make the library own
    the caller's memory are left out; a bit set also allows 0 (no flag).
    """
    if not (function and OPTION_PARAM.search(param_name)):
        return None
    # The function's words past the library's prefix (`lib_`), as in the constants' names.
    fwords = {w for w in name_words(function)[1:] if len(w) >= 4}
    if not fwords:
        return None
    for group in table.groups:
        if _status_group(group, table):
            continue
        named = set.intersection(*({w for w in name_words(c)[1:] if len(w) >= 4} for c in group))
        if len(group) < 2 or not fwords <= named:
            continue  # every constant of the group carries the function's words
        kept = [c for c in group if not OWNERSHIP_FLAG.search(c)]
        values = _value_set(kept, table)
        if not values:
            continue
        if re.search("flag", param_name, re.I) and all(v > 0 and v & (v - 1) == 0 for v in values):
            values = (0, *values)
        return values
    return None


def _constant_choices(param_name: str, table: TypeTable, function: str = "") -> tuple[int, ...] | None:
    """Values of the header's constant group named like the parameter (``mode`` -> ``X_MODE_*``).

    A group named after the function that takes it comes first (see :func:`_function_group`);
    a ``MAX_<name>`` constant alone bounds the range from 0 instead.
    """
    by_function = _read_mode(param_name, function, table) or _function_group(param_name, function, table)
    if by_function is not None:
        return by_function
    pwords = [w for w in name_words(param_name) if len(w) > 2]
    if not pwords:
        return None
    joined = "".join(pwords)
    for group in table.groups:
        named = [c for c in group if set(pwords) <= set(name_words(c)) or joined in name_words(c)]
        if not named or _status_group(group, table):
            continue  # error codes named after a parameter (`X_INVALID_FLAGS`) are not its values
        if len(group) == 1 and name_words(group[0])[:1] == ["max"]:
            return tuple(range(0, min(table.constants[group[0]], 64) + 1))
        values = _value_set(group, table)
        if values:
            return values
    return None


def _value_set(names: list[str], table: TypeTable) -> tuple[int, ...]:
    """The distinct values of these constants, as an option set (empty past 64 values)."""
    values = tuple(dict.fromkeys(table.constants[c] for c in names if c in table.constants))
    return values if len(values) <= 64 else ()


def as_choices(values: tuple[int, ...]) -> tuple[int, ...]:
    """A value set as option choices read it: two values would read as a range, so one repeats."""
    return values if len(values) != 2 else (*values, values[-1])


def enum_members(ctype: str) -> list[str]:
    """The constants the header's enum behind ``ctype`` (a typedef or an ``enum`` tag) defines."""
    table = active()
    base = ckinds.base_name(ctype)
    enum = table.canonical.get(base, "").replace("enum ", "", 1) or base
    return table.enum_members.get(enum) or table.enum_members.get(base) or []


_COUNTS = {"num", "count", "number", "nb", "last", "end", "max", "limit", "sentinel", "size"}


def enum_values(ctype: str) -> tuple[int, ...]:
    """The values the header's enum type defines, as an option set (empty if unknown).

    Members the header marks as no value to pass are left out: a reserved ``_NAME`` (a "not
    found" marker, a ``_NUM_PLUS_ONE``) and a last member that counts the ones before it
    (``X_KIND_COUNT = 5`` after five kinds), which index past the library's tables.
    """
    table = active()
    members = enum_members(ctype)
    kept = [c for i, c in enumerate(members) if not c.startswith("_") and not (
        i == len(members) - 1 and i and table.constants.get(c) == i and set(name_words(c)) & _COUNTS)]
    return as_choices(_value_set(kept or members, table))


def _status_group(group: list[str], table: TypeTable) -> bool:
    """A group of status codes: one is named like success, or most values are negative."""
    if any(name_words(c)[-1:] and name_words(c)[-1] in ("ok", "success") for c in group):
        return True
    values = [table.constants[c] for c in group if c in table.constants]
    return bool(values) and sum(v < 0 for v in values) * 2 > len(values)


# A status code by its name (`rc`, `errnum`), or any integer a describer of statuses takes
# (`lib_strerror(int)`, `lib_get_error_message(int code, char *buf, size_t len)`).
STATUS_PARAM = re.compile(r"^(rc|ret|retval|err|errnum|errcode|error_?code|error|status|status_?code)$", re.I)
DESCRIBER = {"strerror", "errstr", "error", "err", "errmsg", "status"}


def _status_choices(param_name: str, function: str, table: TypeTable) -> tuple[int, ...] | None:
    """The header's status codes for a parameter that is one, as values or a ``(lo, hi)`` range.

    A 0..255 default never reaches the negative codes most libraries use, so a function that
    names a status (``lib_strerror(int rc)``) described only the few it was given.
    """
    # Unnamed (`arg0`) or too generic to say by itself (`code`): the function's name decides.
    generic = not param_name or bool(re.fullmatch(r"arg\d+|code", param_name))
    if not (STATUS_PARAM.search(param_name) or (generic and DESCRIBER & set(name_words(function)))):
        return None
    values = sorted({table.constants[c] for g in table.groups if _status_group(g, table)
                     for c in g if c in table.constants})  # fmt: skip
    if len(values) > 64 and values[-1] - values[0] < 65536:
        return (values[0], values[-1])
    return as_choices(tuple(values)) if 1 < len(values) <= 64 else None


def int_choices(param_name: str, function: str) -> tuple[int, int] | tuple[int, ...]:
    """The range ``(lo, hi)`` (2-tuple) or explicit value set (other length) for an int param."""
    status = _status_choices(param_name, function, active())
    if status is not None:
        return status
    from_header = _constant_choices(param_name, active(), function)
    if from_header is not None:
        return as_choices(from_header)
    for pattern, choice in INT_CHOICES:
        if re.search(pattern, param_name):
            return choice
    return DEFAULT_INT


def high_flags(param_name: str, ctype: str) -> tuple[int, ...]:
    """The header's single-bit flags above 255 an option word may carry (empty: not one).

    ``compile(pattern, len, uint32_t options, ...)`` with no constant group named for it took
    0..255, so a flag such as a UTF mode at bit 19 was never set. An option word (named like
    flags/options, or an unnamed 32-bit unsigned integer: not a size) gets one of the header's
    high single-bit values (or, half the time, none) on top of its low byte; flags that hand
    the caller's memory to the library, or skip validating the input, are left out.
    """
    if not _option_word(param_name, ctype):
        return ()
    table = active()
    names = [c for g in table.groups if not _status_group(g, table) for c in g]
    names += [c for members in table.enum_members.values() for c in members]
    # Below the sign bit of an int: the harness keeps the values in an int table.
    bits = min(ckinds.integer_bits(ctype), 32) - 1
    values = sorted({v for c in names if (v := table.constants.get(c, 0)) > 255 and _usable_flag(c, v, bits)})
    return tuple(values[:63])


def _usable_flag(name: str, value: int, bits: int) -> bool:
    """A single-bit value below ``1 << bits`` that neither hands memory over nor trusts the input.

    Nor the bit of a flag whose comment names a field of an argument the call then reads (the
    notes' ``field_flags``), under whichever constant's name: the harness leaves the fields of
    what it passes zeroed.
    """
    return 0 < value < (1 << bits) and value & (value - 1) == 0 \
        and not OWNERSHIP_FLAG.search(name) and not TRUSTING_FLAG.search(name) \
        and value not in active().needed_bits


def _option_word(param_name: str, ctype: str) -> bool:
    """Named like flags/options, or an unnamed 32-bit unsigned integer (not a size)."""
    unnamed = not param_name or bool(re.fullmatch(r"arg\d+", param_name))
    return bool(OPTION_PARAM.search(param_name)) or (unnamed and ckinds.is_unsigned(ctype)
                                                     and ckinds.integer_bits(ctype) == 32)


def scoped_flags(function: str, param_name: str, ctype: str) -> int:
    """The bits the header's comments give ``function``'s option word (0: they say nothing).

    ``exec(code, subject, len, uint32_t options)`` drawing its low byte from every flag in the
    header mostly passed bits meant for the compiler, and the call returned at its option
    check. The flags under a comment naming ``function`` (``/* flags of lib_exec() */``), less
    those marked for other functions only or not for this one, are its bits; flags that hand
    the caller's memory over or skip checking the input are left out.
    """
    if not _option_word(param_name, ctype):
        return 0
    table = active()
    bits = min(ckinds.integer_bits(ctype), 32) - (0 if ckinds.is_unsigned(ctype) else 1)
    mask = 0
    for name, functions in table.flag_scope.items():
        only, not_for = table.flag_only.get(name), table.flag_not_for.get(name, frozenset())
        value = table.constants.get(name, 0)
        if function in functions and (only is None or function in only) and function not in not_for \
                and _usable_flag(name, value, bits):
            mask |= value
    return mask


def trusting_bits(function: str) -> int:
    """The low-byte flags an option word of ``function`` must not carry: its group's "skip the check".

    ``convert(pattern, len, uint32_t options, ...)`` took any low byte, so
    ``X_CONVERT_NO_UTF_CHECK`` (bit 1) was set on half the inputs and the library read past
    invalid UTF-8 it had been promised was valid. A single-bit constant below 256 named as
    trusting its input and sharing a word of four or more letters with the function is cleared.
    """
    fwords = {w for w in name_words(function)[1:] if len(w) >= 4}
    table = active()
    bits = 0
    for name, value in table.constants.items():
        if 0 < value < 256 and value & (value - 1) == 0 and TRUSTING_FLAG.search(name) \
                and fwords & set(name_words(name)[1:]):
            bits |= value
    return bits
