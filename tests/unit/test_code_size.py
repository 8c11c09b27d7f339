"""Size limits that keep each piece readable in one sitting: functions ≤ 60 lines, modules ≤ 300."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("fuzzkit", "prompts", "long_term_memory", "agent_graph", "agents", "nodes", "logicfuzz",
            "bench", "scripts")
MAX_FUNCTION, MAX_MODULE = 60, 300


def oversized(path: Path) -> list[str]:
    """``module N lines`` / ``function F N lines`` for each part of ``path`` over its limit."""
    text = path.read_text(encoding="utf-8")
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    found = [f"{where}: module of {n} lines"] if (n := len(text.splitlines())) > MAX_MODULE else []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines = node.end_lineno - node.lineno + 1 if node.end_lineno else 0
            if lines > MAX_FUNCTION:
                found.append(f"{where}:{node.lineno}: {node.name} has {lines} lines")
    return found


def test_no_function_or_module_over_its_limit() -> None:
    paths = [p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))]
    assert len(paths) > 100
    assert [line for p in paths for line in oversized(p)] == []


def test_an_oversized_function_is_found(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("def long():\n" + "    x = 1\n" * 61 + "\n\ndef short():\n    return 1\n")
    assert oversized(probe) == ["probe.py:1: long has 62 lines"]
