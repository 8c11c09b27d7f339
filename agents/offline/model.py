"""The embedded ``offline`` model: a deterministic chat model that does each role's job.

It reads the same messages a real model receives (system prompt with the role line, the user
turn with its sections), reasons over them with the C analysis, synthesis, repair and
improvement engines in this package, and answers in the format the prompt asks for: a JSON
object, plus a ```c block for the harness roles. No network, no key, same answer for the same
prompt.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from agent_graph.memory.tokens import count_text_tokens
from agents.offline import crash_roles, experience, local_memory, roles
from agents.offline.cdecl import parse_prototypes
from agents.offline.prompt_reader import read_prompt
from agents.offline.type_table import read_types, using
from agents.offline.type_tags import with_tags
from agents.parsing import RETRY_NOTE

HANDLERS = {
    "function_analyzer": roles.analyze,
    "prototyper": roles.prototype,
    "enhancer": roles.enhance,
    "crash_analyzer": crash_roles.triage_crash,
    "crash_feasibility_analyzer": crash_roles.judge_feasibility,
    "coverage_analyzer": roles.advise_coverage,
    "local_memory_extractor": local_memory.extract,
    **{role: experience.distil for role in experience.ROLES},
}


def reply_text(payload: dict[str, Any], code: str | None = None) -> str:
    """The reply in the format every prompt asks for."""
    text = "```json\n" + json.dumps(payload, indent=1) + "\n```\n"
    if code is not None:
        text += "\n```c\n" + code.rstrip() + "\n```\n"
    return text


class OfflineChatModel(BaseChatModel):
    """Deterministic, network-free chat model for every LogicFuzz role."""

    deterministic: ClassVar[bool] = True  # the same prompt always gets the same reply

    @property
    def _llm_type(self) -> str:
        return "logicfuzz-offline"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        system = next((str(m.content) for m in messages if isinstance(m, SystemMessage)), "")
        # A retry turn only says what was wrong: the task is in the prompt before it.
        user = next((str(m.content) for m in reversed(messages)
                     if m.type == "human" and not str(m.content).startswith(RETRY_NOTE)), "")
        facts = read_prompt(system, user)
        handler = HANDLERS.get(facts.role)
        if handler is None:
            text = reply_text({"error": f"offline model has no skill for role {facts.role!r}"})
        else:
            # Typedefs, records and constants of the library come from the prompt itself.
            with using(read_types(facts.text("Types"), parse_prototypes(facts.code("Library API")))):
                payload, code = handler(facts)
                code = with_tags(code) if code else code
            text = reply_text(payload, code)
        prompt_tokens = sum(count_text_tokens(str(m.content)) for m in messages)
        completion_tokens = count_text_tokens(text)
        message = AIMessage(content=text, usage_metadata={
            "input_tokens": prompt_tokens, "output_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens})
        return ChatResult(generations=[ChatGeneration(message=message)])
