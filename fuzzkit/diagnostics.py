"""Compiler and linker messages as structured diagnostics."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, replace
from pathlib import PurePath
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
# -fdiagnostics-parseable-fixits: the file and text are C-escaped, the end column is exclusive.
_FIXIT = re.compile(
    r'^fix-it:"(?P<file>(?:[^"\\]|\\.)*)":\{(?P<l1>\d+):(?P<c1>\d+)-(?P<l2>\d+):(?P<c2>\d+)\}:'
    r'"(?P<text>(?:[^"\\]|\\.)*)"$'
)
# Warnings that break harnesses at run time (a truncated pointer, a wrong argument type).
SERIOUS_WARNINGS = re.compile(
    r"implicit declaration|implicitly declaring|incompatible pointer|incompatible integer to "
    r"pointer|incompatible pointer to integer|non-void function does not return|control reaches "
    r"end of non-void|converts between pointers to integer types|discards qualifiers"
)


def unescape(text: str) -> str:
    """Undo the C escaping clang applies to fix-it files and texts (newlines, quotes, octal)."""
    simple = {"n": "\n", "t": "\t", "\\": "\\", '"': '"'}

    def one(m: re.Match[str]) -> str:
        esc = m.group(1)
        return simple[esc] if esc in simple else chr(int(esc, 8))

    return re.sub(r'\\([nt\\"]|[0-7]{1,3})', one, text)


@dataclass(frozen=True)
class FixIt:
    """A source edit clang proposes with a diagnostic: replace a range by ``text``.

    ``file`` is the file's name only (like the rest of the build log shown to agents); the
    range is 1-based, its end column exclusive, so an insertion has start == end.
    """

    file: str
    line: int
    column: int
    end_line: int
    end_column: int
    text: str

    @property
    def is_insertion(self) -> bool:
        """Whether the edit only inserts text."""
        return (self.line, self.column) == (self.end_line, self.end_column)

    def describe(self, diagnostic_file: str = "") -> str:
        """The edit in one compact line (``fix-it: insert "struct " at 12:3``).

        The file is named only when it is not ``diagnostic_file`` (the diagnostic's own).
        """
        where = "" if PurePath(diagnostic_file).name == self.file else f"{self.file}:"
        start = f"{where}{self.line}:{self.column}"
        text = _quote(self.text)
        if self.is_insertion:
            return f"fix-it: insert {text} at {start}"
        span = f"{start}-{self.end_line}:{self.end_column}"
        return f"fix-it: remove {span}" if not self.text else f"fix-it: replace {span} with {text}"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FixIt:
        """Inverse of ``asdict``."""
        return cls(**data)


def _quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{escaped}"'


@dataclass(frozen=True)
class Diagnostic:
    """One message from the compiler, the driver or the linker.

    Linker messages use ``file="<link>"`` and driver messages ``file="<driver>"``,
    with line and column 0. ``fixits`` are the edits clang proposes with this message.
    """

    file: str
    line: int
    column: int
    severity: str
    message: str
    fixits: tuple[FixIt, ...] = ()

    def render(self) -> str:
        """The diagnostic as one line in clang's format."""
        if self.file in (LINK_FILE, DRIVER_FILE):
            return f"{self.file}: {self.severity}: {self.message}"
        return f"{self.file}:{self.line}:{self.column}: {self.severity}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        data = asdict(self)
        data["fixits"] = list(data["fixits"])
        return data

    def render_for_prompt(self) -> str:
        """The diagnostic with the file's name only, then one indented line per fix-it."""
        head = self.render() if self.file in (LINK_FILE, DRIVER_FILE) else (
            f"{PurePath(self.file).name}:{self.line}:{self.column}: {self.severity}: {self.message}"
        )
        return "\n".join([head, *(f"  {f.describe(self.file)}" for f in self.fixits)])

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Diagnostic:
        """Inverse of :meth:`to_dict`."""
        fixits = tuple(FixIt.from_dict(f) for f in data.get("fixits") or ())
        return cls(**{**data, "fixits": fixits})


def _normalize_quotes(text: str) -> str:
    # ld quotes symbols as `name'; one quote style keeps messages comparable.
    return re.sub(r"`([^'`]*)'", r"'\1'", text)


def parse_compiler_output(text: str) -> list[Diagnostic]:
    """Parse clang, driver and linker output into diagnostics, in order, without duplicates.

    Source excerpts, carets and ``In file included from`` lines are skipped; repeated
    linker messages (one per call site) are reported once. ``fix-it:`` lines (from
    ``-fdiagnostics-parseable-fixits``) go to the diagnostic printed just before them.
    """
    found: list[Diagnostic] = []
    seen: dict[tuple[str, int, int, str, str], int] = {}
    link_failed_line: Diagnostic | None = None
    current: int | None = None  # index in ``found`` of the diagnostic fix-its belong to
    for raw in text.splitlines():
        line = raw.rstrip()
        diag: Diagnostic | None = None
        if m := _FIXIT.match(line):
            if current is not None:
                fixit = FixIt(PurePath(unescape(m["file"])).name, int(m["l1"]), int(m["c1"]),
                              int(m["l2"]), int(m["c2"]), unescape(m["text"]))
                owner = found[current]
                if fixit not in owner.fixits:
                    found[current] = replace(owner, fixits=(*owner.fixits, fixit))
            continue
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
            seen[key] = len(found)
            found.append(diag)
        current = seen[key]
    if link_failed_line and not any(d.file == LINK_FILE for d in found):
        found.append(link_failed_line)
    return found


def _dedupe_key(message: str) -> str:
    return re.sub(r" \(at [^)]*\)$", "", message)


def first_errors(diagnostics: list[Diagnostic], limit: int = 5) -> list[Diagnostic]:
    """The first ``limit`` error diagnostics."""
    return [d for d in diagnostics if d.severity == "error"][:limit]
