"""Prompt sections every role shares, rendered from a slice of the state."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agent_graph.memory.session_memory import format_session_memory
from fuzzkit.api import FunctionDecl
from fuzzkit.header_facts import HeaderFacts

MAX_API = 80
_PRIMITIVE = re.compile(
    r"\b(const|unsigned|signed|char|short|int|long|float|double|void|size_t|uint\d+_t|int\d+_t|"
    r"bool|_Bool)\b|\*"
)


def target_decl(state: Mapping[str, Any]) -> FunctionDecl:
    """The target function of the run."""
    return FunctionDecl.from_dict(state["target"])


def _type_words(decl: FunctionDecl) -> set[str]:
    types = [decl.return_type, *(p.type for p in decl.params)]
    return {w for t in types for w in _PRIMITIVE.sub(" ", t).split()}


def relevant_api(state: Mapping[str, Any], limit: int = MAX_API) -> list[FunctionDecl]:
    """The API functions worth showing: all of a small API, else those sharing the target's types."""
    api = [FunctionDecl.from_dict(d) for d in state.get("api") or []]
    if len(api) <= limit:
        return api
    target = target_decl(state)
    words = _type_words(target)
    prefix = target.name.split("_")[0]
    scored = sorted(
        api,
        key=lambda d: (-len(words & _type_words(d)), not d.name.startswith(prefix), d.name),
    )
    keep = {d.name for d in scored[:limit]}
    return [d for d in api if d.name in keep]


def api_prototypes(state: Mapping[str, Any]) -> str:
    """The relevant API, one prototype per line."""
    return "\n".join(d.prototype() for d in relevant_api(state)) or "(no API parsed)"


def types_section(state: Mapping[str, Any]) -> str:
    """What the headers say about the API's types (typedefs, records, constants, releasers)."""
    facts = HeaderFacts.from_dict(state.get("header_facts"))
    shown = {d.name for d in relevant_api(state)}
    every = {d.get("name") for d in state.get("api") or []}
    # Notes on API functions not shown are left out; notes on callback typedefs stay.
    facts.returns = {fn: text for fn, text in facts.returns.items() if fn in shown or fn not in every}
    return facts.render() or "(none)"


def include_lines(state: Mapping[str, Any]) -> str:
    """``#include`` lines for the library's public headers."""
    return "\n".join(f'#include "{h}"' for h in state.get("headers") or []) or "(none)"


def memory_section(state: Mapping[str, Any], categories: tuple[str, ...]) -> str:
    """Session memory filtered to the categories one agent reads."""
    return format_session_memory(state.get("session_memory") or {}, categories)


def bullet(items: list[str], empty: str = "(none)") -> str:
    """A Markdown bullet list."""
    return "\n".join(f"- {i}" for i in items) if items else empty


def coverage_summary(coverage: Mapping[str, Any]) -> str:
    """One block of coverage figures."""
    if not coverage:
        return "(not measured)"
    parts = []
    for key in ("lines", "branches", "functions"):
        entry = coverage.get(key) or {}
        if entry:
            parts.append(f"{key}: {entry.get('covered', 0)}/{entry.get('count', 0)} "
                         f"({entry.get('percent', 0.0):.1f}%)")
    return "; ".join(parts) or "(not measured)"
