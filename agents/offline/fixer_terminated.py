"""Input given without its NUL where the library reads up to one: the harness's, repaired by a copy.

libFuzzer's input is exactly ``size`` bytes with nothing after them. A function documented to
take NUL-terminated input (the parameter's description, the function's comment, or an option
constant whose comment says "the input is NUL-terminated", carried by the crash report's
``documented nul-terminated input`` line), or one taking a C string with no length beside it,
reads up to the terminator: handed libFuzzer's bytes as they are, it reads just past their end.
That read is the harness breaking the contract, never a library bug
(:func:`agents.offline.crash_roles.judge_feasibility`), and the repair hands the call a
NUL-terminated heap copy of the same bytes (:func:`terminate_input`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agents.offline import ckinds
from agents.offline.c_helpers import with_helper
from agents.offline.fixer_edit import matching_paren, split_args, statement_span
from agents.offline.leak_owner import uncast
from fuzzkit.api import FunctionDecl
from fuzzkit.crash_facts import read_crash

_RAW = "data"  # libFuzzer's own input (a piece of it has no terminator either, but no copy is made here)
COPY = "lf_terminated"
_DRAWN = re.compile(r"lf_take_(bits|int|byte)\s*\(\s*&\s*\w+\s*"
                    r"(?:,\s*([^,()]+?)\s*)?(?:,\s*([^,()]+?)\s*)?\)")


@dataclass(frozen=True)
class Unterminated:
    """A call handing libFuzzer's raw input to a parameter that is read up to its NUL."""

    function: str
    arg: int  # the raw input's argument position
    start: int  # where the call's name starts in the harness
    close: int  # its closing parenthesis
    why: str  # what says the input must be terminated


def documented(triage: str) -> tuple[dict[str, list[str]], dict[str, int | None]]:
    """The report's documented NUL-terminated parameters (``{function: [param]}``) and flags."""
    found = read_crash(triage).terminated
    return dict(found.params), dict(found.flags)


def unterminated_calls(code: str, triage: str, api: list[FunctionDecl],
                       entry: str = "") -> list[Unterminated]:
    """The harness's calls that hand ``data`` as it is to input the library reads up to a NUL.

    Documented so: the parameter (its function's comment), or a documented option constant the
    call passes (by name, or in an option word drawn from the input that can carry its bit). Or
    ``entry``, the call the crash came through, takes a C string there with no length after it.
    """
    params, flags = documented(triage)
    decls = {f.name: f for f in api}
    found: list[Unterminated] = []
    for call in re.finditer(r"\b([A-Za-z_]\w*)\s*\(", code):
        decl = decls.get(call.group(1))
        close = matching_paren(code, call.end() - 1) if decl else None
        if decl is None or close is None:
            continue
        args = split_args(code[call.end():close])
        raw = [i for i, a in enumerate(args) if uncast(a) == _RAW and i < len(decl.params)]
        if not raw or len(args) != len(decl.params):
            continue
        param = decl.params[raw[0]]
        flag = next((f for f in flags if any(_carries(code, a, f, flags[f]) for a in args)), "")
        after = decl.params[raw[0] + 1] if raw[0] + 1 < len(decl.params) else None
        if param.name and param.name in params.get(decl.name, []):
            why = f"its documentation says {param.name} is NUL-terminated"
        elif flag:
            why = f"it is passed {flag}, whose documentation says the input is NUL-terminated"
        elif decl.name == entry and ckinds.is_string(param.type) and not (after and ckinds.is_length(after)):
            why = f"it takes {param.name or 'the text'} as a C string, with no length beside it"
        else:
            continue
        found.append(Unterminated(decl.name, raw[0], call.start(), close, why))
    return found


def _carries(code: str, arg: str, flag: str, value: int | None) -> bool:
    """Whether the argument ``arg`` can carry the option ``flag``.

    It names the flag, or is a variable the harness sets from an expression that names it, or
    draws from the input with a range or bit mask that holds the flag's value.
    """
    if re.search(rf"\b{re.escape(flag)}\b", arg):
        return True
    var = uncast(arg)
    if not re.fullmatch(r"[A-Za-z_]\w*", var):
        return False
    for m in re.finditer(rf"\b{re.escape(var)}\s*[|&^+-]?=(?!=)\s*([^;]*);", code):
        if re.search(rf"\b{re.escape(flag)}\b", m.group(1)):
            return True
        drawn = _DRAWN.search(m.group(1))
        if drawn and value is not None and _drawn_holds(drawn, value):
            return True
    return False


