"""A failed assertion on a target's own parameters: the harness skips inputs that break it.

A library function that starts with ``assert(length % BLOCK == 0)`` or ``assert(n <= ctx->cap)``
states its precondition in code. When the harness called it straight from
``LLVMFuzzerTestOneInput`` and that assertion failed (the triage's ``failed assertion`` and
``entry function``), the harness passed what the function never accepts: the repair puts the same
condition, on the harness's own arguments, before the call, and leaves the input when it does not
hold. A condition the function's documentation asserts on the kind of object it takes, which
the harness never names (:mod:`agents.offline.object_kinds`), is checked the same way after a
crash inside that call. The condition is copied only when everything it names is visible to the harness: the
function's parameters (replaced by the arguments), fields after ``->`` or ``.``, the API's own
functions, C keywords and type names; upper-case names (macros of the public header) are tested
with ``#if defined``, so a macro private to the library's source leaves the check out instead of
breaking the build.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from agents.offline import cdecl, ckinds
from agents.offline.fixer_edit import matching_paren, split_args
from agents.offline.fixer_input import insert_before
from agents.offline.object_kinds import unmet_kinds
from fuzzkit.api import FunctionDecl
from fuzzkit.crash_facts import read_crash
from fuzzkit.doc_conditions import field_conditions
from fuzzkit.vocabulary import c_words

_NAME = re.compile(r"(->|\.)?\s*\b([A-Za-z_]\w*)\b(\s*\()?")
_MACRO = re.compile(r"[A-Z][A-Z0-9_]*")
_C_WORDS = c_words("type", "sign", "tag", "qualifier") | {"sizeof", "NULL", "true", "false"}


def guard_precondition(code: str, triage: str, api: list[FunctionDecl]) -> tuple[str, str | None]:
    """The harness with the failed assertion's condition made to hold, or ``(code, None)``.

    A bound on one length parameter (``length <= MAX``, ``!(length % BLOCK)``) is met by
    clamping or rounding the argument down, so the call still happens on most inputs; any other
    condition is checked before the call, which the input skips when it does not hold.
    """
    report = read_crash(triage)
    entry = report.entry_function
    decl = next((d for d in api if entry and d.name == entry), None)
    documented = "" if report.assertion else next(iter(unmet_kinds(code, report, decl)), "")
    cond = report.assertion or documented
    call = re.search(rf"\b{re.escape(decl.name)}\s*\(", code) if decl else None
    close = matching_paren(code, call.end() - 1) if call else None
    if not cond or decl is None or call is None or close is None:
        return code, None
    args = [a.strip() for a in split_args(code[call.end():close])]
    mark = f"/* {decl.name}'s precondition: {cond} */"
    if len(args) != len(decl.params) or mark in code:
        return code, None
    names = {d.name for d in api}
    bounded = _bounded(code, call.start(), close, cond, decl, args, names, mark)
    if bounded:
        return bounded, (f"pass {decl.name} an argument that meets its asserted precondition "
                         f"`{cond}` (the failed assertion was on it)")
    kinds = field_conditions([documented], [p.name for p in decl.params if p.name]) if documented else []
    check = _on_arguments(cond, decl, args, names, public=[constant for _p, _f, constant in kinds])
    if check is None:
        return code, None
    test, macros = check
    line = _under(macros, f"if (!({test})) {_exit(code, call.start())} {mark}")
    return insert_before(code, call.start(), line), (
        f"call {decl.name} only when its asserted precondition `{cond}` holds for the harness's "
        f"arguments ({'its documentation asserts it' if documented else 'the failed assertion was on them'})")


def _bounded(code: str, at: int, close: int, cond: str, decl: FunctionDecl, args: list[str],
             api: set[str], mark: str) -> str | None:
    """The harness with the one length argument ``cond`` bounds clamped or rounded down, or None."""
    for i, p in enumerate(decl.params):
        if not p.name or not ckinds.is_integer(p.type) or ckinds.is_pointer(p.type):
            continue
        n = re.escape(p.name)
        most = re.fullmatch(rf"\s*{n}\s*<=\s*(?P<e>.+?)\s*|\s*(?P<e2>.+?)\s*>=\s*{n}\s*", cond)
        whole = re.fullmatch(rf"\s*!\s*\(\s*{n}\s*%\s*(?P<e>.+?)\s*\)\s*"
                             rf"|\s*\(?\s*{n}\s*%\s*(?P<e2>.+?)\s*\)?\s*==\s*0\s*", cond)
        found = most or whole
        bound = found and (found.group("e") or found.group("e2"))
        checked = _on_arguments(bound, decl, args, api, need_param=False) if bound else None
        if found is None or checked is None or re.search(rf"\b{n}\b", bound or ""):
            continue
        limit, macros = checked
        var, ctype = f"lf_arg{i}", cdecl.normalize_type(p.type)
        fit = f"if ({var} > ({limit})) {var} = ({limit});" if most else f"{var} -= {var} % ({limit});"
        lines = f"{ctype} {var} = ({ctype})({args[i]}); {mark}\n{_under(macros, fit)}"
        passed = [var if k == i else a for k, a in enumerate(args)]
        edited = code[:code.index("(", at) + 1] + ", ".join(passed) + code[close:]
        return insert_before(edited, at, lines)
    return None


def _under(macros: list[str], line: str) -> str:
    """``line`` under ``#if defined(...)`` of the macros it names."""
    return f"#if {' && '.join(f'defined({m})' for m in macros)}\n{line}\n#endif" if macros else line


def _exit(code: str, at: int) -> str:
    """How the harness leaves the input at ``at``: its nearest failure jump still ahead, or returns."""
    for label in reversed(re.findall(r"\bgoto\s+(\w+)\s*;", code[:at])):
        if re.search(rf"^\s*{label}\s*:", code[at:], re.M):
            return f"goto {label};"
    return "goto lf_cleanup;" if re.search(r"^\s*lf_cleanup\s*:", code[at:], re.M) else "return 0;"


def _on_arguments(cond: str, decl: FunctionDecl, args: list[str], api: set[str], need_param: bool = True,
                  public: Collection[str] = ()) -> tuple[str, list[str]] | None:
    """``cond`` with the parameters replaced by the arguments, and the macros it needs; None if unsafe.

    ``public``: upper-case names known to be the header's (a documented condition's constants),
    used without ``#if defined``.
    """
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
            macros += [name] if name not in macros and name not in public else []
        else:
            return None  # a name only the library's source knows
    if (need_param and not used) or '"' in cond or "'" in cond:
        return None
    return "".join(out) + cond[at:], macros
