"""Whose leak it is: the harness's, or the library's own.

LeakSanitizer says where the leaked block was allocated, not who should have released it. The
harness is at fault when the block came back to it (the call's return value, an out-parameter,
an object a public function made on the way, which a field may hand back) or lives in an object
the harness never releases. When the harness releases every object it handed the call, and the
call hands nothing back, the block was lost inside the library (a lexer's buffer dropped on an
error path): a library bug, which no change to the harness can repair.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from agents.offline import cdecl, type_table
from agents.offline.ckinds import base_name, canonical_base, is_pointer, pointee, strip_const
from agents.offline.fixer_edit import matching_paren, split_args
from agents.offline.synth_finders import words
from fuzzkit.api import FunctionDecl
from fuzzkit.usage_models import type_key
from fuzzkit.vocabulary import words_of

_FRAME = re.compile(r"^#\d+\s+(\w+)", re.M)
_CASTS = re.compile(r"^(\(\s*[\w\s*]+\)\s*)+")
_RELEASE = words_of("release") | words_of("finish")
_PLAIN = cdecl.BYTE_TYPES | cdecl.INT_TYPES | cdecl.FLOAT_TYPES  # plain memory: `free` releases it
_LITERAL = re.compile(r"^(NULL|0|nullptr|\d[\w.]*|\"(?:[^\"\\]|\\.)*\"|'.*')$")


def library_leak(harness: str, stack: str, public: list[FunctionDecl],
                 called: Sequence[FunctionDecl] = (), releasers: Mapping[str, str] | None = None) -> str:
    """Why the leak is the library's own, or ``""`` when the harness may be at fault.

    ``stack`` is the allocation stack, innermost first (``#0 name file:line``); ``public`` the
    library's functions among its frames; ``called`` those the harness calls. ``releasers``:
    object type -> the function the library's own code releases it with (the usage index); an
    object the harness released with another function (one that frees only a part of it) was
    not released, so the leak is the harness's.
    """
    owners = dict(releasers or {})
    chain = _FRAME.findall(stack)
    if "LLVMFuzzerTestOneInput" not in chain[1:]:
        return ""
    chain = chain[: chain.index("LLVMFuzzerTestOneInput")]
    api = {d.name: d for d in public}
    entry = api.get(chain[-1])
    if entry is None:
        return ""
    made = [n for n in chain[:-1] if n in api and _pointer_like(api[n].return_type)]
    if made:
        return ""  # a public maker's object: a field of what the harness holds may hand it back
    call = re.search(rf"(?:\b(\w+)\s*=\s*(?:\([^()]*\)\s*)?)?\b{re.escape(entry.name)}\s*\(", harness)
    close = matching_paren(harness, call.end() - 1) if call else None
    if call is None or close is None:
        return ""
    if _handed_back(entry.return_type) and not (call.group(1) and _released(harness, call.group(1),
                                                                           entry.return_type, owners)):
        return ""
    if call.group(1) and _reassigned(harness[close:], call.group(1), entry.return_type, owners):
        return ""  # `p = make_ns(); p = make();`: the first object is lost by the harness
    made_by = re.finditer(rf"\b(\w+)\s*=\s*(?:\([^()]*\)\s*)?\b{re.escape(entry.name)}\s*\(", harness)
    if any(_handed_over(harness[m.end():], m.group(1)) for m in made_by):
        return ""  # `add(parent, item)` then `item = NULL`: its new owner may hand it back (a detach)
    if kept_object(harness, called, owners):
        return ""  # an object still held may keep the block alive (`close(db)` fails: a statement is open)
    args = split_args(harness[call.end():close])
    later = {d.name: d for d in called if d.name != entry.name}
    for param, arg in zip(entry.params, args, strict=False):
        name = _object(arg)
        if _handed_back(param.type) and name and not _released(harness, name, pointee(param.type), owners):
            return ""
        if _handed_back(param.type) and name and _overwritten(harness[close:], name, later):
            return ""  # `view(src, ..., &dst)` after `import(&dst, ...)`: dst's blocks are lost by it
    inner = " < ".join(chain[:-1]) or "the allocator"
    return (f"the harness releases every object it gave {entry.name}, and {entry.name} hands nothing "
            f"back; the block was allocated inside the library ({inner}) and lost there")


def _handed_back(ctype: str) -> bool:
    """A pointer the library may fill or own: not a read-only view (``const T *``) of a value.

    A parameter of an array typedef (``typedef num_struct num_t[1];``, passed as ``num_t x``) is
    a pointer to the caller's record too, and the call may fill that record's fields.
    """
    if _array_typedef(ctype):
        return not ctype.strip().startswith("const ")
    if not _pointer_like(ctype):
        return False
    inner = pointee(ctype)
    return not (inner.startswith("const ") and not is_pointer(inner))


def _pointer_like(ctype: str) -> bool:
    """A data pointer, or a handle typedef hiding one (``typedef struct p_s *p_t``, kept by that name)."""
    if is_pointer(ctype):
        return True
    under = type_table.active().typedefs.get(strip_const(ctype).strip(), "")
    return "*" in under and "(*)" not in under


def kept_object(harness: str, called: Sequence[FunctionDecl],
                owners: Mapping[str, str]) -> tuple[str, FunctionDecl] | None:
    """A library object a call handed the harness through ``&var`` that nothing releases, and that call.

    ``prepare(db, sql, n, &stmt, &tail)`` hands back a statement: unreleased, it keeps its database
    open (the database's close fails while a statement is live), and every block the database
    holds leaks with it, allocated under the call that opened it. Plain memory (``&tail``, a
    ``const char **`` into the caller's text) and read-only views are no such object.
    """
    for decl in called:
        for at in re.finditer(rf"\b{re.escape(decl.name)}\s*\(", harness):
            close = matching_paren(harness, at.end() - 1)
            if close is None:
                continue
            for param, arg in zip(decl.params, split_args(harness[at.end():close]), strict=False):
                inner = pointee(param.type) if is_pointer(param.type) else ""
                name = _object(arg) if arg.strip().startswith("&") else ""
                if (not name or name == "?" or not _handed_back(inner) or not _pointer_like(inner)
                        or strip_const(canonical_base(base_name(inner))) in _PLAIN):
                    continue
                if not _released(harness, name, inner, owners):
                    return name, decl
    return None


def _reassigned(after: str, name: str, ctype: str, owners: Mapping[str, str]) -> bool:
    """Whether ``name`` is assigned again before anything releases what it holds (the object is lost)."""
    again = re.search(rf"(?<![\w.>]){re.escape(name)}\s*=(?!=)", after)
    return again is not None and not _released(after[:again.start()], name, ctype, owners)


def _array_typedef(ctype: str) -> bool:
    """A typedef the Types section gives as an array (``typedef num_struct num_t[1];``)."""
    canon = type_table.active().canonical.get(strip_const(ctype), "")
    return "*" not in ctype and bool(re.search(r"\[\s*\w*\s*\]$", canon))


def _object(arg: str) -> str:
    """The variable an argument passes (``&ctx``, ``(T *)buf`` -> ``ctx``, ``buf``)."""
    text = uncast(arg).lstrip("&").strip()
    if _LITERAL.match(text) or not re.fullmatch(r"[A-Za-z_]\w*", text):
        return "" if _LITERAL.match(text) else "?"
    return text


def uncast(arg: str) -> str:
    """An argument without its leading casts (``(const char *)data`` -> ``data``)."""
    return _CASTS.sub("", arg.strip())


def _released(harness: str, name: str, ctype: str, owners: Mapping[str, str] | None = None) -> bool:
    """Whether a releaser takes ``name`` (or ``&name``); plain ``free`` only for plain memory.

    When the library's own code releases ``ctype`` objects with one function (``owners``), only
    that function releases it.
    """
    if name == "?":
        return False
    own = (owners or {}).get(type_key(ctype))
    if own:
        call = rf"\b{re.escape(own)}\s*\(\s*(?:\([^()]*\)\s*)?&?\s*{re.escape(name)}\b"
        return re.search(call, harness) is not None
    plain = strip_const(canonical_base(base_name(ctype))) in _PLAIN
    for fn in re.findall(rf"\b(\w+)\s*\(\s*(?:\([^()]*\)\s*)?&?\s*{re.escape(name)}\b", harness):
        if set(words(fn)) & _RELEASE and (fn != "free" or plain):
            return True
    return False


def _handed_over(after: str, name: str) -> bool:
    """Whether ``name`` goes to a call that is no release and the harness then lets go of it (``= NULL``).

    ``if (add_item(parent, item)) item = NULL;``: the object now belongs to another, and the
    harness's own release of ``name`` runs only when that failed; a later call that takes the
    object back out (a detach) hands the harness a block it must release.
    """
    for call in re.finditer(r"\b(\w+)\s*\(", after):
        close = matching_paren(after, call.end() - 1)
        if close is None or set(words(call.group(1))) & _RELEASE:
            continue
        args = [_object(a) for a in split_args(after[call.end():close])]
        if name in args and re.search(rf"\b{re.escape(name)}\s*=\s*NULL\s*;", after[close:]):
            return True
    return False


def _overwritten(after: str, name: str, api: dict[str, FunctionDecl]) -> bool:
    """Whether a later call takes ``name`` as a writable argument past its first (a destination).

    ``pic_view(&src, x, y, w, h, &dst)`` or ``pic_copy(&src, &dst)`` overwrites what ``dst``
    held: the blocks an earlier call put there are lost by the harness, not by the library.
    """
    for call in re.finditer(r"\b(\w+)\s*\(", after):
        decl = api.get(call.group(1))
        close = matching_paren(after, call.end() - 1) if decl else None
        if decl is None or close is None or set(words(decl.name)) & _RELEASE:
            continue
        args = split_args(after[call.end():close])
        if any(i and _object(arg) == name and _handed_back(param.type)
               for i, (param, arg) in enumerate(zip(decl.params, args, strict=False))):
            return True
    return False
