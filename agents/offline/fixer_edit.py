"""Text edits on C source that the fixer needs: includes, calls and their argument lists."""

from __future__ import annotations

import re

from agents.offline import cdecl, ckinds
from fuzzkit.api import FunctionDecl
from fuzzkit.vocabulary import c_words


def add_include(code: str, header: str) -> str:
    """``code`` with ``#include header`` added after the last include (once)."""
    if re.search(rf"^\s*#\s*include\s*{re.escape(header)}", code, re.M):
        return code
    lines = code.split("\n")
    last = max((i for i, ln in enumerate(lines) if re.match(r"\s*#\s*include\b", ln)), default=-1)
    if last < 0:
        last = next((i for i, ln in enumerate(lines) if "@LF:INCLUDES" in ln), -1)
    lines.insert(last + 1, f"#include {header}")
    return "\n".join(lines)


def offset(code: str, line: int, col: int) -> int:
    """The character offset of a 1-based line/column."""
    lines = code.split("\n")
    line = max(1, min(line, len(lines)))
    return sum(len(ln) + 1 for ln in lines[: line - 1]) + max(0, col - 1)


def call_at(code: str, pos: int) -> tuple[str, int, int] | None:
    """The innermost call around ``pos``: (function name, offset of '(', offset of ')')."""
    depth, i = 0, min(pos, len(code) - 1)
    if code[i] == ")":
        i -= 1
    while i >= 0:
        ch = code[i]
        if ch == ")":
            depth += 1
        elif ch == "(":
            if depth == 0:
                m = re.search(r"(\w+)\s*$", code[:i])
                if m and m.group(1) not in c_words("statement"):
                    close = matching_paren(code, i)
                    if close is not None:
                        return m.group(1), i, close
                    return None
            else:
                depth -= 1
        elif ch in ";{}":
            return None
        i -= 1
    return None


def matching_paren(code: str, open_pos: int) -> int | None:
    """The offset of the ``)`` matching the ``(`` at ``open_pos``."""
    depth = 0
    for j in range(open_pos, len(code)):
        if code[j] == "(":
            depth += 1
        elif code[j] == ")":
            depth -= 1
            if depth == 0:
                return j
    return None


def split_args(text: str) -> list[str]:
    """Top-level comma-separated arguments (empty list for an empty argument list)."""
    return cdecl.split_top(text) if text.strip() else []


def arg_index(code: str, open_pos: int, pos: int) -> int:
    """Which argument (0-based) of the call opened at ``open_pos`` contains ``pos``."""
    depth, n = 0, 0
    for j in range(open_pos + 1, pos):
        ch = code[j]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            n += 1
    return n


def expression_end(code: str, pos: int) -> int:
    """Where the expression starting at ``pos`` ends (next top-level ``,`` ``)`` or ``;``)."""
    depth = 0
    for j in range(pos, len(code)):
        ch = code[j]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                return j
            depth -= 1
        elif ch in ",;" and depth == 0:
            return j
    return len(code)


def statement_span(code: str, pos: int) -> tuple[int, int]:
    """The statement containing ``pos``: from after the previous ``;``/``{``/``}`` to its ``;``."""
    start = max(code.rfind(c, 0, pos) for c in ";{}") + 1
    while code[start:pos].lstrip().startswith("#"):  # preprocessor lines are not statements
        nl = code.find("\n", len(code[start:pos]) - len(code[start:pos].lstrip()) + start)
        if nl < 0 or nl >= pos:
            break
        start = nl + 1
    end = code.find(";", pos)
    return start, (end + 1 if end >= 0 else len(code))


def replace_identifier(code: str, old: str, new: str) -> str:
    """Every whole-word ``old`` replaced by ``new``, outside comments and strings."""
    parts = re.split(r"(/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\])*\")", code, flags=re.S)
    for i in range(0, len(parts), 2):
        parts[i] = re.sub(rf"\b{re.escape(old)}\b", new, parts[i])
    return "".join(parts)


def default_arg(fn: FunctionDecl, i: int, have: list[str]) -> str:
    """A safe argument for a missing parameter (payload length after the payload pointer)."""
    p = fn.params[i]
    prev = have[i - 1] if i > 0 and i - 1 < len(have) else ""
    if ckinds.is_integer(p.type) and ckinds.is_length(p) and prev:
        if re.search(r"\bdata\b", prev):
            return f"({p.type})size"
        if ckinds.is_string(fn.params[i - 1].type):
            return f"({p.type})strlen({prev})"
    if ckinds.is_pointer(p.type) or ckinds.is_function_pointer(p.type):
        return "NULL"
    if ckinds.is_float(p.type):
        return "0.0"
    if ckinds.is_integer(p.type) or ckinds.is_enum_like(p.type):
        return f"({p.type.replace('const ', '')})0"
    return "0"
