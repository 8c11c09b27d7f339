"""Per-agent message histories: plain-dict messages, their reducer, trimming, LangChain converters.

A message is JSON data so the state survives a checkpointer and shows in Studio::

    {"role": "system" | "user" | "assistant" | "tool", "content": str,
     "tool_calls": [{"id": str, "name": str, "args": dict}],   # assistant only, optional
     "tool_call_id": str,                                      # tool only, required
     "name": str}                                              # optional

``agent_messages`` maps an agent name to its history. A node's update for it maps an agent to:

- a list of messages: appended to that agent's history;
- :data:`RESET` (the string ``"__reset__"``): that agent's history is cleared (key removed);
- ``{"__replace__": [messages]}``: that agent's history becomes exactly these messages (after
  trimming or compression; :func:`append_and_trim` builds this).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from agent_graph.memory.tokens import REPLY_OVERHEAD, count_text_tokens, message_tokens

Message = dict[str, Any]
AgentUpdate = list[Message] | str | dict[str, list[Message]]
RESET = "__reset__"
REPLACE = "__replace__"
ROLES = ("system", "user", "assistant", "tool")
TRUNCATION_MARKER = "\n\n[... truncated by LogicFuzz to fit the context budget ...]"
# A truncated user message keeps at least this much of its text when older turns can make room.
_MIN_USER_TOKENS = 256

__all__ = [
    "REPLACE",
    "RESET",
    "ROLES",
    "append_and_trim",
    "from_langchain",
    "merge_agent_messages",
    "TRUNCATION_MARKER",
    "to_langchain",
    "trim_messages_to_limit",
    "validate_message",
]


def validate_message(message: Any) -> Message:
    """Check one message's shape: a deep copy, or ``ValueError`` saying what to fix."""
    if not isinstance(message, Mapping):
        raise ValueError(f"a message must be a dict with 'role' and 'content', got {message!r}")
    role = message.get("role")
    if role not in ROLES:
        raise ValueError(f"message role must be one of {ROLES}, got {role!r} in {message!r}")
    if not isinstance(message.get("content"), str):
        raise ValueError(f"message content must be a string, got {message.get('content')!r}")
    calls = message.get("tool_calls")
    if calls is not None:
        if role != "assistant" or not isinstance(calls, list):
            raise ValueError(f"only assistant messages carry a tool_calls list: {message!r}")
        for call in calls:
            if not isinstance(call, Mapping) or not {"id", "name", "args"} <= set(call):
                raise ValueError(f"a tool call needs 'id', 'name' and 'args': {call!r}")
    if role == "tool" and not isinstance(message.get("tool_call_id"), str):
        raise ValueError(f"a tool message needs the 'tool_call_id' it answers: {message!r}")
    return copy.deepcopy(dict(message))


def merge_agent_messages(
    old: Mapping[str, list[Message]] | None, new: Mapping[str, AgentUpdate] | None
) -> dict[str, list[Message]]:
    """Reducer for ``agent_messages``: append, reset or replace per agent (see module doc).

    Pure: neither argument is changed and the result shares no list with them. Messages in
    ``new`` are validated, so a malformed message fails in the node that produced it.
    """
    merged = {agent: list(history) for agent, history in (old or {}).items()}
    for agent, update in (new or {}).items():
        if isinstance(update, str):
            if update != RESET:
                raise ValueError(
                    f"agent_messages[{agent!r}] update is the string {update!r}; the only string "
                    f"accepted is {RESET!r} (clear the history)"
                )
            merged.pop(agent, None)
        elif isinstance(update, Mapping):
            if set(update) != {REPLACE} or not isinstance(update[REPLACE], list):
                raise ValueError(
                    f"agent_messages[{agent!r}] update {update!r} must be a list of messages, "
                    f"{RESET!r}, or {{{REPLACE!r}: [messages]}}"
                )
            merged[agent] = [validate_message(m) for m in update[REPLACE]]
        elif isinstance(update, list):
            merged[agent] = merged.get(agent, []) + [validate_message(m) for m in update]
        else:
            raise ValueError(
                f"agent_messages[{agent!r}] update must be a list of messages, {RESET!r}, or "
                f"{{{REPLACE!r}: [messages]}}; got {type(update).__name__}"
            )
    return merged


