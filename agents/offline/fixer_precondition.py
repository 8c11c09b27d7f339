"""A failed assertion on a target's own parameters: the harness skips inputs that break it.

A library function that starts with ``assert(length % BLOCK == 0)`` or ``assert(n <= ctx->cap)``
states its precondition in code. When the harness called it straight from
``LLVMFuzzerTestOneInput`` and that assertion failed (the triage's ``failed assertion`` and
``entry function``), the harness passed what the function never accepts: the repair puts the same
condition, on the harness's own arguments, before the call, and leaves the input when it does not
hold. The condition is copied only when everything it names is visible to the harness: the
function's parameters (replaced by the arguments), fields after ``->`` or ``.``, the API's own
functions, C keywords and type names; upper-case names (macros of the public header) are tested
with ``#if defined``, so a macro private to the library's source leaves the check out instead of
breaking the build.
"""

from __future__ import annotations

import re

from agents.offline.fixer_edit import matching_paren, split_args
from agents.offline.fixer_input import insert_before
from fuzzkit.api import FunctionDecl

_ASSERTION = re.compile(r"^failed assertion: (.+)$", re.M)
_ENTRY = re.compile(r"^entry function: (\w+)\s*$", re.M)
_NAME = re.compile(r"(->|\.)?\s*\b([A-Za-z_]\w*)\b(\s*\()?")
_MACRO = re.compile(r"[A-Z][A-Z0-9_]*")
_C_WORDS = frozenset(
    "sizeof NULL struct union enum const unsigned signed int char long short void float double "
    "_Bool bool true false".split())


def guard_precondition(code: str, triage: str, api: list[FunctionDecl]) -> tuple[str, str | None]:
    """The harness with the failed assertion's condition checked before the call, or ``(code, None)``."""
    cond, entry = _ASSERTION.search(triage), _ENTRY.search(triage)
    decl = next((d for d in api if entry and d.name == entry.group(1)), None)
    call = re.search(rf"\b{re.escape(decl.name)}\s*\(", code) if decl else None
    close = matching_paren(code, call.end() - 1) if call else None
    if cond is None or decl is None or call is None or close is None:
        return code, None
    args = split_args(code[call.end():close])
    if len(args) != len(decl.params):
        return code, None
    check = _on_arguments(cond.group(1), decl, [a.strip() for a in args], {d.name for d in api})
    if check is None:
        return code, None
    test, macros = check
    leave = "goto lf_cleanup;" if re.search(r"^\s*lf_cleanup\s*:", code, re.M) else "return 0;"
    line = f"if (!({test})) {leave} /* {decl.name}'s precondition: {cond.group(1)} */"
    if line in code:
        return code, None
    if macros:
        line = f"#if {' && '.join(f'defined({m})' for m in macros)}\n{line}\n#endif"
    return insert_before(code, call.start(), line), (
        f"call {decl.name} only when its asserted precondition `{cond.group(1)}` holds for the "
        "harness's arguments (the failed assertion was on them)")


def _on_arguments(cond: str, decl: FunctionDecl, args: list[str],
                  api: set[str]) -> tuple[str, list[str]] | None:
    """``cond`` with the parameters replaced by the arguments, and the macros it needs; None if unsafe."""
    params = {p.name: f"({a})" for p, a in zip(decl.params, args, strict=True) if p.name}
    macros: list[str] = []
    out, at, used = [], 0, False
    for m in _NAME.finditer(cond):
        member, name, called = m.group(1), m.group(2), m.group(3)
        if member:
            continue  # a field: it belongs to what its object is
        if name in params and not called:
            out.append(cond[at:m.start(2)] + params[name])
            at, used = m.end(2), True
        elif called and name in api or name in _C_WORDS or name.endswith("_t"):
            continue
        elif _MACRO.fullmatch(name) and not called:
            macros += [name] if name not in macros else []
        else:
            return None  # a name only the library's source knows
    if not used or '"' in cond or "'" in cond:
        return None
    return "".join(out) + cond[at:], macros
