"""Compiler and linker messages as structured diagnostics."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

LINK_FILE = "<link>"
DRIVER_FILE = "<driver>"

_COMPILER = re.compile(
    r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+): "
    r"(?P<sev>fatal error|error|warning|note|remark): (?P<msg>.*)$"
)
# GNU ld and lld; with debug info ld prefixes the source location ("x.c:7: undefined ...").
_LINK = re.compile(
    r"^(?:.*?ld(?:\.\w+)?: )?(?:(?P<loc>[^:\n]+?:\d+): |.*?: )?(?:error: )?"
    r"(?P<msg>(?:undefined reference to|multiple definition of|undefined symbol:|"
    r"duplicate symbol:|cannot find) .*)$"
)
_DRIVER = re.compile(r"^(?:clang(?:\+\+)?(?:-\d+)?|cc|gcc): (?P<sev>error|warning): (?P<msg>.*)$")


@dataclass(frozen=True)
class Diagnostic:
    """One message from the compiler, the driver or the linker.

    Linker messages use ``file="<link>"`` and driver messages ``file="<driver>"``,
    with line and column 0.
    """

    file: str
    line: int
    column: int
    severity: str
    message: str

    def render(self) -> str:
        """The diagnostic as one line in clang's format."""
        if self.file in (LINK_FILE, DRIVER_FILE):
            return f"{self.file}: {self.severity}: {self.message}"
        return f"{self.file}:{self.line}:{self.column}: {self.severity}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Diagnostic:
        """Inverse of :meth:`to_dict`."""
        return cls(**data)


def _normalize_quotes(text: str) -> str:
    # ld quotes symbols as `name'; one quote style keeps messages comparable.
    return re.sub(r"`([^'`]*)'", r"'\1'", text)


def parse_compiler_output(text: str) -> list[Diagnostic]:
    """Parse clang, driver and linker output into diagnostics, in order, without duplicates.

    Source excerpts, carets and ``In file included from`` lines are skipped; repeated
    linker messages (one per call site) are reported once.
    """
    found: list[Diagnostic] = []
    seen: set[tuple[str, int, int, str, str]] = set()
    link_failed_line: Diagnostic | None = None
    for raw in text.splitlines():
        line = raw.rstrip()
        diag: Diagnostic | None = None
        if m := _COMPILER.match(line):
            sev = "error" if m["sev"] == "fatal error" else m["sev"]
            diag = Diagnostic(m["file"], int(m["line"]), int(m["col"]), sev, m["msg"].strip())
        elif m := _DRIVER.match(line):
            diag = Diagnostic(DRIVER_FILE, 0, 0, m["sev"], m["msg"].strip())
            if diag.message.startswith("linker command failed"):
                link_failed_line = diag
                continue
        elif m := _LINK.match(line):
            msg = _normalize_quotes(m["msg"].strip())
            if m["loc"]:
                msg += f" (at {m['loc'].rsplit('/', 1)[-1]})"
            diag = Diagnostic(LINK_FILE, 0, 0, "error", msg)
        if diag is None:
            continue
        key = (diag.file, diag.line, diag.column, diag.severity, _dedupe_key(diag.message))
        if key not in seen:
            seen.add(key)
            found.append(diag)
    if link_failed_line and not any(d.file == LINK_FILE for d in found):
        found.append(link_failed_line)
    return found


def _dedupe_key(message: str) -> str:
    return re.sub(r" \(at [^)]*\)$", "", message)


def first_errors(diagnostics: list[Diagnostic], limit: int = 5) -> list[Diagnostic]:
    """The first ``limit`` error diagnostics."""
    return [d for d in diagnostics if d.severity == "error"][:limit]