def _units(messages: Sequence[Message]) -> list[list[int]]:
    """Indices grouped so an assistant tool call and its results are kept or dropped together."""
    units: list[list[int]] = []
    i = 0
    while i < len(messages):
        unit = [i]
        ids = {c["id"] for c in messages[i].get("tool_calls") or []}
        i += 1
        while ids and i < len(messages) and messages[i]["role"] == "tool" \
                and messages[i]["tool_call_id"] in ids:
            unit.append(i)
            i += 1
        units.append(unit)
    return units


def _truncated(message: Message, room: int, model: str) -> Message:
    """``message`` with its content cut (and marked) to at most ``room`` content tokens."""
    content = message["content"]
    total = count_text_tokens(content, model)
    if total <= room:
        return message
    # Cut where the token density says the budget ends, then shrink by the measured overshoot:
    # one or two counts instead of a bisection over a text that may be hundreds of kB.
    cut = len(content) * max(room - count_text_tokens(TRUNCATION_MARKER, model), 0) // total
    while cut > 0:
        used = count_text_tokens(content[:cut] + TRUNCATION_MARKER, model)
        if used <= room:
            break
        cut = min(cut - 1, cut * room // used)
    return {**message, "content": content[:cut] + TRUNCATION_MARKER}


def trim_messages_to_limit(
    messages: Sequence[Message], max_tokens: int = 100_000, model: str = ""
) -> list[Message]:
    """Drop the oldest turns until ``count_message_tokens`` of the result is <= ``max_tokens``.

    Pure; a conversation that fits comes back as an equal copy. Otherwise:

    - leading system messages are always kept, never cut;
    - an assistant message with tool calls and the tool results answering it are dropped
      together, and tool results whose call is already gone are dropped, so no tool message
      is left without its call;
    - after the newest turns that fit, the kept tail is advanced to its first user message,
      if it has one;
    - if no user message survives (the newest turn alone is too big), the newest user message
      is brought back ahead of the kept tail, whole if it fits, else cut to what the budget
      leaves and ended with :data:`TRUNCATION_MARKER`; the oldest kept turns are dropped until
      at least 256 tokens of it (or all of it) fit. So the model always sees the task rather
      than an empty conversation.

    Raises:
        ValueError: the leading system messages alone (plus a truncated user message) exceed
            ``max_tokens``: raise the budget or shorten the system prompt.
    """
    msgs = [validate_message(m) for m in messages]
    cost = [message_tokens(m, model) for m in msgs]
    if not msgs or sum(cost) + REPLY_OVERHEAD <= max_tokens:
        return msgs
    n_head = next((i for i, m in enumerate(msgs) if m["role"] != "system"), len(msgs))
    system_cost = sum(cost[:n_head])
    budget = max_tokens - REPLY_OVERHEAD - system_cost
    too_big = (
        f"the system messages take {system_cost} tokens, leaving no room under the budget of "
        f"{max_tokens} for the conversation: raise max_tokens or shorten the system prompt"
    )
    units = [[n_head + i for i in u] for u in _units(msgs[n_head:])]
    units = [u for u in units if msgs[u[0]]["role"] != "tool"]
    start, used = len(units), 0
    while start > 0 and used + sum(cost[i] for i in units[start - 1]) <= budget:
        start -= 1
        used += sum(cost[i] for i in units[start])
    tail = units[start:]
    first_user = next((k for k, u in enumerate(tail) if msgs[u[0]]["role"] == "user"), None)
    if first_user is not None:
        return msgs[:n_head] + [msgs[i] for u in tail[first_user:] for i in u]
    dropped_users = [u[0] for u in units[:start] if msgs[u[0]]["role"] == "user"]
    if not dropped_users:
        if budget < 0:
            raise ValueError(too_big)
        return msgs[:n_head] + [msgs[i] for u in tail for i in u]
    kept = _user_back(msgs[dropped_users[-1]], [[msgs[i] for i in u] for u in tail],
                      [sum(cost[i] for i in u) for u in tail], budget, model)
    if kept is None:
        raise ValueError(too_big)
    return msgs[:n_head] + kept


def _user_back(user: Message, tail: list[list[Message]], tail_cost: list[int], budget: int,
               model: str) -> list[Message] | None:
    """``user`` (cut to fit if needed) ahead of the newest turns of ``tail`` that leave room.

    None when not even a marked stub of it fits the ``budget``.
    """
    frame = message_tokens({**user, "content": ""}, model)
    marker_cost = count_text_tokens(TRUNCATION_MARKER, model)
    whole = count_text_tokens(user["content"], model)
    want = whole if whole <= _MIN_USER_TOKENS else _MIN_USER_TOKENS + marker_cost
    while tail and budget - frame - sum(tail_cost) < want:
        tail, tail_cost = tail[1:], tail_cost[1:]
    room = budget - frame - sum(tail_cost)
    if room < min(whole, marker_cost):
        return None
    return [_truncated(user, room, model)] + [m for turn in tail for m in turn]


def append_and_trim(
    history: Sequence[Message],
    new_messages: Sequence[Message],
    max_tokens: int = 100_000,
    model: str = "",
) -> list[Message] | dict[str, list[Message]]:
    """The ``agent_messages`` update value for one agent that adds ``new_messages``.

    Returns the plain list of new messages when history plus them fits ``max_tokens``, else
    ``{"__replace__": trimmed}`` with the whole trimmed history (see
    :func:`trim_messages_to_limit`). Use it as ``{"agent_messages": {agent: value}}``.
    """
    added = [validate_message(m) for m in new_messages]
    combined = [*history, *added]
    trimmed = trim_messages_to_limit(combined, max_tokens=max_tokens, model=model)
    if trimmed == combined:
        return added
    return {REPLACE: trimmed}


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "".join(parts)


def to_langchain(messages: Sequence[Message]) -> list[BaseMessage]:
    """Plain-dict messages as LangChain messages (the model seam's input)."""
    out: list[BaseMessage] = []
    for raw in messages:
        msg = validate_message(raw)
        extra: dict[str, Any] = {"name": msg["name"]} if msg.get("name") else {}
        role = msg["role"]
        if role == "system":
            out.append(SystemMessage(content=msg["content"], **extra))
        elif role == "user":
            out.append(HumanMessage(content=msg["content"], **extra))
        elif role == "assistant":
            calls = [
                {"id": c["id"], "name": c["name"], "args": dict(c["args"]), "type": "tool_call"}
                for c in msg.get("tool_calls") or []
            ]
            out.append(AIMessage(content=msg["content"], tool_calls=calls, **extra))
        else:
            out.append(ToolMessage(content=msg["content"], tool_call_id=msg["tool_call_id"],
                                   **extra))
    return out


def from_langchain(messages: Sequence[BaseMessage]) -> list[Message]:
    """LangChain messages as plain dicts; list content keeps only its text blocks."""
    out: list[Message] = []
    for msg in messages:
        if isinstance(msg, SystemMessage):
            item: Message = {"role": "system", "content": _text_of(msg.content)}
        elif isinstance(msg, HumanMessage):
            item = {"role": "user", "content": _text_of(msg.content)}
        elif isinstance(msg, AIMessage):
            item = {"role": "assistant", "content": _text_of(msg.content)}
            if msg.tool_calls:
                item["tool_calls"] = [
                    {"id": c.get("id") or "", "name": c["name"], "args": dict(c["args"])}
                    for c in msg.tool_calls
                ]
        elif isinstance(msg, ToolMessage):
            item = {"role": "tool", "content": _text_of(msg.content),
                    "tool_call_id": msg.tool_call_id}
        else:
            raise ValueError(
                f"cannot store a {type(msg).__name__} in agent_messages; use SystemMessage, "
                "HumanMessage, AIMessage or ToolMessage"
            )
        if msg.name:
            item["name"] = msg.name
        out.append(item)
    return out
