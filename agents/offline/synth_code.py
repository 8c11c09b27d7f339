"""The code being generated, and how the shared C helpers (:mod:`c_helpers`) are emitted.

A :class:`Frag` holds declarations, option reads, setup, call, use and cleanup parts; the
helpers are the input cursor, option bytes and copies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agents.offline import type_table
from agents.offline.c_helpers import HELPERS
from fuzzkit.vocabulary import c_words, libc_headers

# Names a generated variable must not take: C's words, the C library's, the harness's own.
C_KEYWORDS = c_words() | set(libc_headers()) | {"data", "size", "main", "index", "in", "out"}


def helper_code(names: list[str], existing: str = "") -> tuple[str, list[str]]:
    """C code for the helpers ``names`` (dependencies first) and the headers they need.

    Helpers already defined in ``existing`` (a skeleton or a harness) are left out.
    """
    order: list[str] = []

    def visit(name: str) -> None:
        if name in order:
            return
        for dep in HELPERS[name][1]:
            visit(dep)
        order.append(name)

    for name in names:
        visit(name)
    chunks: list[str] = []
    headers: list[str] = []
    for name in order:
        code, _, heads = HELPERS[name]
        headers.extend(heads)
        if _defines(existing, code):
            continue
        chunks.append(code)
    return "\n\n".join(chunks), headers


def _defines(existing: str, code: str) -> bool:
    """Whether ``existing`` already defines the first function or typedef that ``code`` does."""
    func = re.search(r"^static [^\n(]*?\b(lf_\w+)\(", code, re.M)
    if func:
        return bool(re.search(rf"^static [^\n(]*?\b{func.group(1)}\(", existing, re.M))
    typedef = re.search(r"}\s*(lf_\w+);", code)
    return bool(typedef and re.search(rf"}}\s*{typedef.group(1)};", existing))


@dataclass
class Frag:
    """Generated C for one harness body or one self-contained block.

    Sections render in order: decls, opts (option values from the input cursor), setup,
    call, use, then the failure label and cleanup (in reverse order of acquisition).
    """

    cursor: str = "lf_in"
    label: str = "lf_cleanup"
    includes: list[str] = field(default_factory=list)
    helpers: list[str] = field(default_factory=list)
    globals: list[str] = field(default_factory=list)
    decls: list[str] = field(default_factory=list)
    opts: list[str] = field(default_factory=list)
    setup: list[str] = field(default_factory=list)
    call: list[str] = field(default_factory=list)
    use: list[str] = field(default_factory=list)
    cleanup: list[str] = field(default_factory=list)
    hoist: list[str] = field(default_factory=list)
    guards: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    taken: set[str] = field(default_factory=set)
    label_used: bool = False

    def name(self, base: str) -> str:
        """A fresh C identifier based on ``base``."""
        base = re.sub(r"\W", "_", base).strip("_") or "v"
        if base[0].isdigit():
            base = "v_" + base
        if base in C_KEYWORDS or base.startswith(("lf_", "LLVM")):
            base = base + "_v"
        table = type_table.active()  # a variable named like a type hides the type
        cand, n = base, 2
        while cand in self.taken or cand in table.typedefs or cand in table.records:
            cand, n = f"{base}{n}", n + 1
        self.taken.add(cand)
        return cand

    def need(self, *helpers: str) -> None:
        """Require helper functions in GLOBALS."""
        for h in helpers:
            if h not in self.helpers:
                self.helpers.append(h)

    def include(self, *headers: str) -> None:
        """Require headers (``<stdio.h>`` or ``"acme.h"``)."""
        for h in headers:
            if h not in self.includes:
                self.includes.append(h)

    def fail(self) -> str:
        """The statement that abandons this fragment (jumps to its cleanup)."""
        self.label_used = True
        return f"goto {self.label};"

    def take_int(self, choices: tuple[int, ...]) -> str:
        """An expression taking an option integer from the cursor."""
        if len(choices) == 1:
            return str(choices[0])
        if len(choices) == 2 and choices[0] <= choices[1]:
            self.need("take_int")
            return f"lf_take_int(&{self.cursor}, {choices[0]}, {choices[1]})"
        self.need("take_pick")
        table = self.name("lf_set")
        self.decls.append(f"static const int {table}[] = {{{', '.join(map(str, choices))}}};")
        return f"lf_take_pick(&{self.cursor}, {table}, sizeof {table} / sizeof {table}[0])"

    def body(self, indent: str = "  ") -> list[str]:
        """Every section as indented lines (the main harness splits them into slots instead)."""
        lines = [*self.decls, *self.opts, *self.setup, *self.call, *self.use]
        if self.label_used:
            lines.append(f"{self.label}: ;")
        lines.extend(reversed(self.cleanup))
        return [indent + ln if ln else ln for ln in _flatten(lines)]


def _flatten(lines: list[str]) -> list[str]:
    out: list[str] = []
    for ln in lines:
        out.extend(ln.split("\n"))
    return out


def indent(lines: list[str], pad: str) -> str:
    """Join lines with ``pad`` added to each non-empty one."""
    return "\n".join(pad + ln if ln.strip() else "" for ln in _flatten(lines))
