"""Function analyzer: archetype and usage constraints of the target."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from agents.base import Agent
from agents.sections import api_prototypes, memory_section, target_decl, types_section
from agents.usage_section import usage_section
from fuzzkit.guidance_facts import WithRules


class FunctionAnalysis(WithRules):
    """The analyzer's verdict; ``rules``: what the constraints ask, as data."""

    archetype: str
    confidence: Literal["HIGH", "MEDIUM", "LOW"] = "MEDIUM"
    reasoning: str = ""
    constraints: list[str] = Field(default_factory=list)
    related_functions: list[str] = Field(default_factory=list)


class FunctionAnalyzer(Agent[FunctionAnalysis]):
    """Classifies the target into an archetype of the long-term knowledge."""

    name = "function_analyzer"
    template = "function_analyzer"
    output_model = FunctionAnalysis

    @staticmethod
    def variables(
        state: Mapping[str, Any], reads: tuple[str, ...], catalog: str, knowledge_hits: str
    ) -> dict[str, str]:
        """Template values from the state and the retriever's findings."""
        return {
            "target_prototype": target_decl(state).prototype(),
            "project": str(state.get("project", "")),
            "headers": ", ".join(state.get("headers") or []),
            "api_prototypes": api_prototypes(state),
            "types": types_section(state),
            "usage": usage_section(state),
            "archetype_catalog": catalog,
            "knowledge_hits": knowledge_hits,
            "session_memory": memory_section(state, reads),
        }
