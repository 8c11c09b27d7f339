"""An improvement block whose call's result leaks keeps the block and releases the result.

A block that calls ``char *lib_build_uri(const char *, const char *)`` and never releases what it
returns leaks on every input: the header says nothing of who owns the string (the documentation
is in the source), but LeakSanitizer's allocation stack, ``malloc <- ... <- lib_build_uri <-
LLVMFuzzerTestOneInput``, does. Before such a block is dropped (:mod:`nodes.block_drop`), the next
version releases that result inside the block: with the releaser the header ties to the function
or its type, else the library's own ``<prefix>_free(void *)``, else ``free``. A block repaired once
that crashes again is dropped as before.
"""

from __future__ import annotations

import re
from typing import Any

from agent_graph.state import FuzzState, counter
from fuzzkit.api import FunctionDecl
from fuzzkit.header_facts import HeaderFacts
from long_term_memory.experience.lessons import RELEASE_NAME
from nodes.block_drop import block_end, crashed_mark

HARNESS_ENTRY = "LLVMFuzzerTestOneInput"
_CHAR = re.compile(r"^(?:const\s+)?(?:unsigned\s+|signed\s+)?(?:char|u?int8_t|void)\s*\*$")
_RELEASE = re.compile(rf"\b{RELEASE_NAME}\s*\(", re.I)


def release_leaked_result(state: FuzzState) -> tuple[dict[str, Any], str] | None:
    """The next version, with the result of the crashed block's leaking call released, and its direction.

    None unless the crash is a leak allocated under a call the block assigns to a variable it
    never releases, or the block was repaired this way before.
    """
    crash = state.get("crash") or {}
    if crash.get("kind") != "leak":
        return None
    direction, index = crashed_mark(state)
    change = dict(state.get("last_change") or {})
    if not direction or direction in (change.get("released") or []):
        return None
    frames = [f.get("function") or "" for f in crash.get("frames") or []]
    # The frame under the harness's: the library function the block called.
    called = frames[frames.index(HARNESS_ENTRY) - 1] if HARNESS_ENTRY in frames[1:] else ""
    callee = next((d for d in map(FunctionDecl.from_dict, state.get("api") or []) if d.name == called), None)
    lines = (state.get("harness_code") or "").splitlines(keepends=True)
    end = block_end(lines, index)
    if callee is None or end is None:
        return None
    block = "".join(lines[index:end])
    assigned = re.search(rf"\b([A-Za-z_]\w*)\s*=\s*(?:\([^()]*\)\s*)?{re.escape(callee.name)}\s*\(", block)
    if assigned is None or _released(block, assigned.group(1)):
        return None
    releaser = releaser_for(callee, HeaderFacts.from_dict(state.get("header_facts")), state.get("api") or [])
    if releaser is None:
        return None
    var = assigned.group(1)
    indent = re.match(r"[ \t]*", lines[end]).group(0) + "  "  # type: ignore[union-attr]
    lines.insert(end, f"{indent}if ({var} != NULL) {releaser}((void *){var});"
                      f" /* LeakSanitizer: {callee.name}'s result is the caller's */\n")
    version = counter(state, "harness_versions") + 1
    change.update(version=version, from_version=state.get("harness_version"),
                  released=[*(change.get("released") or []), direction])
    return ({"harness_code": "".join(lines), "harness_version": version, "last_change": change,
             "fix_rounds": 0, "counters": {"harness_versions": 1, "repaired_blocks": 1}}, direction)


def _released(block: str, var: str) -> bool:
    """Whether ``block`` already hands ``var`` to a release-like call."""
    return any(re.match(rf"\s*(?:\([^()]*\)\s*)?{re.escape(var)}\s*\)", block[m.end():])
               for m in _RELEASE.finditer(block))


def releaser_for(fn: FunctionDecl, facts: HeaderFacts, api: list[dict[str, Any]]) -> str | None:
    """What releases ``fn``'s result (None: nothing the header says, and no text or bytes).

    The releaser documented for it or for its type, then for text or bytes the library's own
    ``<prefix>_free(void *)``, else ``free``. From the header facts alone, whatever the model: the
    offline engine's own choice (``agents.offline.fixer_leak``) reads its type table instead.
    """
    canonical = {t.name: t.canonical for t in facts.typedefs}
    ret = fn.return_type.strip()
    base = re.sub(r"\bconst\b", "", ret).replace("*", "").strip()
    spelled = {ret, f"{canonical.get(base, base)} {'*' * ret.count('*')}".strip()}
    for r in facts.releasers:
        if r.releases == f"what {fn.name} allocates":
            return r.function
    for r in facts.releasers:  # (a `void *` releaser by parameter type frees anything it is given)
        if r.releases in spelled and not _CHAR.match(r.releases):
            return r.function
    if not any(_CHAR.match(s) for s in spelled):
        return None
    prefix = re.match(r"[a-z]+[0-9]*_?", fn.name)
    own = {f"{prefix.group(0)}free", f"{prefix.group(0)}_free"} if prefix else set()
    single = [d for d in api if len(d.get("params") or []) == 1
              and re.sub(r"\bconst\b|\s", "", d["params"][0]["type"]) == "void*"]
    return next((d["name"] for d in single if d["name"] in own), "free")
