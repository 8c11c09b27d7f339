"""Which pointer parameters a library's documentation lets be NULL, read from its comments.

Many C libraries document a function where it is defined (gtk-doc ``@alabel: ... or NULL.``,
Doxygen ``@param[in] name ... may be NULL``), not in the public header. A harness that always
passes a string where the library also takes NULL never reaches what the library does when the
argument is left out (derive one value from the other, use a default). :func:`optional_params`
reads the comments of the library's headers and sources at prepare time; the prompt's Types
section carries the result (:class:`fuzzkit.header_facts.HeaderFacts`). Nothing here knows any
particular library.

:func:`utf8_params` reads, the same way, which input text parameters are documented as UTF-8:
described so themselves (``@input: zero-terminated UTF-8 string``) or of a type whose typedef's
comment says so (a byte type "of a UTF-8 encoded string"). A library may trust such text to be
well formed, and a crash on bytes that are not is the harness breaking the contract.

:func:`terminated_inputs` reads which input buffers are documented as NUL-terminated: a
parameter described so (``@buf: a NUL-terminated string``), a function whose comment says its
input is (a sentence about its output aside), and option constants whose comment says so
(``#define X_TERMINATED 2 /* the input is NUL-terminated */``, or a function's sentence that names
the constant). libFuzzer's input has no terminator: a read just past its end in such a call is the
harness breaking the contract.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from fuzzkit.api import FunctionDecl
from fuzzkit.doc_conditions import asserted

MAX_BYTES = 64 << 20  # read no more than this much source in all

_COMMENT = re.compile(r"/\*(.*?)\*/", re.S)
_LEAD = re.compile(r"^[ \t]*\*+[ \t]?", re.M)
# A parameter's description starts at its tag: `@name:` (gtk-doc) or `@param[in] name` / `\param name`.
_PARAM = re.compile(r"^[ \t]*(?:[@\\]param(?:\[[^\]\n]*\])?[ \t]+(\w+)\b[ \t:]*|@(\w+)[ \t]*:)", re.M)
# ... and ends at the next tag, a blank line, or a return/section line.
_END = re.compile(r"^[ \t]*(?:[@\\]\w+|Returns?\b|Return value\b|Since\b)|\n[ \t]*\n", re.M)
_NULL_OK = re.compile(
    r"\b(?:or|else|may\s+be|can\s+be|could\s+be|might\s+be|possibly|optionally)\s+\(?\s*NULL\b"
    r"|\bNULL\s+(?:is\s+)?(?:allowed|accepted|permitted|ok|fine)\b"
    r"|\b(?:if|when)\s+(?:it\s+is\s+|this\s+is\s+)?NULL\b"
    r"|\bNULL\s+(?:to|for)\s+(?:use|skip|ignore|default|disable|none|no\b|omit|the\s+default)"
    r"|\((?:nullable|allow-none|optional)\)",
    re.I,
)
_NOT_NULL = re.compile(r"\b(?:must|should|may|can|cannot)\s*not\s+be\s+NULL\b|\bnon-?NULL\b|\bnot\s+NULL\b"
                       r"|\bnever\s+(?:be\s+)?NULL\b", re.I)


@dataclass
class Terminated:
    """Input documented as NUL-terminated: ``{function: [parameter, ...]}`` and ``{constant: value}``.

    A constant's value is ``None`` when its definition is not a plain integer (its name still counts).
    """

    params: dict[str, list[str]] = field(default_factory=dict)
    flags: dict[str, int | None] = field(default_factory=dict)


class ParamFacts(NamedTuple):
    """What the comments say about ``api``'s parameters, from one read of the files."""

    optional: dict[str, list[str]]
    utf8: dict[str, list[str]]
    docs: dict[str, str]
    terminated: Terminated
    conditions: dict[str, list[str]]  # function -> conditions its comment asserts (documented_conditions)


def param_facts(files: Iterable[str | Path], api: Sequence[FunctionDecl]) -> ParamFacts:
    """The parameter facts of ``api`` from one read of the files.

    :func:`optional_params`, :func:`utf8_params`, :func:`definition_docs`, :func:`terminated_inputs`
    and :func:`documented_conditions`.

    The files are read once.
    """
    texts = list(_read(files))
    docs = _definition_docs(texts, [d.name for d in api])
    return ParamFacts(_optional(texts, api), _utf8(texts, api), docs, _terminated(texts, api),
                      documented_conditions(texts, api))


