"""CodeMem: reading notes for every file the agents write, and the tools that read them.

The state's ``code_memory`` maps a path to its entry (see :mod:`agent_graph.memory.code_memory_c`).
Agents see entries instead of whole files: :func:`render_code_memory` for prompts,
:func:`read_code_mem` and :func:`read_file` as tools (``read_file`` answers with the entry
when one exists and the text only when asked for it), and :func:`compress_history`, which
replaces an agent's old turns by the code memory once its history grows past a threshold.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from agent_graph.memory.code_memory_c import summarize_c_file, summarize_file
from agent_graph.memory.tokens import count_message_tokens

HISTORY_THRESHOLD_TOKENS = 8000
EMPTY = "(no files written yet)"

__all__ = [
    "compress_history", "make_code_tools", "read_code_mem", "read_file", "render_code_memory",
    "render_entry", "summarize_c_file", "summarize_file", "update_code_memory",
]


def _refers_to(name: str, path: str) -> bool:
    """An include or script input ``name`` names the file ``path`` (same path or basename)."""
    return name == path or posixpath.basename(name) == posixpath.basename(path)


def update_code_memory(
    code_memory: Mapping[str, Mapping[str, Any]] | None, path: str, text: str,
    api_names: Collection[str] = (),
) -> dict[str, dict[str, Any]]:
    """A new code memory with ``path``'s entry (re)written and every ``imported_by`` recomputed."""
    out = {p: {**e, "dependency_edges": dict(e.get("dependency_edges") or {})}
           for p, e in (code_memory or {}).items()}
    out[path] = summarize_file(path, text, api_names)
    for target, entry in out.items():
        entry["dependency_edges"]["imported_by"] = sorted(
            src for src, other in out.items() if src != target and any(
                _refers_to(name, target)
                for name in (other.get("dependency_edges") or {}).get("imports_from") or []))
    return out


def render_entry(entry: Mapping[str, Any]) -> str:
    """One entry as a Markdown subsection."""
    edges = entry.get("dependency_edges") or {}
    lines = [f"### {entry.get('path', '?')} ({entry.get('lines', 0)} lines)",
             f"Purpose: {entry.get('core_purpose', '')}"]
    if entry.get("public_interface"):
        lines.append("Interface: " + "; ".join(entry["public_interface"]))
    if entry.get("helpers"):
        lines.append("Helpers: " + "; ".join(entry["helpers"]))
    if entry.get("library_calls"):
        lines.append("Library calls: " + ", ".join(entry["library_calls"]))
    deps = [f"imports {', '.join(edges['imports_from'])}" if edges.get("imports_from") else "",
            f"imported by {', '.join(edges['imported_by'])}" if edges.get("imported_by") else ""]
    if any(deps):
        lines.append("Depends: " + "; ".join(d for d in deps if d))
    return "\n".join(lines)


def render_code_memory(code_memory: Mapping[str, Mapping[str, Any]] | None) -> str:
    """The ``## Code memory`` prompt section: one subsection per file, in path order."""
    memory = code_memory or {}
    entries = [render_entry(memory[p]) for p in sorted(memory)]
    return "## Code memory\n\n" + ("\n\n".join(entries) if entries else EMPTY)


def _lookup(mapping: Mapping[str, Any], path: str) -> str | None:
    if path in mapping:
        return path
    matches = [p for p in mapping if posixpath.basename(p) == posixpath.basename(path)]
    return matches[0] if len(matches) == 1 else None


def read_code_mem(code_memory: Mapping[str, Mapping[str, Any]] | None,
                  paths: Sequence[str] | None = None) -> str:
    """Tool answer: the entries of ``paths`` (all files when ``None``) as JSON results."""
    memory = code_memory or {}
    if isinstance(paths, str):  # one path passed bare: not a sequence of one-letter paths
        paths = [paths]
    results = []
    for path in sorted(memory) if paths is None else paths:
        key = _lookup(memory, path)
        if key is None:
            results.append({"file_path": path, "status": "no_summary"})
        else:
            results.append({"file_path": key, "status": "found",
                            "summary_content": render_entry(memory[key])})
    return json.dumps({"results": results}, ensure_ascii=False)


