"""A crash in a follow-up call the harness added after the target, and how to drop it.

Follow-ups (``/* get_data on the result */ if (obj) { ... }`` blocks after the target) call
other API functions with arguments the harness picked, often an index taken from option
bytes that the library uses unchecked. A crash there says nothing about the target: it breaks
that call's preconditions, and the repair is to leave the block out. A crash in the setup
before the target (a parser fed the input) is a different matter: that may be a real bug.
"""

from __future__ import annotations

import re

from fuzzkit.guidance_facts import Rule
from fuzzkit.vocabulary import libc_released_by

_FRAME = re.compile(r"^#(\d+) (\S+) \S*?:(\d+)", re.M)
_BLOCK_OPEN = re.compile(r"^\s*(?:if \(.*\) )?\{\s*$")
_COMMENT = re.compile(r"^\s*/\*.*\*/\s*$")
_HINT = re.compile(r"^fix_hint: leave out the follow-up call to (\w+)", re.M)


def _call_line(lines: list[str], name: str) -> int | None:
    """The 1-based number of the first line calling ``name`` outside comments."""
    for i, text in enumerate(lines, 1):
        code = re.sub(r"/\*.*?\*/|//.*$", "", text)
        if re.search(rf"\b{re.escape(name)}\s*\(", code):
            return i
    return None


def crashed_followup(harness: str, stack: str, target: str) -> str | None:
    """The API function a follow-up after the target called when the crash happened, if so."""
    frames = [(int(n), fn, int(line)) for n, fn, line in _FRAME.findall(stack)]
    entry = next(((n, line) for n, fn, line in frames if fn == "LLVMFuzzerTestOneInput"), None)
    if entry is None or entry[0] == 0:
        return None
    called = next((fn for n, fn, _l in frames if n == entry[0] - 1), "")
    lines = harness.splitlines()
    at = _call_line(lines, target)
    if not called or called == target or at is None or entry[1] <= at or entry[1] > len(lines):
        return None
    return called if re.search(rf"\b{re.escape(called)}\s*\(", lines[entry[1] - 1]) else None


def drop_followup(harness: str, name: str, target: str) -> str | None:
    """The harness without the follow-up block (and its comment) that calls ``name``."""
    lines = harness.splitlines(keepends=True)
    at = _call_line([ln.rstrip("\n") for ln in lines], target) or 0
    call = next((i for i in range(at, len(lines))
                 if re.search(rf"\b{re.escape(name)}\s*\(", re.sub(r"/\*.*?\*/", "", lines[i]))), None)
    if call is None:
        return None
    start = next((i for i in range(call, at - 1, -1) if _BLOCK_OPEN.match(lines[i])), None)
    if start is None:
        return None
    depth, end = 0, None
    for i in range(start, len(lines)):
        depth += lines[i].count("{") - lines[i].count("}")
        if depth == 0:
            end = i
            break
    if end is None or end < call or any(re.search(rf"\b{re.escape(target)}\s*\(", ln)
                                        for ln in lines[start:end + 1]):
        return None
    if start > 0 and _COMMENT.match(lines[start - 1]):
        start -= 1
    return "".join(lines[:start] + lines[end + 1:])


def without_crashed_followup(harness: str, stack: str, target: str,
                             rules: list[Rule] | None = None, entry: str = "") -> tuple[str, str] | None:
    """``(harness without the follow-up that crashed, what was done)``, if a follow-up did.

    ``entry``: the library function the triage found the harness called into (a leak's is the
    call whose allocation leaked): a follow-up after the target, when no other repair is known.
    ``rules`` gets the call left out as data too (``avoid``).
    """
    hinted = _HINT.search(stack)  # the crash judge's own finding, when the stack is cut short
    followup = (crashed_followup(harness, stack, target) or (hinted.group(1) if hinted else None)
                or (entry if entry and entry != target else None))
    dropped = drop_followup(harness, followup, target) if followup else None
    if followup is None or dropped is None:
        return None
    how = (f"left out the follow-up call to {followup}, which crashed (or leaked) after the target "
           "with arguments the harness picked")
    if rules is not None:
        rules.append(Rule(kind="avoid", name=followup, text=how))
    return dropped, how


_STREAM_MAKERS = tuple(a for a, r in libc_released_by().items() if r == "fclose")
_INPUT_NAMES = re.compile(r"^\(?\s*(?:\([^()]*\)\s*)?(data|size|lf_buf|text|lf_chunk|lf_chunk_size)\s*\)?$")


def followup_arguments_allowed(harness: str, stack: str, name: str, made_by_api: set[str]) -> str:
    """Why every argument of the crashed follow-up ``name`` is one the API allows, or ``""``.

    Allowed: an object an API call returned to the harness (``made_by_api``: the names of the
    library's functions), a stream the C library opened, the standard streams, the fuzz input
    and its size, and constants. Not allowed: a number taken from the option bytes (an index,
    a length) that the function may require to be in range, or anything else the harness made
    up. A crash in a follow-up whose arguments are all allowed is the library's.
    """
    frames = [(int(n), fn, int(line)) for n, fn, line in _FRAME.findall(stack)]
    entry = next((line for _n, fn, line in frames if fn == "LLVMFuzzerTestOneInput"), None)
    lines = harness.splitlines()
    if entry is None or entry > len(lines):
        return ""
    line = lines[entry - 1]
    call = re.search(rf"\b{re.escape(name)}\s*\(", line)
    if call is None:
        return ""
    depth, end = 0, len(line)
    for i in range(call.end() - 1, len(line)):
        depth += line[i] == "("
        depth -= line[i] == ")"
        if depth == 0:
            end = i
            break
    args = [a.strip() for a in _split(line[call.end():end])]
    for arg in args:
        if not _allowed(arg, harness, made_by_api):
            return ""
    return (f"{name} was called on what the library itself handed back and on the input, with no "
            "value the harness made up")


def _split(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [p for p in [*parts, cur] if p.strip()]


def _allowed(arg: str, harness: str, made_by_api: set[str]) -> bool:
    bare = re.sub(r"^\((?:const\s+)?[\w\s*]+\)\s*", "", arg).strip()
    if re.fullmatch(r"-?\d+[uUlL]*|[A-Z_][A-Z0-9_]*|NULL|stdout|stderr|sizeof\s*\(?[\w\s*]+\)?", bare):
        return True
    if _INPUT_NAMES.match(bare):
        return True
    var = re.fullmatch(r"&?\s*([A-Za-z_]\w*)", bare)
    if var is None:
        return False
    assigned = re.findall(rf"\b{re.escape(var.group(1))}\s*=\s*(?:\([^()]*\)\s*)?(\w+)\s*\(", harness)
    return bool(assigned) and all(fn in made_by_api or fn in _STREAM_MAKERS for fn in assigned)
