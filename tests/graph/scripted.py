"""A scripted chat model for graph tests: the model seam's only stand-in."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field


class ScriptedChatModel(BaseChatModel):
    """Answers each role from its own queue of replies and records every prompt it gets."""

    script: dict[str, list[str]] = Field(default_factory=dict)
    seen: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:  # type: ignore[override]
        return self

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        system = str(messages[0].content)
        user = str(messages[-1].content)
        role = re.search(r"^ROLE: (\S+)", system, re.M).group(1)  # type: ignore[union-attr]
        mode = re.search(r"^MODE: (\S+)", user, re.M)
        key = f"{role}:{mode.group(1)}" if mode else role
        tools = [(t.get("function") or t).get("name") for t in kwargs.get("tools") or []]
        self.seen.append({"key": key, "messages": [(m.type, str(m.content)) for m in messages],
                          "tools": tools})
        queue = self.script.get(key) or []
        if not queue:
            raise AssertionError(f"no scripted reply left for {key}")
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=queue.pop(0)))])


def keys(model: ScriptedChatModel) -> list[str]:
    return [s["key"] for s in model.seen]


def counts(model: ScriptedChatModel) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for key in keys(model):
        out[key] += 1
    return dict(out)
