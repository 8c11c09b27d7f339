"""What every LLM role shares: render its prompt, call the model, parse the reply.

A role is a small subclass naming its template, its pydantic output and how it turns a slice of
the state into template variables. The node that owns the role passes the agent's message
history and gets back the new messages for the ``agent_messages`` reducer.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel

from agent_graph.messages import from_langchain, to_langchain, trim_messages_to_limit
from agent_graph.tokens import count_message_tokens, count_text_tokens
from agents.parsing import ReplyParseError, extract_code, parse_reply
from prompts import render

T = TypeVar("T", bound=BaseModel)


class ModelCallError(RuntimeError):
    """The model could not be reached or kept failing; the run moves on to the next target."""


@dataclass
class AgentResult(Generic[T]):
    """One role's answer."""

    output: T
    code: str | None
    new_messages: list[dict[str, Any]]
    usage: dict[str, int]
    reply: str
    prompt_tokens_sent: int = 0
    notes: list[str] = field(default_factory=list)


class Agent(Generic[T]):
    """Base of every LLM role."""

    name: ClassVar[str]
    template: ClassVar[str]
    output_model: ClassVar[type[Any]]
    wants_code: ClassVar[bool] = False
    parse_retries: ClassVar[int] = 1

    def __init__(
        self,
        llm: BaseChatModel,
        *,
        token_budget: int = 100_000,
        model: str = "",
        debug_log: Path | None = None,
    ) -> None:
        self.llm = llm
        self.token_budget = token_budget
        self.model = model
        self.debug_log = debug_log

    def run(
        self, variables: dict[str, str], history: list[dict[str, Any]] | None = None,
        template: str | None = None,
    ) -> AgentResult[T]:
        """Render, call, parse; one corrective retry when the reply cannot be used."""
        system, user = render(template or self.template, variables)
        past = [m for m in (history or []) if m.get("role") != "system"]
        sys_msg = {"role": "system", "content": system}
        turn = [{"role": "user", "content": user}]
        usage = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
        last_error = ""
        for _attempt in range(self.parse_retries + 1):
            convo = trim_messages_to_limit([sys_msg, *past, *turn], self.token_budget, self.model)
            reply, call_usage = self._call(convo)
            for k, v in call_usage.items():
                usage[k] += v
            turn.append({"role": "assistant", "content": reply})
            try:
                output: T = parse_reply(reply, self.output_model)
                code = extract_code(reply) if self.wants_code else None
                if self.wants_code and not code:
                    raise ReplyParseError("the reply has no ```c block with the whole harness")
            except ReplyParseError as exc:
                last_error = str(exc)
                turn.append({"role": "user", "content": (
                    f"Your reply could not be used: {exc}. Reply again in exactly the format "
                    "the task asks for.")})
                continue
            new = ([] if history else [sys_msg]) + turn
            return AgentResult(output, code, new, usage, reply, count_message_tokens(convo))
        raise ReplyParseError(f"{self.name}: no usable reply after retries: {last_error}")

    def _call(self, convo: list[dict[str, Any]]) -> tuple[str, dict[str, int]]:
        started = time.monotonic()
        try:
            message = self.llm.invoke(to_langchain(convo))
        except Exception as exc:  # the provider's exception types vary; all end the same way
            raise ModelCallError(f"{self.name}: model call failed: {type(exc).__name__}: {exc}") from exc
        reply = message.content if isinstance(message.content, str) else json.dumps(message.content)
        meta = getattr(message, "usage_metadata", None) or {}
        usage = {
            "calls": 1,
            "prompt_tokens": int(meta.get("input_tokens") or count_message_tokens(convo, self.model)),
            "completion_tokens": int(meta.get("output_tokens") or count_text_tokens(reply, self.model)),
        }
        if self.debug_log is not None:
            record = {"agent": self.name, "seconds": round(time.monotonic() - started, 3),
                      "prompt": convo, "reply": from_langchain([message])[0], "usage": usage}
            with self.debug_log.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(record) + "\n")
        return reply, usage
