"""What every LLM role shares: render its prompt, call the model, parse the reply.

A role is a small subclass naming its template, its pydantic output and how it turns a slice of
the state into template variables. The node that owns the role passes the agent's message
history and gets back the new messages for the ``agent_messages`` reducer.

With a model that has them (:class:`agents.llm.ModelFeatures`), a role's reply is constrained
by its output schema (``response_format`` of type ``json_schema``; roles that answer with a C
block keep JSON-in-text) and the role may call its tools for up to ``max_tool_rounds`` rounds
before it answers; every call and result stays in its history as a pair. An endpoint that
rejects either feature is asked again one step down (:mod:`agents.negotiation`) and is remembered
as not having it, so the run degrades to plain prompts and JSON parsed with json-repair.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import BaseTool
from pydantic import BaseModel

from agent_graph.memory.messages import from_langchain, to_langchain, trim_messages_to_limit
from agent_graph.memory.tokens import count_message_tokens, count_text_tokens
from agents.llm import ModelFeatures
from agents.negotiation import (
    fit_budget,
    overflow_window,
    rejected_feature,
    server_prompt_tokens,
    without,
)
from agents.parsing import MAX_ERROR_CHARS, RETRY_NOTE, ReplyParseError, extract_code, parse_reply
from agents.rate_limit import RateLimit, retry_after
from agents.tools import run_tool, tool_spec
from long_term_memory.reply_text import encodable
from prompts import render

T = TypeVar("T", bound=BaseModel)
MAX_RATE_LIMITED = 8  # 429s one call waits out before it counts as failed


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
    notes: list[str] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    """Each tool call the model made: name, args, answer size."""
    degraded: list[dict[str, str]] = field(default_factory=list)
    """Native features the endpoint refused during this call, with its words."""
    structured: bool = False
    """The reply was constrained by the output schema."""
    deterministic: bool = False
    """The model is deterministic (the offline engine): what it says about a lesson is a counterfactual."""


@dataclass
class _CallLog:
    """What the model calls of one agent turn produced besides the reply."""

    usage: dict[str, int] = field(
        default_factory=lambda: {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0})
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    degraded: list[dict[str, str]] = field(default_factory=list)
    structured: bool = False


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
        tools: Sequence[BaseTool] = (),
        features: ModelFeatures | None = None,
        max_tool_rounds: int = 4,
        max_output_tokens: int = 4096,
        rate: RateLimit | None = None,
    ) -> None:
        self.llm = llm
        self.rate = rate
        self.max_output_tokens = max_output_tokens
        self.token_budget = token_budget
        self.model = model
        self.debug_log = debug_log
        self.tools = {t.name: t for t in tools}
        self.features = features
        self.max_tool_rounds = max_tool_rounds

    def _uses(self, feature: str) -> bool:
        return self.features is not None and self.features.use(feature)

    def response_format(self) -> dict[str, Any]:
        """The ``response_format`` that constrains this role's reply to its output schema."""
        schema = self.output_model.model_json_schema()
        return {"type": "json_schema",
                "json_schema": {"name": self.output_model.__name__, "schema": schema, "strict": False}}

    def run(
        self, variables: dict[str, str], history: list[dict[str, Any]] | None = None,
        template: str | None = None,
    ) -> AgentResult[T]:
        """Render, call (with tool rounds), parse; one corrective retry when the reply cannot be used."""
        system, user = render(template or self.template, variables)
        past = [m for m in (history or []) if m.get("role") != "system"]
        sys_msg = {"role": "system", "content": system}
        turn = [{"role": "user", "content": user}]
        info = _CallLog()
        last_error = ""
        for _attempt in range(self.parse_retries + 1):
            reply = self._respond(sys_msg, past, turn, info)
            try:
                output: T = parse_reply(reply, self.output_model)
                code = extract_code(reply) if self.wants_code else None
                if self.wants_code and not code:
                    raise ReplyParseError("the reply has no ```c block with the whole harness")
            except ReplyParseError as exc:  # limits (size, depth, numbers) included: ask again
                last_error = str(exc)[:MAX_ERROR_CHARS]
                turn.append({"role": "user", "content": (
                    f"{RETRY_NOTE}: {last_error}. Reply again in exactly the format "
                    "the task asks for.")})
                continue
            new = ([] if history else [sys_msg]) + turn
            return AgentResult(output, code, new, info.usage, reply, tool_calls=info.tool_calls,
                               degraded=info.degraded, structured=info.structured,
                               deterministic=getattr(self.llm, "deterministic", False) is True)
        raise ReplyParseError(f"{self.name}: no usable reply after retries: {last_error}")

    def _respond(
        self, sys_msg: dict[str, Any], past: list[dict[str, Any]], turn: list[dict[str, Any]],
        info: _CallLog,
    ) -> str:
        """One reply, after the tool rounds it asks for; appends every message to ``turn``."""
        rounds = 0
        specs = [tool_spec(t) for t in self.tools.values()]
        while True:
            convo = trim_messages_to_limit([sys_msg, *past, *turn], self.token_budget, self.model)
            kwargs: dict[str, Any] = {}
            if specs and self._uses("tools"):
                kwargs["tools"] = specs
                if rounds >= self.max_tool_rounds:
                    kwargs["tool_choice"] = "none"  # tools stay declared: the history refers to them
            if not self.wants_code and self._uses("structured"):
                kwargs["response_format"] = self.response_format()
            elif not self.wants_code and self._uses("json_object"):
                kwargs["response_format"] = {"type": "json_object"}
            message, sent = self._call(convo, kwargs, info)
            stored = from_langchain([message])[0]
            # Calls are honoured only while tools may be used: a server that calls tools after
            # tool_choice "none" gets its text read as the answer, so the loop always ends.
            if "tools" not in sent or "tool_choice" in sent or not stored.get("tool_calls"):
                turn.append({"role": "assistant", "content": stored["content"]})
                info.structured = "response_format" in sent
                return stored["content"]
            rounds += 1
            for i, c in enumerate(stored["tool_calls"]):
                c["id"] = c["id"] or f"call_{rounds}_{i}"
            turn.append(stored)
            for c in stored["tool_calls"]:
                answer = run_tool(self.tools, c["name"], c["args"])
                turn.append({"role": "tool", "content": answer, "tool_call_id": c["id"], "name": c["name"]})
                info.tool_calls.append({"name": c["name"], "args": c["args"], "answer_chars": len(answer)})

    def _call(
        self, convo: list[dict[str, Any]], kwargs: dict[str, Any], info: _CallLog,
    ) -> tuple[AIMessage, dict[str, Any]]:
        """Invoke the model; drop a feature the endpoint refuses and ask again without it."""
        started = time.monotonic()
        trimmed = False
        limited = 0
        while True:
            try:
                if self.rate is not None:
                    self.rate.acquire(count_message_tokens(convo, self.model) + self.max_output_tokens)
                message = self.llm.invoke(to_langchain(convo), **kwargs)
                break
            except Exception as exc:  # the provider's exception types vary; all end the same way
                wait = retry_after(exc)
                if wait is not None and limited < MAX_RATE_LIMITED:
                    # Rate limited past the client's own retries: wait (every worker, when the
                    # limit is shared) instead of failing the target.
                    limited += 1
                    if self.rate is not None:
                        self.rate.pause(wait)
                    else:
                        time.sleep(wait)
                    continue
                feature = rejected_feature(exc, kwargs) if self.features is not None else None
                window = overflow_window(exc) if feature is None and not trimmed else None
                if window is not None:
                    # Cut to the server's window (once): the newest turn survives, shortened.
                    budget, reply_tokens = fit_budget(window, self.max_output_tokens,
                                                      count_message_tokens(convo, self.model),
                                                      server_prompt_tokens(exc))
                    convo = trim_messages_to_limit(convo, budget, self.model)
                    kwargs = {**kwargs, "max_tokens": reply_tokens}
                    trimmed = True
                    info.degraded.append({"feature": "context_window",
                                          "reason": f"prompt cut to {budget} tokens: {str(exc)[:200]}"})
                    continue
                if feature is None or self.features is None:
                    if type(exc).__name__ == "LengthFinishReasonError":
                        # A constrained reply cut at max_tokens: an unusable reply, not a dead model.
                        message = AIMessage(content="")
                        break
                    raise ModelCallError(
                        f"{self.name}: model call failed: {type(exc).__name__}: {exc}") from exc
                self.features.reject(feature, str(exc))
                info.degraded.append({"feature": feature, "reason": str(exc)[:300]})
                kwargs = without(feature, kwargs, self.features.use("json_object"))
        message = self._account(message, convo, kwargs, info, started)
        return message, kwargs

    def _account(self, message: Any, convo: list[dict[str, Any]], kwargs: dict[str, Any],
                 info: _CallLog, started: float) -> AIMessage:
        """The reply as a UTF-8 ``AIMessage``, its usage counted and (debug) logged."""
        if not isinstance(message, AIMessage):
            message = AIMessage(content=str(getattr(message, "content", message)))
        if isinstance(message.content, str) and encodable(message.content) is not message.content:
            # Undecodable bytes arrive as lone surrogates; history, logs and files need UTF-8.
            message = message.model_copy(update={"content": encodable(message.content)})
        reply = message.content if isinstance(message.content, str) else json.dumps(message.content)
        meta = getattr(message, "usage_metadata", None) or {}
        usage = {
            "calls": 1,
            "prompt_tokens": int(meta.get("input_tokens") or count_message_tokens(convo, self.model)),
            "completion_tokens": int(meta.get("output_tokens") or count_text_tokens(reply, self.model)),
        }
        for k, v in usage.items():
            info.usage[k] += v
        if self.debug_log is not None:
            record = {"agent": self.name, "seconds": round(time.monotonic() - started, 3),
                      "prompt": convo, "request_options": sorted(kwargs),
                      "reply": from_langchain([message])[0], "usage": usage}
            with self.debug_log.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(record) + "\n")
        return message
