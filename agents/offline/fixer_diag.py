"""Reading compiler and linker output into the diagnostics the fixer acts on."""

from __future__ import annotations

import re
from dataclasses import dataclass

_DIAG = re.compile(
    r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+): (?P<sev>fatal error|error|warning): "
    r"(?P<msg>.*)$",
    re.M,
)
_LINK = re.compile(r"(?:undefined reference to|undefined symbol:)\s*[`'\"]?(?P<name>[\w.$]+)")
# Warnings that break harnesses at run time (a truncated pointer, a wrong argument type).
_SERIOUS_WARNINGS = re.compile(
    r"implicit declaration|implicitly declaring|incompatible pointer|incompatible integer to "
    r"pointer|incompatible pointer to integer|non-void function does not return|control reaches "
    r"end of non-void|converts between pointers to integer types|discards qualifiers"
)


@dataclass
class Diag:
    """One harness diagnostic: where, how bad, what."""

    line: int
    col: int
    severity: str
    message: str


def parse_diagnostics(text: str) -> tuple[list[Diag], list[str]]:
    """Harness diagnostics (errors, then serious warnings) and undefined linker symbols."""
    found = [m for m in _DIAG.finditer(text)]
    sources = [m["file"] for m in found if not m["file"].endswith(".h")]
    harness = sources[0] if sources else None
    diags: list[Diag] = []
    seen = set()
    for m in found:
        sev, msg = m["sev"], m["msg"].strip()
        if harness and m["file"] != harness and not msg.startswith("'"):
            if "file not found" not in msg:
                continue
        if sev == "warning" and not _SERIOUS_WARNINGS.search(msg):
            continue
        key = (int(m["line"]), int(m["col"]), msg)
        if key not in seen:
            seen.add(key)
            diags.append(Diag(int(m["line"]), int(m["col"]), sev, msg))
    implicit = {d.line for d in diags if "implicit" in d.message}
    # An implicitly declared function returns int: that conversion warning goes with the fix.
    diags = [d for d in diags if not (d.line in implicit and "-Wint-conversion" in d.message)]
    diags.sort(key=lambda d: (d.severity == "warning", d.line, d.col))
    links = list(dict.fromkeys(m["name"] for m in _LINK.finditer(text)))
    return diags, links
