"""Repairs that follow the library's own usage: the right releaser, and objects made as it makes them.

- :func:`release_as_usage`: an object the harness "released" with another function than the
  one the library's own code releases it with (one that frees only a part of it) leaks; the
  call is replaced by the library's releaser.
- :func:`made_as_usage`: a crash in a harness that never makes the target's objects the way
  the library's own code does (a zeroed handle, a decoder with no error manager) is repaired
  by the usage draft itself.
"""

from __future__ import annotations

import re

from fuzzkit.api import FunctionDecl
from fuzzkit.usage_models import UsageFacts, type_key
from fuzzkit.vocabulary import has_verb

_DECL = r"(?:const\s+)?{base}\s*(?P<stars>\**)\s*(?P<var>[A-Za-z_]\w*)\s*[=;,)]"


def release_as_usage(harness: str, facts: UsageFacts) -> tuple[str, list[str]]:
    """The harness with each usage-typed object released by the library's own releaser."""
    fixes: list[str] = []
    for obj in facts.objects:
        if not obj.release:
            continue
        key = type_key(obj.type)
        base = re.escape(key.replace("*", "").strip())
        stars = key.count("*")
        for decl in re.finditer(_DECL.format(base=base), harness):
            if len(decl.group("stars")) != stars:
                continue
            var = decl.group("var")
            call = re.compile(rf"\b(?P<fn>\w+)\s*\(\s*(?:\([^()]*\)\s*)?{re.escape(var)}\s*\)")
            for m in list(call.finditer(harness)):
                fn = m.group("fn")
                if fn != obj.release and has_verb(fn, "release") and fn != "free":
                    harness = harness.replace(m.group(0), f"{obj.release}({var})", 1)
                    fixes.append(f"{var} is released with {obj.release}, as the library's own code does, "
                                 f"not {fn} (which does not release all of it)")
    return harness, fixes


def made_as_usage(harness: str, facts: UsageFacts, target: FunctionDecl) -> bool:
    """Whether the harness already makes the target's objects as the usage sequence does."""
    protocol = facts.target(target.name)
    if protocol is None:
        return True
    setup = protocol.sequence[:next((i for i, s in enumerate(protocol.sequence) if s.call == target.name), 0)]
    return all(re.search(rf"\b{re.escape(s.call)}\s*\(", harness) for s in setup)


__all__ = ["made_as_usage", "release_as_usage"]
