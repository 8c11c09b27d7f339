"""The header's integer macros worth a place in the prompt, and the functions each group is for.

:func:`relevant_macros` picks groups of ``#define`` constants (adjacent lines form a group):
status codes, groups sharing a word with a parameter, groups named after a function that takes
flags, single-bit flag groups. :func:`scope_groups` then reads what the header says about each
group: the first sentence of the comment right above it often names the functions that take
those bits ("The following option bits can be passed only to lib_compile().", "Flags for
lib_open()."), and a bit's own comment narrows it ("lib_exec() only", "not for lib_exec()"). An
option word drawn from every flag in the header mostly carries bits the called function
rejects, so its call ends at the option check; scoped, it carries only the function's own.
Nothing here knows any particular library.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path

from fuzzkit.api import FunctionDecl
from fuzzkit.header_facts import OPTION_PARAM, FieldFlag, Macro, _words
from fuzzkit.release_names import common_words

MAX_MACROS, MAX_OPTION_MACROS = 120, 40

_STATUS_WORDS = re.compile(
    r"(^|_)(OK|SUCCESS|SUCCEEDED|ERR|ERROR|FAIL|FAILED|FAILURE|FINISH|END|EOF|DONE|AGAIN|MORE|"
    r"CONTINUE|INVALID|STATUS|RESULT|NOMEM|BUSY|PARTIAL)(_|$)"
)
_MENTION = re.compile(r"\b([A-Za-z_]\w*)\s*\(\s*\)")
_NOT_FOR = re.compile(r"\bnot\s+(?:for|with|in|allowed\s+(?:for|with|in))\b", re.I)
_ONLY = re.compile(r"\bonly\b", re.I)

# name -> (value, header path, line)
Macros = Mapping[str, tuple[int, str, int]]


def relevant_macros(macros: Macros, param_words: set[str], owner_words: set[str],
                    option_words: bool) -> list[Macro]:
    """Groups of integer macros worth a place in the prompt.

    Status codes and groups sharing a word with a parameter, in header order; then, on a
    budget of their own, groups named after a function that takes flags (``X_ATTACH_*``)
    and, when a parameter is an option word, groups of single-bit flags.
    """
    ordered = sorted(macros.items(), key=lambda kv: (kv[1][1], kv[1][2]))
    groups: list[list[tuple[str, int, int]]] = []
    last: tuple[str, int] | None = None
    for name, (value, file, line) in ordered:
        if last is None or last[0] != file or line - last[1] > 1:
            groups.append([])
        groups[-1].append((name, value, line))
        last = (file, line)
    keep: list[Macro] = []
    for gid, group in enumerate(groups):
        names = [n for n, _v, _l in group]
        wanted = any(_STATUS_WORDS.search(n) for n in names) or any(
            w in param_words for n in names for w in _words(n))
        if wanted and len(keep) + len(group) <= MAX_MACROS:
            keep += [Macro(n, v, gid) for n, v, _l in group]
    kept, extra = {m.group for m in keep}, 0
    for gid, group in enumerate(groups):
        names = [n for n, _v, _l in group]
        named = len(names) > 1 and any(all(w in _words(n) for n in names) for w in owner_words)
        # A group of single-bit flags reaching past a byte, when some parameter is an option
        # word: the values an unnamed `uint32_t options` takes (the header names no owner).
        bits = [v for _n, v, _l in group]
        flags = option_words and len(bits) > 2 and max(bits) > 255 and all(
            v > 0 and v & (v - 1) == 0 for v in bits)
        if (named or flags) and gid not in kept and extra + len(group) <= MAX_OPTION_MACROS:
            keep += [Macro(n, v, gid) for n, v, _l in group]
            extra += len(group)
    return sorted(keep, key=lambda m: m.group)


def option_owner_words(api: Sequence[FunctionDecl]) -> set[str]:
    """Words naming few of the functions that take a flags/options/mode parameter (``attach``).

    A group of constants named after such a function (``X_ATTACH_*``) holds the values that
    parameter takes. Few is two: counted among the functions taking options (``convert`` names one
    converter, however many functions of its context there are), and a word most of the API
    shares (its prefix) names no function.
    """
    def takes_options(d: FunctionDecl) -> bool:
        # (an unnamed 32-bit integer is an option word too: `convert(pattern, len, uint32_t, ...)`)
        return any(OPTION_PARAM.search(p.name) or (not p.name and "int32" in p.type) for p in d.params)

    takers = [d for d in api if takes_options(d)]
    counts: dict[str, int] = {}
    for d in takers:
        for w in set(_words(d.name)):
            counts[w] = counts.get(w, 0) + 1
    prefix = common_words([d.name for d in api])
    return {w for d in takers for w in _words(d.name) if len(w) >= 4 and counts[w] <= 2 and w not in prefix}


def _line_reader() -> Callable[[str], list[str]]:
    """A reader of a header's lines that reads each file once (no lines for one it cannot read)."""
    texts: dict[str, list[str]] = {}

    def lines(path: str) -> list[str]:
        if path not in texts:
            try:
                texts[path] = Path(path).read_text(errors="replace").splitlines() if path else []
            except OSError:
                texts[path] = []
        return texts[path]

    return lines


