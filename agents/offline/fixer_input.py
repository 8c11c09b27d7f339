"""Repair a harness whose library calls never see the fuzz input.

The execution node rejects a harness in which no library call receives ``data`` (or a buffer
made from it) — typically a decoder context created and decoded without being handed the
buffer. The repair inserts, right before the target call, a call of the function that attaches
input to the target's object (``set_buffer(ctx, data, size)``), found by its shape.
"""

from __future__ import annotations

import re

from agents.offline import cdecl, ckinds
from agents.offline.c_helpers import with_helper
from agents.offline.fixer_edit import matching_paren, split_args, statement_span
from agents.offline.synth_api import ApiIndex
from fuzzkit.api import FunctionDecl
from fuzzkit.crash_facts import read_crash
from fuzzkit.guidance_facts import Rule


def feed_input(code: str, target: FunctionDecl, api: list[FunctionDecl],
               via: str = "", rules: list[Rule] | None = None) -> tuple[str, str | None]:
    """The harness with the input handed to the target's object, and a sentence saying how.

    ``via`` names the feeder a lesson chose; it is tried first. Returns the code unchanged and
    ``None`` when the API has no function taking input for it. ``rules`` gets a feed before the
    target's call as data too (``feed_input``).
    """
    idx = ApiIndex(api if any(f.name == target.name for f in api) else [*api, target])
    key = idx.first_object(target)
    call = re.search(rf"\b{re.escape(target.name)}\s*\(", code)
    if call is None:
        return code, None
    if key is None or not idx.input_feeders(target, key):
        return _feed_the_result(code, idx, target, via)
    slot = next((i for i, p in enumerate(target.params) if idx.type_key(p.type) == key), 0)
    depth, pos = 1, call.end()
    while pos < len(code) and depth:
        depth += {"(": 1, ")": -1}.get(code[pos], 0)
        pos += 1
    args = split_args(code[call.end():pos - 1])
    if slot >= len(args):
        return code, None
    obj = args[slot].strip()
    feeders = idx.input_feeders(target, key)
    chosen = [f for f in api if f.name == via]
    for feeder in [*chosen, *(f for f in feeders if f.name != via)]:
        line = _feeder_call(feeder, obj)
        if line is None:
            continue
        how = f"hand the fuzz input to {target.name}'s object with {feeder.name} before the call"
        if rules is not None:
            rules.append(Rule(kind="feed_input", name=feeder.name, then=target.name, text=how))
        return insert_before(code, call.start(), line), how
    return code, None


def _feed_the_result(code: str, idx: ApiIndex, target: FunctionDecl, via: str) -> tuple[str, str | None]:
    """A constructor target's object handed the input right after the call made it.

    ``ctx = ctx_new2(alloc, flags)`` makes a context that reads nothing until the function
    taking the data is called on it; the uses after the call then see the input.
    """
    made = idx.type_key(target.return_type)
    assigned = re.search(rf"\b([A-Za-z_]\w*)\s*=\s*(?:\([^()]*\)\s*)?{re.escape(target.name)}\s*\(", code)
    if not made or assigned is None or not idx.returns_owned(target):
        return code, None
    feeders = idx.input_feeders(target, made)
    for feeder in sorted(feeders, key=lambda f: f.name != via):
        line = _feeder_call(feeder, assigned.group(1))
        if line is None:
            continue
        _start, end = statement_span(code, assigned.start())
        head = code[:assigned.start()].split("\n")[-1]
        indent = head[:len(head) - len(head.lstrip())]
        fed = code[:end] + f"\n{indent}if ({assigned.group(1)} != NULL) {line}" + code[end:]
        return fed, f"hand the fuzz input to what {target.name} made with {feeder.name} right after the call"
    return code, None


def _feeder_call(feeder: FunctionDecl, obj: str) -> str | None:
    args = [obj]
    fed = False
    for p in feeder.params[1:]:
        if not fed and ckinds.is_bytes(p.type) and not ckinds.is_string(p.type):
            args.append(f"({cdecl.normalize_type(p.type)})data")
            fed = True
        elif fed and ckinds.is_length(p) or (fed and ckinds.is_integer(p.type) and len(args) == 2):
            args.append(f"({cdecl.normalize_type(p.type)})size")
        elif ckinds.is_pointer(p.type):
            args.append("NULL")
        else:
            args.append("0")
    return f"{feeder.name}({', '.join(args)});" if fed else None


_CAST = re.compile(r"^\(\s*(?:const\s+)?\w+(?:\s+const)?\s*\*+\s*\)\s*")


def guard_utf8_text(code: str, triage: str, api: list[FunctionDecl]) -> tuple[str, str | None]:
    """The harness skipping text that is not UTF-8 before a call documented to take UTF-8.

    For a crash whose input is not UTF-8 (the triage's ``input text``) in a harness calling a
    function whose documentation says the text it takes is UTF-8 (``documented utf-8
    parameters``): the check goes right before the first such call, on the variables passed
    there (with the length passed after one, else up to its NUL). ``None`` when nothing fits.
    """
    report = read_crash(triage)
    if not report.input_text.startswith("not valid UTF-8") or not report.utf8 or "lf_utf8_ok(" in code:
        return code, None
    decls = {f.name: f for f in api}
    for fn, listed in report.utf8.items():
        call = re.search(rf"\b{re.escape(fn)}\s*\(", code)
        close = matching_paren(code, call.end() - 1) if call and fn in decls else None
        if call is None or close is None:
            continue
        params, args = decls[fn].params, split_args(code[call.end():close])
        checks = []
        for i, p in enumerate(params[: len(args)]):
            var = _CAST.sub("", args[i].strip())
            if p.name not in listed or not re.fullmatch(r"[A-Za-z_]\w*", var):
                continue
            sized = i + 1 < min(len(params), len(args)) and ckinds.is_length(params[i + 1])
            if not sized and var == "data":
                continue  # the raw input has no NUL to stop at
            size = f"(size_t)({args[i + 1].strip()})" if sized else f"strlen((const char *){var})"
            checks.append(f"({var} != NULL && !lf_utf8_ok((const char *){var}, {size}))")
        if checks:
            leave = "goto lf_cleanup;" if re.search(r"^\s*lf_cleanup\s*:", code, re.M) else "return 0;"
            guarded = insert_before(code, call.start(), f"if ({' || '.join(checks)}) {leave}")
            return with_helper(guarded, "utf8_ok"), (
                f"pass {fn} only well-formed UTF-8 (documented), as the crash input is not")
    return code, None


def insert_before(code: str, pos: int, line: str) -> str:
    """``code`` with ``line`` (one or more lines) on its own before the statement at ``pos``."""
    start, _end = statement_span(code, pos)
    lead = len(code[start:]) - len(code[start:].lstrip())
    indent = code[start:start + lead].split("\n")[-1]
    return code[: start + lead] + line.replace("\n", "\n" + indent) + "\n" + indent + code[start + lead:]