def optional_params(files: Iterable[str | Path], api: Sequence[FunctionDecl]) -> dict[str, list[str]]:
    """``{function: [parameter, ...]}``: pointer parameters of ``api`` documented as taking NULL.

    A comment documents the function it names first (gtk-doc's ``name:`` line) or, failing
    that, the API function whose definition or declaration follows it.
    """
    return _optional(_read(files), api)


def _optional(texts: Iterable[str], api: Sequence[FunctionDecl]) -> dict[str, list[str]]:
    pointers = {d.name: {p.name for p in d.params if p.name and "*" in p.type} for d in api}
    pointers = {k: v for k, v in pointers.items() if v}
    found: dict[str, list[str]] = {}
    for text in texts:
        if "NULL" not in text:
            continue
        for m in _COMMENT.finditer(text):
            body = m.group(1)
            if "NULL" not in body:
                continue
            fn = _documented(body, text, m.end(), pointers)
            if fn is None:
                continue
            for name in nullable(body):
                if name in pointers[fn] and name not in found.setdefault(fn, []):
                    found[fn].append(name)
    return {fn: names for fn, names in found.items() if names}


_UTF8 = re.compile(r"\butf-?8\b", re.I)
# A comment, then the typedef it documents: `/* ... UTF-8 ... */ typedef unsigned char name;`
_TYPEDEF_DOC = re.compile(r"/\*((?:(?!\*/).)*)\*/\s*typedef\s+[^;{}()]*?\b(\w+)\s*;", re.S)


def utf8_params(files: Iterable[str | Path], api: Sequence[FunctionDecl]) -> dict[str, list[str]]:
    """``{function: [parameter, ...]}``: input text parameters of ``api`` documented as UTF-8.

    Input text: a pointer to const, one level deep. Documented: the parameter's own description
    (see :func:`optional_params` for which function a comment documents) or its type's typedef
    comment mentions UTF-8.
    """
    return _utf8(_read(files), api)


def _utf8(texts: Iterable[str], api: Sequence[FunctionDecl]) -> dict[str, list[str]]:
    inputs = {d.name: {p.name: p.type for p in d.params if p.name and p.type.count("*") == 1
                       and re.search(r"\bconst\b", p.type)} for d in api}
    inputs = {k: v for k, v in inputs.items() if v}
    text_types: set[str] = set()
    found: dict[str, list[str]] = {}
    for text in texts:
        if not _UTF8.search(text):
            continue
        text_types |= {m.group(2) for m in _TYPEDEF_DOC.finditer(text) if _UTF8.search(m.group(1))}
        for m in _COMMENT.finditer(text):
            fn = _documented(m.group(1), text, m.end(), inputs) if _UTF8.search(m.group(1)) else None
            if fn is not None:
                names = [n for n in described(m.group(1), _UTF8) if n in inputs[fn]]
                found[fn] = list(dict.fromkeys([*found.get(fn, []), *names]))
    for fn, params in inputs.items():
        for name, ctype in params.items():
            if text_types & set(re.findall(r"\w+", ctype)) and name not in found.setdefault(fn, []):
                found[fn].append(name)
    return {fn: names for fn, names in found.items() if names}


_TERMINATED = re.compile(r"(?:\b(?:NUL|null|zero|nul)|'\\0')[- ]?terminated\b", re.I)
# "need not be NUL-terminated", "not necessarily zero-terminated", "without a NUL terminator"
_NOT_TERMINATED = re.compile(r"\b(?:not|no|without|needn't|doesn't|don't)\b[^.;:]{0,30}?terminat", re.I)
_CONSTANT = re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b")
_OUTPUT = re.compile(r"\b(?:returns?|returned|writes?|written|outputs?|stores?|fills?|result)\b", re.I)
_SENTENCE = re.compile(r"(?<=[.;])\s+(?=[A-Z@\\])|\n[ \t]*\n")
# `#define NAME value` with its comment: after it on the line, or right above it.
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Z_][A-Z0-9_]*)[ \t]+([^\n/]*?)[ \t]*"
                     r"(/\*(?:(?!\*/).)*\*/|//[^\n]*)?[ \t]*$", re.M | re.S)
