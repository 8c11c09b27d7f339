"""Reading compiler and linker output into the diagnostics the fixer acts on."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePath

from fuzzkit.diagnostics import SERIOUS_WARNINGS, FixIt, unescape

_DIAG = re.compile(
    r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+): (?P<sev>fatal error|error|warning|note): "
    r"(?P<msg>.*)$"
)
_LINK = re.compile(r"(?:undefined reference to|undefined symbol:)\s*[`'\"]?(?P<name>[\w.$]+)")
_QUOTED = r'"(?P<text>(?:[^"\\]|\\.)*)"'
# The compact form the build node writes under a diagnostic, and clang's own parseable form.
_FIXIT_COMPACT = re.compile(
    rf"^\s*fix-it: (?:insert {_QUOTED} at (?:(?P<ifile>[^:\s]+):)?(?P<il>\d+):(?P<ic>\d+)|"
    rf"(?P<verb>replace|remove) (?:(?P<rfile>[^:\s]+):)?(?P<l1>\d+):(?P<c1>\d+)-(?P<l2>\d+):(?P<c2>\d+)"
    rf"(?: with \"(?P<rtext>(?:[^\"\\]|\\.)*)\")?)\s*$"
)
_FIXIT_RAW = re.compile(
    rf'^fix-it:"(?P<file>(?:[^"\\]|\\.)*)":\{{(?P<l1>\d+):(?P<c1>\d+)-(?P<l2>\d+):(?P<c2>\d+)\}}:{_QUOTED}$'
)


@dataclass
class Diag:
    """One harness diagnostic: where, how bad, what, and clang's fix-its for it."""

    line: int
    col: int
    severity: str
    message: str
    fixits: list[FixIt] = field(default_factory=list)


def _fixit(line: str, owner_file: str) -> FixIt | None:
    """A fix-it line in either form; a compact one without a file is in ``owner_file``."""
    if m := _FIXIT_RAW.match(line):
        return FixIt(PurePath(unescape(m["file"])).name, int(m["l1"]), int(m["c1"]),
                     int(m["l2"]), int(m["c2"]), unescape(m["text"]))
    if m := _FIXIT_COMPACT.match(line):
        if m["il"]:
            file, l1, c1, l2, c2, text = m["ifile"], m["il"], m["ic"], m["il"], m["ic"], m["text"]
        else:
            file, l1, c1, l2, c2, text = m["rfile"], m["l1"], m["c1"], m["l2"], m["c2"], m["rtext"] or ""
        return FixIt(file or owner_file, int(l1), int(c1), int(l2), int(c2), unescape(text))
    return None


def parse_diagnostics(text: str) -> tuple[list[Diag], list[str]]:
    """Harness diagnostics (errors, then serious warnings) and undefined linker symbols.

    Fix-its stay with the diagnostic printed before them; those that edit another file
    than the harness (a library header) are dropped.
    """
    entries: list[tuple[str, Diag]] = []  # (file name, diagnostic), notes included
    for raw in text.splitlines():
        if m := _DIAG.match(raw.rstrip()):
            sev = "error" if m["sev"] == "fatal error" else m["sev"]
            diag = Diag(int(m["line"]), int(m["col"]), sev, m["msg"].strip())
            entries.append((PurePath(m["file"]).name, diag))
        elif entries and (fix := _fixit(raw.rstrip(), entries[-1][0])):
            entries[-1][1].fixits.append(fix)
    sources = [f for f, _ in entries if not f.endswith(".h")]
    harness = sources[0] if sources else None
    diags: list[Diag] = []
    seen = set()
    for file, d in entries:
        if d.severity == "note":
            continue
        if harness and file != harness and not d.message.startswith("'"):
            if "file not found" not in d.message:
                continue
        if d.severity == "warning" and not SERIOUS_WARNINGS.search(d.message):
            continue
        d.fixits = [f for f in d.fixits if f.file == harness] if file == harness else []
        key = (d.line, d.col, d.message)
        if key not in seen:
            seen.add(key)
            diags.append(d)
    implicit = {d.line for d in diags if "implicit" in d.message}
    # An implicitly declared function returns int: that conversion warning goes with the fix.
    diags = [d for d in diags if not (d.line in implicit and "-Wint-conversion" in d.message)]
    diags.sort(key=lambda d: (d.severity == "warning", d.line, d.col))
    links = list(dict.fromkeys(m["name"] for m in _LINK.finditer(text)))
    return diags, links
