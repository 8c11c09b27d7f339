"""Reading plain-English guidance (API constraints, known fixes, things to avoid) into actions.

Constraints come from the function analyzer and known fixes from session memory: both are short
sentences (the fixer writes its fixes in exactly the forms recognized here). Anything not
understood is kept as a note so the caller can see it was read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fuzzkit.api import FunctionDecl

_INCLUDE = re.compile(r"#\s*include\s*([<\"][\w./+-]+[>\"])")
_HEADER_WORD = re.compile(r"\binclude\s+([<\"]?[\w./+-]+\.h[>\"]?)", re.I)
# Only whole-sentence bans: "never call X on a borrowed item" must not ban X everywhere.
_END = r"`?(?=\s*(?:[.;:,()]|$|\s+(?:again|directly|here|anymore|at all)\b))"
_AVOID = re.compile(
    rf"(?:do not|don't|never|avoid|stop)\s+(?:call(?:ing)?|use|using)?\s*`?(\w+){_END}|"
    rf"remove the call to `?(\w+){_END}|`?(\w+)`? (?:is|was) not (?:linked|available|exported)",
    re.I,
)
_RELEASE = re.compile(r"(?:freed|released|destroyed|deleted|closed)\s+(?:with|by|using)\s+`?(\w+)`?", re.I)
_BEFORE = re.compile(
    r"(?:call|initiali[sz]ed? with|init(?:ialize)? with|set up with)\s+`?(\w+)`?\s+"
    r"(?:\([^)]*\)\s*)?before\s+(?:calling\s+)?`?(\w+)`?",
    re.I,
)
_NUL = re.compile(r"`?(\w+)`?\s+must be (?:a )?NUL-terminated", re.I)
_MIN = re.compile(r"(?:at least|>=|no fewer than)\s*(\d+)\s*bytes?", re.I)
_REPLACE = re.compile(r"(?:replace|use)\s+`?(\w+)`?\s+(?:with|by)\s+`?(\w+)`?", re.I)
_INSTEAD = re.compile(r"use\s+`?(\w+)`?\s+instead of\s+`?(\w+)`?", re.I)


@dataclass
class Guidance:
    """What the guidance lines ask the generated code to do."""

    includes: list[str] = field(default_factory=list)
    avoid: set[str] = field(default_factory=set)
    release: dict[str, str] = field(default_factory=dict)  # destructor name -> why
    before: list[tuple[str, str]] = field(default_factory=list)
    c_strings: set[str] = field(default_factory=set)
    renames: dict[str, str] = field(default_factory=dict)
    min_size: int = 0
    applied: list[str] = field(default_factory=list)


def read_guidance(
    lines: list[str] | tuple[str, ...], api: list[FunctionDecl], target: FunctionDecl | None = None
) -> Guidance:
    """Parse guidance sentences against the API (unknown function names are ignored)."""
    names = {f.name for f in api}
    params = {p.name for p in target.params} if target else set()
    g = Guidance()
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        understood = False
        for inc in _INCLUDE.findall(line):
            _add_include(g, inc)
            understood = True
        if not understood:
            for inc in _HEADER_WORD.findall(line):
                _add_include(g, inc if inc[0] in '<"' else f'"{inc}"')
                understood = True
        for m in _INSTEAD.finditer(line):
            if m.group(1) in names:
                g.renames[m.group(2)] = m.group(1)
                understood = True
        for m in _REPLACE.finditer(line):
            old, new = m.group(1), m.group(2)
            if new in names and old != new and "instead" not in line:
                g.renames[old] = new
                understood = True
        for m in _AVOID.finditer(line):
            name = next(x for x in m.groups() if x)
            if name in names or re.match(r"^[A-Za-z_]\w*$", name) and "_" in name:
                g.avoid.add(name)
                understood = True
        for m in _RELEASE.finditer(line):
            if m.group(1) in names:
                g.release[m.group(1)] = line
                understood = True
        for m in _BEFORE.finditer(line):
            first, then = m.group(1), m.group(2)
            if first in names:
                g.before.append((first, then))
                understood = True
        for m in _NUL.finditer(line):
            if m.group(1) in params:
                g.c_strings.add(m.group(1))
                understood = True
        for m in _MIN.finditer(line):
            g.min_size = max(g.min_size, int(m.group(1)))
            understood = True
        if understood:
            g.applied.append(line)
    g.avoid -= set(g.renames.values())
    return g


def _add_include(g: Guidance, header: str) -> None:
    if header not in g.includes:
        g.includes.append(header)
