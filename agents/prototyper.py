"""Prototyper: the first harness, written from the archetype's skeleton."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from agents.base import Agent
from agents.sections import (
    api_prototypes,
    include_lines,
    lesson_api,
    memory_section,
    target_decl,
    types_section,
)
from agents.usage_section import usage_section
from long_term_memory.experience.matts import refinement_section


class PrototypeReply(BaseModel):
    """The prototyper's JSON; the harness itself comes in the ```c block."""

    notes: list[str] = Field(default_factory=list)
    functions_called: list[str] = Field(default_factory=list)


class Prototyper(Agent[PrototypeReply]):
    """Writes a harness for the target from a skeleton."""

    name = "prototyper"
    template = "prototyper"
    output_model = PrototypeReply
    wants_code = True

    @staticmethod
    def variables(
        state: Mapping[str, Any], reads: tuple[str, ...], archetype: str, description: str,
        skeleton: str, pitfalls: str, experience: str = "",
    ) -> dict[str, str]:
        """Template values from the state and the archetype bundle.

        ``refinement`` is the ``## Self-refinement`` section of a sequential MaTTS round ('' else).
        """
        analysis = state.get("analysis") or {}
        shown = {k: analysis[k] for k in ("archetype", "constraints", "related_functions")
                 if k in analysis}
        return {
            "target_prototype": target_decl(state).prototype(),
            "include_lines": include_lines(state),
            "api_prototypes": api_prototypes(state, lesson_api(state, experience)),
            "types": types_section(state),
            "usage": usage_section(state),
            "archetype": archetype,
            "archetype_description": description,
            "skeleton": skeleton,
            "pitfalls": pitfalls,
            "analysis": json.dumps(shown, indent=1) if shown else "(none)",
            "session_memory": memory_section(state, reads),
            "experience": experience,
            "refinement": refinement_section(state),
        }