_CONSTANT_ITEM = re.compile(r"^[ \t]*([A-Z_][A-Z0-9_]*)[ \t]*(?:=[ \t]*([^,}\n/]+?))?[ \t]*,?[ \t]*"
                            r"(/\*(?:(?!\*/).)*\*/|//[^\n]*)?[ \t]*$", re.M | re.S)
_COMMENT_ABOVE = re.compile(r"(/\*(?:(?!\*/).)*\*/|(?://[^\n]*\n[ \t]*)+)[ \t]*\n?[ \t]*$", re.S)


def terminated_inputs(files: Iterable[str | Path], api: Sequence[FunctionDecl]) -> Terminated:
    """The input buffers of ``api`` and the option constants documented as NUL-terminated.

    Input buffers: byte pointers one level deep (see :func:`optional_params` for which function a
    comment documents). A sentence of a function's comment that says "NUL-terminated" (or
    null-/zero-terminated) about its input names the parameter, or there is only one; a sentence
    about what it returns or writes is about its output; one that names a constant makes that
    constant the condition (an option flag), not the parameter.
    """
    return _terminated(_read(files), api)


def _terminated(texts: Iterable[str], api: Sequence[FunctionDecl]) -> Terminated:
    inputs = {d.name: [p.name for p in d.params if p.name and _byte_input(p.type)] for d in api}
    inputs = {k: v for k, v in inputs.items() if v}
    found = Terminated()
    for text in texts:
        if not _TERMINATED.search(text):
            continue
        for m in _COMMENT.finditer(text):
            body = m.group(1)
            fn = _documented(body, text, m.end(), inputs) if _TERMINATED.search(body) else None
            if fn is None:
                continue
            names = [n for n in described(body, _TERMINATED) if n in inputs[fn]
                     and n not in described(body, _NOT_TERMINATED)]
            flags = _terminated_sentences(_free_text(body), inputs[fn], names)
            for flag in flags:
                found.flags.setdefault(flag, None)
            if names:
                found.params[fn] = list(dict.fromkeys([*found.params.get(fn, []), *names]))
        for name, value in _terminated_constants(text):
            found.flags[name] = value if value is not None else found.flags.get(name)
    return found


def _terminated_sentences(body: str, params: list[str], names: list[str]) -> list[str]:
    """The constants a comment's sentences make the condition; the parameters they name go to ``names``."""
    flags: list[str] = []
    for sentence in _SENTENCE.split(body):
        if not _TERMINATED.search(sentence) or _OUTPUT.search(sentence) or _NOT_TERMINATED.search(sentence):
            continue
        constants = [c for c in _CONSTANT.findall(sentence) if c not in params]
        if constants:
            flags += constants
            continue
        named = [p for p in params if re.search(rf"\b{re.escape(p)}\b", sentence)]
        names += named or (params if len(params) == 1 else [])
    return flags


def _free_text(comment: str) -> str:
    """A documentation comment without its parameters' descriptions (read by :func:`described`)."""
    body = _LEAD.sub("", comment)
    kept, at = [], 0
    for m in _PARAM.finditer(body):
        end = _END.search(body, m.end())
        kept.append(body[at:m.start()])
        at = end.start() if end else len(body)
    return "".join(kept) + body[at:]


def _terminated_constants(text: str) -> Iterable[tuple[str, int | None]]:
    """``(name, value)`` of each ``#define`` or enum constant whose own comment says NUL-terminated.

    Its own comment: after it on its line, or on the lines right above it (a comment that starts
    its line: the one ending the line above belongs to that line's constant).
    """
    for pattern in (_DEFINE, _CONSTANT_ITEM):
        for m in pattern.finditer(text):
            if not _CONSTANT.fullmatch(m.group(1)) or not re.search(r"\d", m.group(2) or "0"):
                continue  # a constant, not a type or another name (`#define X_SIZE size_t`)
            above = _COMMENT_ABOVE.search(text, max(0, m.start() - 600), m.start())
            line_start = text.rfind("\n", 0, above.start()) + 1 if above else 0
            own_line = above is not None and not text[line_start:above.start()].strip()
            said = [m.group(3) or ""] + ([above.group(1)] if own_line and above else [])
            if any(_TERMINATED.search(c) and not _OUTPUT.search(c) and not _NOT_TERMINATED.search(c)
                   for c in said):
                yield m.group(1), _integer(m.group(2) or "")


