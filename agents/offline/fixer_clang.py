"""Clang's own repairs: its fix-its, and the ``struct``/``enum``/``union`` tags it asks for.

Clang attaches a fix-it to many diagnostics (a missing tag, a missing ``&``, a misspelled
name it recognized) and recovers as if it had been applied, so applying it is the repair
clang itself assumes. The fixer applies them before any repair of its own.
"""

from __future__ import annotations

import re

from agents.offline.fixer_core import FixerBase
from agents.offline.fixer_diag import Diag
from agents.offline.fixer_edit import offset
from fuzzkit.api import FunctionDecl
from fuzzkit.diagnostics import FixIt
from fuzzkit.guidance_facts import Rule
from fuzzkit.vocabulary import c_words

_MUST_USE_TAG = re.compile(r"must use '(struct|enum|union)' tag to refer to type '(\w+)'")
_TAGGED = re.compile(r"\b(struct|enum|union)\s+([A-Za-z_]\w*)")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_C_WORDS = c_words()
# Warning fix-its applied without a second thought: taking an address, dereferencing, and
# clang's spelling correction of an undeclared name. Others (a changed format specifier,
# added parentheses) change meaning the harness may rely on, so its own repairs decide.
_SAFE_WARNING_TEXT = re.compile(r"^(?:&|\*|[A-Za-z_]\w*)$")


def tag_kinds(diags: list[Diag], api: list[FunctionDecl]) -> dict[str, str]:
    """Which names are tags of which kind: from clang's messages, then the API's spellings."""
    kinds: dict[str, str] = {}
    for d in diags:
        for kind, name in _MUST_USE_TAG.findall(d.message):
            kinds.setdefault(name, kind)
    for fn in api:
        for ctype in (fn.return_type, *(p.type for p in fn.params)):
            for kind, name in _TAGGED.findall(ctype):
                kinds.setdefault(name, kind)
    return kinds


def apply_fixits(fixer: FixerBase, d: Diag) -> bool:
    """Apply ``d``'s fix-its as one group; True when they were applied.

    Nothing is applied when the diagnostic is a warning whose fix-it is not plainly safe,
    or when any of its edits overlaps one already made (the earlier edit wins).
    """
    if not d.fixits:
        return False
    if d.severity != "error" and not all(_SAFE_WARNING_TEXT.match(f.text) for f in d.fixits):
        return False
    spans = [(_span(fixer.code, f), f) for f in d.fixits]
    if any(_overlaps(fixer, start, end) for (start, end), _ in spans):
        return False
    for (start, end), fix in spans:
        old = fixer.code[start:end]
        if _IDENT.fullmatch(old) and _IDENT.fullmatch(fix.text) and old not in _C_WORDS:
            # A corrected name: every use is misspelled the same way, not only this one.
            fixer.rename(old, fix.text, "clang's fix-it", fixit=True)
        else:
            fixer.edit(start, end, fix.text, _describe(fixer.code, start, end, fix))
    return True


def add_tag(fixer: FixerBase, kind: str, name: str, pos: int, line: int) -> bool:
    """Put ``kind`` (``struct``) before the type name ``name`` at ``pos``; True if it fits.

    Also includes the library headers if some are missing (the tag is declared there).
    """
    if not re.match(rf"{re.escape(name)}\b", fixer.code[pos:]):
        return False
    fixer.tagged_lines.add(line)
    if not re.search(rf"\b{kind}\s+$", fixer.code[max(0, pos - 16) : pos]):
        fixer.edit(pos, pos, f"{kind} ", f"add the {kind} tag to {name} at line {line} (it is {kind} {name})",
                   Rule(kind="keep_tag", name=name, then=kind))
    fixer.missing_library_headers(name)
    return True


def _span(code: str, fix: FixIt) -> tuple[int, int]:
    start = offset(code, fix.line, fix.column)
    return start, max(start, offset(code, fix.end_line, fix.end_column))


def _overlaps(fixer: FixerBase, start: int, end: int) -> bool:
    """Whether the range touches an edit already made; an insertion at a range's edge counts."""
    return any(
        s < end and start < e or (s == e and start <= s <= end) or (start == end and s <= start <= e)
        for s, e, _ in fixer.edits
    )


def _describe(code: str, start: int, end: int, fix: FixIt) -> str:
    """The fix-it as a sentence a colleague could reuse."""
    where = f"at line {fix.line} (clang's fix-it)"
    if start == end:
        word = _IDENT.match(code[start:].lstrip())
        target = f" before {word.group(0)}" if word else ""
        return f'insert "{fix.text}"{target} {where}'
    old = code[start:end]
    if not fix.text:
        return f'remove "{old}" {where}'
    return f'replace "{old}" by "{fix.text}" {where}'
