"""Repair a harness whose library calls never see the fuzz input.

The execution node rejects a harness in which no library call receives ``data`` (or a buffer
made from it) — typically a decoder context created and decoded without being handed the
buffer. The repair inserts, right before the target call, a call of the function that attaches
input to the target's object (``set_buffer(ctx, data, size)``), found by its shape.
"""

from __future__ import annotations

import re

from agents.offline import cdecl, ckinds
from agents.offline.fixer_edit import split_args, statement_span
from agents.offline.synth_api import ApiIndex
from fuzzkit.api import FunctionDecl


def feed_input(code: str, target: FunctionDecl, api: list[FunctionDecl],
               via: str = "") -> tuple[str, str | None]:
    """The harness with the input handed to the target's object, and a sentence saying how.

    ``via`` names the feeder a lesson chose; it is tried first. Returns the code unchanged and
    ``None`` when the API has no function taking input for it.
    """
    idx = ApiIndex(api if any(f.name == target.name for f in api) else [*api, target])
    key = idx.first_object(target)
    call = re.search(rf"\b{re.escape(target.name)}\s*\(", code)
    if key is None or call is None:
        return code, None
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
        start, _end = statement_span(code, call.start())
        space = re.match(r"\s*", code[start:])
        indent = (space.group(0) if space else "").split("\n")[-1]
        lead = len(code[start:]) - len(code[start:].lstrip())
        code = code[: start + lead] + line + "\n" + indent + code[start + lead:]
        return code, f"hand the fuzz input to {target.name}'s object with {feeder.name} before the call"
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


_ENTRY = re.compile(r"LLVMFuzzerTestOneInput\s*\([^)]*\)\s*\{")


def guard_empty_input(code: str) -> tuple[str, str | None]:
    """The harness returning early on an empty input, and a sentence saying so.

    For a crash whose reproducer is empty: the library's precondition (an assertion on a
    zero length, say) is not what the fuzzer should spend its time on. ``None`` when the
    harness already has such a guard or no entry point to put it in.
    """
    if re.search(r"\bif\s*\(\s*(size\s*==\s*0|size\s*<\s*[1-9]\d*|!\s*size)\s*\)\s*return\b", code):
        return code, None
    marker = code.find("/* @LF:GUARD */")
    if marker >= 0:
        at = code.index("\n", marker) + 1
    else:
        entry = _ENTRY.search(code)
        if entry is None:
            return code, None
        at = entry.end()
        at = code.index("\n", at) + 1 if "\n" in code[at:] else at
    guard = "  if (size == 0) return 0; /* LF fix: the library fails on an empty input */\n"
    return code[:at] + guard + code[at:], "return early on an empty input (the crash input is empty)"