def _drawn_holds(drawn: re.Match[str], value: int) -> bool:
    """Whether an option drawn from the input (masked bits, an int in a range, a byte) can be ``value``."""
    def number(text: str | None) -> int | None:
        try:
            return int(re.sub(r"[uUlL]+$", "", (text or "").strip()), 0)
        except ValueError:
            return None
    kind, first, second = drawn.group(1), number(drawn.group(2)), number(drawn.group(3))
    if kind == "bits":
        return first is not None and first & value == value
    if kind == "int":
        return first is not None and second is not None and first <= value <= second
    return 0 <= value <= 255


def terminate_input(code: str, triage: str, api: list[FunctionDecl]) -> tuple[str, str | None]:
    """The harness handing a NUL-terminated copy of the input where it handed ``data`` as it is.

    For a read just past libFuzzer's input (the triage's overflow on ``fuzzer-input``): each call
    :func:`unterminated_calls` finds gets ``lf_terminated``, a heap copy of the bytes it was
    given (the length passed beside them, else ``size``) with a NUL after them, made right before
    the call and freed at each return. ``None`` when nothing fits.
    """
    report = read_crash(triage)
    if report.buffer_origin != "fuzzer-input" or not report.access.startswith("READ") or COPY in code:
        return code, None
    calls = unterminated_calls(code, triage, api, report.entry_function)
    if not calls or not re.search(r"\bLLVMFuzzerTestOneInput\s*\([^)]*\)\s*\{", code):
        return code, None
    decls = {f.name: f for f in api}
    for call in reversed(calls):  # from the end: earlier offsets stay valid
        code = _copied_for(code, call, decls[call.function])
    body = re.search(r"\bLLVMFuzzerTestOneInput\s*\([^)]*\)\s*\{", code)
    assert body is not None
    close = _closing_brace(code, body.end() - 1)
    freed = re.sub(r"\breturn\b([^;]*);", rf"{{ free({COPY}); return\1; }}", code[body.end():close])
    code = code[:body.end()] + f"\n  char *{COPY} = NULL;" + freed + code[close:]
    names = ", ".join(dict.fromkeys(c.function for c in calls))
    return with_helper(code, "strndup"), (f"hand {names} a NUL-terminated copy of the input ({calls[0].why}; "
                                 "libFuzzer's data has no NUL after it)")


def _copied_for(code: str, call: Unterminated, decl: FunctionDecl) -> str:
    """``code`` with ``call`` given the copy, made (and the previous one freed) right before it."""
    open_at = code.index("(", call.start)
    args = split_args(code[open_at + 1:call.close])
    after = decl.params[call.arg + 1] if call.arg + 1 < len(decl.params) else None
    length = args[call.arg + 1].strip() if after and ckinds.is_length(after) else "size"
    given = args[call.arg].strip()
    args[call.arg] = (re.sub(rf"\b{_RAW}\b", COPY, given) if given != _RAW
                      else f"({decl.params[call.arg].type.strip()}){COPY}")
    code = code[:open_at + 1] + ", ".join(a.strip() for a in args) + code[call.close:]
    start, _end = statement_span(code, call.start)
    lead = len(code[start:]) - len(code[start:].lstrip())
    indent = code[start:start + lead].split("\n")[-1]
    copy = (f"free({COPY}); {COPY} = lf_strndup(data, (size_t)({length}));\n{indent}"
            f"if ({COPY} == NULL) {_leave(code, call.start)}\n{indent}")
    return code[:start + lead] + copy + code[start + lead:]


def _leave(code: str, at: int) -> str:
    """How the harness leaves the input at ``at``: its cleanup label when one follows, else returns."""
    return "goto lf_cleanup;" if re.search(r"^\s*lf_cleanup\s*:", code[at:], re.M) else "return 0;"


def _closing_brace(code: str, open_pos: int) -> int:
    depth = 0
    for j in range(open_pos, len(code)):
        depth += {"{": 1, "}": -1}.get(code[j], 0)
        if depth == 0:
            return j
    return len(code)
