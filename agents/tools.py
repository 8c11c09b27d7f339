"""Tools the agents may call: knowledge search and the code memory.

A node declares the tools its agent gets by name (``NodeSpec.tools`` in the registry);
:func:`tools_for` builds them for one call from the graph state, so they always answer from the
state the agent is working on. Models that call tools natively are offered them (see
:mod:`agents.base`); for the others, the same information is already in their prompts.

Tool schemas are sent in OpenAI's strict form (every property required, optional ones
nullable, no extra keys), which OpenAI requires when tools and a JSON-schema
``response_format`` go in one request and other servers accept as plain JSON schema.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, Field

from agent_graph.memory.code_memory import make_code_tools
from long_term_memory.retrieval import RetrieverHandle, get_retriever

ToolFactory = Callable[[Mapping[str, Any]], list[BaseTool]]
_FACTORIES: dict[str, ToolFactory] = {}
_MAX_ANSWER_CHARS = 6000


def register_tool(name: str, factory: ToolFactory) -> None:
    """Make ``name`` available to ``NodeSpec.tools``; ``factory(state)`` returns the tool(s)."""
    _FACTORIES[name] = factory


def tool_names() -> list[str]:
    """Every registered tool name, sorted."""
    return sorted(_FACTORIES)


def tools_for(names: Iterable[str], state: Mapping[str, Any]) -> list[BaseTool]:
    """The tools called ``names``, bound to ``state``.

    Raises:
        ValueError: a name is not registered (the message lists the registered ones).
    """
    out: list[BaseTool] = []
    seen: set[str] = set()
    for name in names:
        if name not in _FACTORIES:
            raise ValueError(f"unknown tool {name!r}; registered tools: {', '.join(tool_names())}")
        for tool in _FACTORIES[name](state):
            if tool.name == name and tool.name not in seen:
                seen.add(tool.name)
                out.append(tool)
    return out


def _strict(schema: dict[str, Any]) -> dict[str, Any]:
    """An object schema in strict form: all properties required, the optional ones nullable."""
    out = copy.deepcopy(schema)
    out.pop("title", None)
    props: dict[str, Any] = out.setdefault("properties", {})
    required = set(out.get("required") or [])
    for name, prop in props.items():
        prop.pop("title", None)
        prop.pop("default", None)
        if name not in required:
            variants = prop.get("anyOf") or []
            if not any(v.get("type") == "null" for v in variants) and prop.get("type") != "null":
                props[name] = {"anyOf": [prop, {"type": "null"}]}
                if "description" in prop:
                    props[name]["description"] = prop.pop("description")
            for v in props[name].get("anyOf") or []:
                v.pop("title", None)
    out["required"] = list(props)
    out["additionalProperties"] = False
    return out


def tool_spec(tool: BaseTool) -> dict[str, Any]:
    """``tool`` as an OpenAI function-tool definition in strict form."""
    spec = convert_to_openai_tool(tool)
    fn = spec["function"]
    fn["parameters"] = _strict(fn.get("parameters") or {"type": "object", "properties": {}})
    fn["strict"] = True
    return spec


def run_tool(tools: Mapping[str, BaseTool], name: str, args: Mapping[str, Any]) -> str:
    """Call one tool for the model; every failure is an answer the model can read, never a raise."""
    tool = tools.get(name)
    if tool is None:
        return json.dumps({"error": f"no tool {name!r}", "available": sorted(tools)})
    try:
        answer = tool.invoke({k: v for k, v in dict(args or {}).items() if v is not None})
    except Exception as exc:  # a bad argument must not end the agent's turn
        return json.dumps({"error": f"{type(exc).__name__}: {exc}"[:500], "tool": name})
    text = answer if isinstance(answer, str) else json.dumps(answer, default=str)
    if len(text) > _MAX_ANSWER_CHARS:
        text = text[:_MAX_ANSWER_CHARS] + "\n[... answer truncated ...]"
    return text


# --- built-in tools ---------------------------------------------------------------------------


class _SearchArgs(BaseModel):
    query: str = Field(description="What to look for: a signature, an error message, a question.")
    kind: str | None = Field(default=None, description="archetype, pitfall or skeleton; omit for all.")


def _knowledge_tools(state: Mapping[str, Any]) -> list[BaseTool]:
    def search_knowledge(query: str, kind: str | None = None) -> str:
        handle = RetrieverHandle.model_validate(state.get("long_term_retriever") or {})
        hits = get_retriever(handle).search(query, k=3, kinds={kind} if kind else None)
        return json.dumps({"results": [
            {"kind": h.kind, "id": h.id, "title": h.title, "score": round(h.score, 3),
             "snippet": h.snippet} for h in hits]}, ensure_ascii=False)

    return [StructuredTool.from_function(
        search_knowledge, name="search_knowledge", args_schema=_SearchArgs,
        description="Search LogicFuzz's fuzzing knowledge (API archetypes, harness skeletons, "
                    "pitfalls) by meaning; returns the best three entries.")]


def _code_tools(state: Mapping[str, Any]) -> list[BaseTool]:
    def files() -> dict[str, str]:
        code = state.get("harness_code") or ""
        return {"harness.c": code} if code else {}

    return make_code_tools(lambda: state.get("code_memory") or {}, files)


register_tool("search_knowledge", _knowledge_tools)
register_tool("read_code_mem", _code_tools)
register_tool("read_file", _code_tools)