def scope_groups(kept: list[Macro], macros: Macros, api_names: Collection[str]) -> list[Macro]:
    """``kept`` with the functions each group is for, and each bit's own narrowing, filled in."""
    lines = _line_reader()
    out: list[Macro] = []
    scope: tuple[str, ...] = ()
    group = None
    for m in kept:
        _value, path, line = macros.get(m.name, (0, "", 0))
        text = lines(path)
        if m.group != group:
            group = m.group
            scope = _functions(_first_sentence(_comment_above(text, line - 1)), api_names)
        note = _trailing_comment(text[line - 1]) if 0 < line <= len(text) else ""
        named = _functions(note, api_names)
        only = named if named and _ONLY.search(note) and not _NOT_FOR.search(note) else ()
        not_for = named if named and _NOT_FOR.search(note) else ()
        out.append(Macro(m.name, m.value, m.group, scope, only, not_for))
    return out


def field_flags(macros: Macros, fields: Collection[str]) -> list[FieldFlag]:
    """Every integer macro whose own comment names a field of the API's records (:func:`_named_fields`).

    Read over all of the header's macros, not only those the prompt's budget keeps: the bit of
    such a flag must never be drawn, whichever constant of a kept group shares it.
    """
    found: list[FieldFlag] = []
    lines = _line_reader()
    for name, (value, path, line) in sorted(macros.items(), key=lambda kv: (kv[1][1], kv[1][2])):
        text = lines(path)
        note = _trailing_comment(text[line - 1]) if 0 < line <= len(text) else ""
        if named := _named_fields(note, fields):
            found.append(FieldFlag(name=name, value=value, fields=list(named)))
    return found


def _named_fields(note: str, fields: Collection[str]) -> tuple[str, ...]:
    """The record fields a constant's comment names: a name of its own (``re_endp``), or after "field"."""
    said = set(re.findall(r"\b(\w+)\s+(?:field|member)\b|\b(?:field|member)\s+`?(\w+)", note, re.I))
    return tuple(f for f in fields if re.search(rf"\b{re.escape(f)}\b", note)
                 and ("_" in f or any(f in pair for pair in said)))


def _comment_above(text: list[str], index: int) -> str:
    """The comment block ending right above line ``index`` (0-based; one blank line allowed)."""
    i = index - 1
    if i >= 0 and not text[i].strip():
        i -= 1
    if i < 0 or not text[i].rstrip().endswith("*/"):
        return ""
    end = i
    while i >= 0 and "/*" not in text[i]:
        i -= 1
    return "\n".join(text[max(i, 0):end + 1]) if i >= 0 and end - i < 40 else ""


def _first_sentence(comment: str) -> str:
    body = re.sub(r"/\*+|\*+/|^\s*\*+", " ", comment, flags=re.M)
    body = re.sub(r"\s+", " ", body).strip()
    return re.split(r"(?<=[.!?:])\s", body, maxsplit=1)[0]


def _trailing_comment(line: str) -> str:
    m = re.search(r"/\*(.*?)\*/|//(.*)$", line)
    return (m.group(1) or m.group(2) or "") if m else ""


def _functions(text: str, api_names: Collection[str]) -> tuple[str, ...]:
    """API functions a text names: ``f()`` (or a width variant ``f_8`` of it), or ``f`` exactly."""
    found: list[str] = []
    for name in _MENTION.findall(text):
        found += [n for n in api_names
                  if n == name or (n.startswith(name) and re.fullmatch(r"_?\d+", n[len(name):]))]
    found += [w for w in re.findall(r"\b\w+\b", text) if w in api_names]
    return tuple(sorted(dict.fromkeys(found)))