def read_file(code_memory: Mapping[str, Mapping[str, Any]] | None, path: str,
              files: Mapping[str, str], full: bool = False) -> str:
    """Tool answer for reading a file: its entry unless ``full``, else its text.

    Without an entry the text is returned; without either, a ``not_found`` answer listing the
    known files.
    """
    memory = code_memory or {}
    key = _lookup(memory, path)
    if key is not None and not full:
        return json.dumps({
            "status": "summary_found", "file_path": key,
            "summary_content": render_entry(memory[key]),
            "optimization": "redirected_to_read_code_mem",
            "note": "call read_file with full=true for the whole text"}, ensure_ascii=False)
    text_key = _lookup(files, path)
    if text_key is not None:
        return json.dumps({"status": "full_content", "file_path": text_key,
                           "content": files[text_key]}, ensure_ascii=False)
    known = sorted(set(memory) | set(files))
    return json.dumps({"status": "not_found", "file_path": path, "known_files": known,
                       "note": "use one of known_files"}, ensure_ascii=False)


def _tail_start(messages: Sequence[Mapping[str, Any]], start: int, floor: int) -> int:
    """Move a cut back so no tool result in the tail is separated from the call it answers."""
    while floor < start < len(messages) and messages[start].get("role") == "tool":
        start -= 1
    return start


def compress_history(
    messages: list[dict[str, Any]], code_memory: Mapping[str, Mapping[str, Any]] | None,
    keep_last: int = 4, threshold_tokens: int = HISTORY_THRESHOLD_TOKENS, model: str = "",
    summary: bool = True,
) -> list[dict[str, Any]]:
    """An agent's history with its old turns replaced by the code memory, once it is too long.

    With ``summary=False`` the old turns are only dropped (a one-line note says so): the arm
    that shows what the code-memory summary itself is worth (``bench/context_bench.py``).

    Under ``threshold_tokens`` (counted with :func:`agent_graph.memory.tokens.count_message_tokens`),
    or when there is nothing old to drop, ``messages`` itself is returned. Otherwise: the
    leading system messages, then ONE user message holding :func:`render_code_memory` and a
    line saying what was dropped, then the last ``keep_last`` messages; the tail is extended
    backwards so that an assistant tool call is never separated from its tool results.
    """
    if count_message_tokens(messages, model) <= threshold_tokens:
        return messages
    head = next((i for i, m in enumerate(messages) if m.get("role") != "system"), len(messages))
    start = _tail_start(messages, max(head, len(messages) - max(keep_last, 0)), head)
    dropped = messages[head:start]
    if not dropped:
        return messages
    if not summary:
        note = (f"(LogicFuzz dropped the {len(dropped)} earliest messages of this conversation, "
                f"{count_message_tokens(dropped, model)} tokens.)")
        return [*messages[:head], {"role": "user", "content": note}, *messages[start:]]
    note = (f"(LogicFuzz replaced the {len(dropped)} earliest messages of this conversation, "
            f"{count_message_tokens(dropped, model)} tokens, by the code memory above; "
            "use read_file with full=true when you need a file's whole text.)")
    text = {"role": "user", "content": f"{render_code_memory(code_memory)}\n\n{note}"}
    return [*messages[:head], text, *messages[start:]]


class _ReadCodeMemArgs(BaseModel):
    file_paths: list[str] | None = Field(
        default=None, description="Paths of the files to summarize; omit for every file.")


class _ReadFileArgs(BaseModel):
    file_path: str = Field(description="Path of the file, as listed in the code memory.")
    full: bool = Field(default=False, description="True for the whole text instead of its summary.")


def make_code_tools(
    get_code_memory: Callable[[], Mapping[str, Mapping[str, Any]]],
    get_files: Callable[[], Mapping[str, str]],
) -> list[BaseTool]:
    """``read_code_mem`` and ``read_file`` as LangChain tools for models that call tools.

    The getters are called on every use, so the tools always answer from the current state.
    """

    def _read_code_mem(file_paths: list[str] | None = None) -> str:
        return read_code_mem(get_code_memory(), file_paths)

    def _read_file(file_path: str, full: bool = False) -> str:
        return read_file(get_code_memory(), file_path, get_files(), full)

    return [
        StructuredTool.from_function(
            _read_code_mem, name="read_code_mem", args_schema=_ReadCodeMemArgs,
            description="Summaries (purpose, interface, dependencies, library calls) of files "
                        "already written in this run."),
        StructuredTool.from_function(
            _read_file, name="read_file", args_schema=_ReadFileArgs,
            description="Read a file written in this run: its summary by default, the whole "
                        "text with full=true."),
    ]
