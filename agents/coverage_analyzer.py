"""Coverage analyzer: from llvm-cov figures to concrete strategies."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field

from agents.base import Agent
from agents.sections import api_prototypes, coverage_summary, memory_section, target_decl, types_section
from agents.usage_section import usage_section


class Strategy(BaseModel):
    """One proposed change."""

    strategy: str
    target_functions: list[str] = Field(default_factory=list)
    expected_gain: Literal["HIGH", "MEDIUM", "LOW"] = "MEDIUM"


class CoverageAdvice(BaseModel):
    """The analyzer's proposals."""

    summary: str = ""
    strategies: list[Strategy] = Field(default_factory=list)


class CoverageAnalyzer(Agent[CoverageAdvice]):
    """Reads the coverage of the current harness."""

    name = "coverage_analyzer"
    template = "coverage_analyzer"
    output_model = CoverageAdvice

    @staticmethod
    def variables(
        state: Mapping[str, Any], reads: tuple[str, ...], uncovered: str, directions: str,
        harness_summary: str = "",
    ) -> dict[str, str]:
        """Template values; with a CodeMem summary the analyzer reads it instead of the source."""
        harness = (f"(summary from code memory; the analyzer does not edit the file)\n{harness_summary}"
                   if harness_summary else f"```c\n{state.get('harness_code', '')}```")
        return {
            "target_prototype": target_decl(state).prototype(),
            "api_prototypes": api_prototypes(state),
            "types": types_section(state),
            "usage": usage_section(state),
            "harness": harness,
            "coverage_summary": coverage_summary((state.get("run") or {}).get("coverage") or {}),
            "uncovered_functions": uncovered,
            "attempted_directions": directions,
            "session_memory": memory_section(state, reads),
        }
