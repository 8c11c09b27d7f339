"""The code each function of a built library reaches through direct calls.

Read from the disassembly of the coverage build's archive (``llvm-objdump -dr``): each call
instruction's target, named by its relocation (a call out of the compiled source) or by the
disassembler (a call within it), is an edge; a function's size is its instruction count. Calls
through pointers (handler tables, vtables of function pointers) are not seen, so a reach is a
lower bound. It tells two targets apart that fuzz the same code (``acme_read_memory`` and
``acme_parse_memory``) from two that do not (a document parser and a path evaluator).
"""

from __future__ import annotations

import functools
import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from fuzzkit.errors import ToolchainError
from fuzzkit.tools import tool

_HEAD = re.compile(r"^[0-9a-f]+ <(?P<name>[^>]+)>:$")
_RELOC = re.compile(r"\sR_\w+\s+(?P<name>[A-Za-z_][\w.$]*)")
_NAMED = re.compile(r"\s(?:call|jmp|bl|b)[a-z]*\s+(?:0x)?[0-9a-f]+ <(?P<name>[\w.$]+)>$")
_INSN = re.compile(r"^\s+[0-9a-f]+:\s")
_BRANCH = re.compile(r"\s(?:call|jmp|bl|b)[a-z]*\s")


@dataclass(frozen=True)
class CallGraph:
    """Direct calls between a library's functions, and each function's size in instructions."""

    calls: dict[str, frozenset[str]] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)

    def reach(self, name: str, depth: int | None = None) -> frozenset[str]:
        """``name`` and every function it reaches through at most ``depth`` direct calls (all: None)."""
        seen, level = {name}, [name]
        while level and (depth is None or depth > 0):
            level = [c for f in level for c in self.calls.get(f, ()) if c not in seen]
            seen.update(level)
            depth = None if depth is None else depth - 1
        return frozenset(seen)

    def size(self, names: Iterable[str]) -> int:
        """The instructions of ``names`` together."""
        return sum(self.sizes.get(n, 0) for n in set(names))


def call_graph(archive: str | Path) -> CallGraph:
    """The call graph of ``archive``; an empty one when it cannot be read or llvm-objdump is missing."""
    path = Path(archive)
    try:
        stamp = path.stat().st_mtime_ns
        return _graph(str(path), stamp)
    except (OSError, ToolchainError):
        return CallGraph()


@functools.lru_cache(maxsize=4)
def _graph(archive: str, _stamp: int) -> CallGraph:
    out = subprocess.run([tool("llvm-objdump"), "-dr", "--no-show-raw-insn", archive],
                         capture_output=True, text=True, check=False).stdout
    return parse_disassembly(out.splitlines())


def parse_disassembly(lines: Iterable[str]) -> CallGraph:
    """A :class:`CallGraph` from ``llvm-objdump -dr`` lines."""
    calls: dict[str, set[str]] = {}
    sizes: dict[str, int] = {}
    current, branch = "", False
    for line in lines:
        head = _HEAD.match(line)
        if head:
            current, branch = head["name"], False
            calls.setdefault(current, set())
            continue
        reloc = _RELOC.search(line)
        if not current or not (reloc or _INSN.match(line)):
            current = "" if line.strip() else current  # a member's or section's heading ends it
            continue
        if reloc:
            # The relocation of a call names its target; the profile counters are no function.
            if branch and not reloc["name"].startswith(("__llvm", ".")):
                calls[current].add(reloc["name"])
            continue
        sizes[current] = sizes.get(current, 0) + 1
        branch = bool(_BRANCH.search(line))
        named = _NAMED.search(line)
        if named and named["name"] != current:
            calls[current].add(named["name"])
    return CallGraph({k: frozenset(v) for k, v in calls.items()}, sizes)
