"""The fixer's bookkeeping: pending edits, renames and includes, applied in a fixed order."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from pathlib import Path

from agents.offline import ckinds
from agents.offline.fixer_edit import add_include, replace_identifier
from agents.offline.synth_guide import read_guidance
from fuzzkit.api import FunctionDecl
from fuzzkit.guidance_facts import Rule


class FixerBase:
    """Edits collected from diagnostics; :meth:`finish` applies them back to front."""

    def __init__(self, code: str, api: list[FunctionDecl], headers: list[str]) -> None:
        self.code = code
        self.api = {f.name: f for f in api}
        self.headers = [h if h.startswith(("<", '"')) else f'"{Path(h).name}"' for h in headers]
        self.types = {ckinds.base_name(t) for f in api for t in [f.return_type, *(p.type for p in f.params)]}
        self.fixes: list[str] = []
        self.rules: list[Rule] = []  # what a later draft should repeat, as data
        self.unresolved: list[str] = []
        self.includes: list[tuple[str, str]] = []
        self.edits: list[tuple[int, int, str]] = []
        self.renames: dict[str, str] = {}
        self.tags: dict[str, str] = {}  # type name -> the tag (struct, enum, union) it needs
        self.tagged_lines: set[int] = set()

    def include(self, header: str, why: str) -> None:
        """Add ``header`` at the end (once), recording why."""
        if not re.search(rf"#\s*include\s*{re.escape(header)}", self.code):
            self.includes.append((header, f"add #include {header} for {why}"))

    def edit(self, start: int, end: int, text: str, fix: str, rule: Rule | None = None) -> bool:
        """Replace ``code[start:end]`` by ``text`` at the end; overlapping edits lose (False).

        ``rule``: what the edit asks as data, recorded with its sentence ``fix``.
        """
        if any(s < end and start < e or (s == start == e == end) for s, e, _ in self.edits):
            return False  # an overlapping edit from an earlier diagnostic wins
        self.edits.append((start, end, text))
        self.fixes.append(fix)
        if rule is not None:
            self.rules.append(rule.model_copy(update={"text": fix}))
        return True

    def rename(self, old: str, new: str, why: str, fixit: bool = False) -> None:
        """Rename identifier ``old`` everywhere at the end (``fixit``: clang's own fix-it says so)."""
        if old not in self.renames:
            self.renames[old] = new
            self.fixes.append(fix := f"replace {old} with {new} ({why})")
            self.rules.append(Rule(kind="rename", name=old, then=new, fixit=fixit, text=fix))

    def library_header(self, name: str) -> str | None:
        """The header declaring API function ``name`` (else the first library header)."""
        fn = self.api.get(name)
        if fn is not None and fn.header:
            return f'"{Path(fn.header).name}"'
        return self.headers[0] if self.headers else None

    def closest(self, name: str, pool: Iterable[str], cutoff: float = 0.75) -> str | None:
        """The most similar name in ``pool`` above ``cutoff``."""
        match = difflib.get_close_matches(name, sorted(pool), n=1, cutoff=cutoff)
        return match[0] if match else None

    def apply_known(self, rules: list[Rule]) -> None:
        """Apply known fixes (includes, renames) from session memory right away."""
        g = read_guidance(rules, list(self.api.values()))
        for h in g.includes:
            if not re.search(rf"#\s*include\s*{re.escape(h)}", self.code):
                self.code = add_include(self.code, h)
                self.fixes.append(fix := f"add #include {h} (known fix)")
                self.rules.append(Rule(kind="include", name=h, text=fix))
        for old, new in g.renames.items():
            if re.search(rf"\b{re.escape(old)}\b", self.code):
                self.code = replace_identifier(self.code, old, new)
                self.fixes.append(fix := f"replace {old} with {new} (known fix)")
                self.rules.append(Rule(kind="rename", name=old, then=new, text=fix))

    def missing_library_headers(self, name: str) -> bool:
        """Include the library's headers when some are missing; True if that was the fix.

        Macros such as ``lib_decodeInit`` and types such as ``lib_stream`` come from them.
        """
        missing = [h for h in self.headers if not re.search(rf"#\s*include\s*{re.escape(h)}", self.code)]
        for h in missing:
            self.include(h, name)
        return bool(missing)

    def finish(self) -> None:
        """Apply edits back to front, then renames, then includes."""
        for start, end, text in sorted(self.edits, key=lambda e: (e[0], e[1]), reverse=True):
            self.code = self.code[:start] + text + self.code[end:]
        for old, new in self.renames.items():
            self.code = replace_identifier(self.code, old, new)
        for header, fix in self.includes:
            if not re.search(rf"#\s*include\s*{re.escape(header)}", self.code):
                self.code = add_include(self.code, header)
                self.fixes.append(fix)
                self.rules.append(Rule(kind="include", name=header, text=fix))
