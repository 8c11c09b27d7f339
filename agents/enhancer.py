"""Enhancer: fixes harnesses that fail and improves those that run."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import Field

from agents.base import Agent
from agents.sections import (
    api_prototypes,
    bullet,
    coverage_summary,
    include_lines,
    lesson_api,
    memory_section,
    target_decl,
    types_section,
)
from agents.stepper_api import steppers_for
from agents.usage_section import usage_section
from fuzzkit.guidance_facts import WithRules
from long_term_memory.experience.matts import refinement_section


class EnhancerReply(WithRules):
    """The enhancer's JSON; the new harness comes in the ```c block.

    ``rules``: the fixes a later draft should repeat, as data.
    """

    fixes: list[str] = Field(default_factory=list)
    unresolved: list[str] = Field(default_factory=list)
    directions: list[str] = Field(default_factory=list)
    added_calls: list[str] = Field(default_factory=list)


class Enhancer(Agent[EnhancerReply]):
    """One role, two templates: ``enhancer_fix`` and ``enhancer_improve``."""

    name = "enhancer"
    template = "enhancer_fix"
    output_model = EnhancerReply
    wants_code = True

    @staticmethod
    def fix_variables(
        state: Mapping[str, Any], reads: tuple[str, ...], problem: str, compile_errors: str,
        crash_triage: str, last_working: str, pitfalls: str, experience: str = "",
    ) -> dict[str, str]:
        """Values for ``enhancer_fix`` (``refinement``: a sequential MaTTS round's section)."""
        return {
            "target_prototype": target_decl(state).prototype(),
            "include_lines": include_lines(state),
            "api_prototypes": api_prototypes(state, lesson_api(state, experience)),
            "types": types_section(state),
            "usage": usage_section(state),
            "harness": state.get("harness_code", ""),
            "problem": problem,
            "compile_errors": compile_errors or "(none)",
            "crash_triage": crash_triage or "(none)",
            "last_working_harness": f"```c\n{last_working}```" if last_working else "(none)",
            "pitfalls": pitfalls,
            "session_memory": memory_section(state, reads),
            "experience": experience,
            "refinement": refinement_section(state),
        }

    @staticmethod
    def improve_variables(
        state: Mapping[str, Any], reads: tuple[str, ...], uncovered: str, directions: str,
        experience: str = "",
    ) -> dict[str, str]:
        """Values for ``enhancer_improve`` (``refinement``: a sequential MaTTS round's section)."""
        strategies = (state.get("coverage_analysis") or {}).get("strategies") or []
        # What an offered maker makes is driven by its stepper: the API list shows it.
        steps = steppers_for(state, re.findall(r"(\w+)\s*\(", uncovered))
        return {
            "target_prototype": target_decl(state).prototype(),
            "include_lines": include_lines(state),
            "api_prototypes": api_prototypes(state, [*steps, *lesson_api(state, experience)]),
            "types": types_section(state),
            "usage": usage_section(state),
            "harness": state.get("harness_code", ""),
            "coverage_summary": coverage_summary((state.get("run") or {}).get("coverage") or {}),
            "uncovered_functions": uncovered,
            "coverage_strategies": bullet([s.get("strategy", "") for s in strategies]),
            "attempted_directions": directions,
            "session_memory": memory_section(state, reads),
            "experience": experience,
            "refinement": refinement_section(state),
        }