def _integer(text: str) -> int | None:
    try:
        return int(re.sub(r"[uUlL]+$", "", text.strip().strip("()")), 0)
    except ValueError:
        return None


def _byte_input(ctype: str) -> bool:
    """A pointer, one level deep, to bytes or characters (``const char *``, ``const uint8_t *``)."""
    words = {w.lower() for w in re.findall(r"\w+", ctype)}
    return ctype.count("*") == 1 and bool(words & {"uint8_t", "int8_t", "void", "byte"}
                                          or any(w.endswith("char") for w in words))


def definition_docs(files: Iterable[str | Path], names: Collection[str]) -> dict[str, str]:
    """``{function: comment}``: the comment documenting each of ``names`` where it is defined.

    Read from the library's sources (gtk-doc style ``name:`` first lines, or the comment right
    before the definition); the first wins. :func:`fuzzkit.header_facts_collect.collect_facts`
    uses it where the headers leave a function undocumented.
    """
    return _definition_docs(_read(files), names)


def documented_conditions(texts: Iterable[str], api: Sequence[FunctionDecl]) -> dict[str, list[str]]:
    """``{function: [condition, ...]}``: the C conditions each function's comment asserts.

    A comment documents the function it names first or whose declaration follows it
    (:func:`_documented`); :func:`fuzzkit.doc_conditions.asserted` reads its conditions.
    """
    params = {d.name: [p.name for p in d.params if p.name] for d in api}
    found: dict[str, list[str]] = {}
    for text in texts:
        if not _ASSERT_TAG.search(text):
            continue
        for m in _COMMENT.finditer(text):
            fn = _documented(m.group(1), text, m.end(), params) if _ASSERT_TAG.search(m.group(1)) else None
            if fn is None:
                continue
            known = found.setdefault(fn, [])
            known += [c for c in asserted(_LEAD.sub("", m.group(1)), params[fn]) if c not in known]
    return {fn: conds for fn, conds in found.items() if conds}


_ASSERT_TAG = re.compile(r"[@\\](?:assert|pre)\b")


def _definition_docs(texts: Iterable[str], names: Collection[str]) -> dict[str, str]:
    wanted = dict.fromkeys(names, ())
    found: dict[str, str] = {}
    for text in texts:
        for m in _COMMENT.finditer(text):
            fn = _documented(m.group(1), text, m.end(), wanted)
            if fn is not None and fn not in found:
                found[fn] = m.group(0)
    return found


def _read(files: Iterable[str | Path]) -> Iterable[str]:
    budget = MAX_BYTES
    for path in dict.fromkeys(str(f) for f in files):
        try:
            text = Path(path).read_text(errors="replace")
        except OSError:
            continue
        budget -= len(text)
        if budget < 0:
            return
        yield text


def described(comment: str, pattern: re.Pattern[str]) -> list[str]:
    """The parameters whose description in a documentation comment matches ``pattern``."""
    return [name for name, desc in _descriptions(comment) if pattern.search(desc)]


def _descriptions(comment: str) -> Iterable[tuple[str, str]]:
    body = _LEAD.sub("", comment)
    for m in _PARAM.finditer(body):
        rest = body[m.end():]
        end = _END.search(rest)
        yield m.group(1) or m.group(2), rest[: end.start() if end else len(rest)]


def nullable(comment: str) -> list[str]:
    """The parameters a documentation comment describes as accepting NULL."""
    out: list[str] = []
    for name, desc in _descriptions(comment):
        desc = desc.replace("%NULL", "NULL")  # gtk-doc's %NULL
        if _NULL_OK.search(desc) and not _NOT_NULL.search(desc):
            out.append(name)
    return out


def _documented(body: str, text: str, end: int, pointers: Mapping[str, Collection[str]]) -> str | None:
    first = re.match(r"\s*\**\s*(\w+)\s*:", body)
    if first and first.group(1) in pointers:
        return first.group(1)
    after = text[end:end + 400]
    stop = re.search(r"[;{]|/\*", after)
    head = after[: stop.start() if stop else len(after)]
    return next((c for c in re.findall(r"\b(\w+)\s*\(", head) if c in pointers), None)
