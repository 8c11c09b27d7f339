"""Prompt templates: rendering rules, and per-agent memory injection (exactly its categories)."""

from __future__ import annotations

from typing import Any

import pytest

from agent_graph.memory.session_memory import (
    HEADERS,
    add_api_constraint,
    add_coverage_strategy,
    add_decision,
    add_known_fix,
    empty_session_memory,
    set_archetype,
)
from agent_graph.registry import default_registry, memory_reads
from agents.coverage_analyzer import CoverageAnalyzer
from agents.crash_analyzer import CrashAnalyzer, CrashFeasibilityAnalyzer
from agents.enhancer import Enhancer
from agents.function_analyzer import FunctionAnalyzer
from agents.prototyper import Prototyper
from fuzzkit.api import FunctionDecl, Param
from prompts import PromptError, placeholders, render

TARGET = FunctionDecl("cJSON_Parse", "cJSON *", (Param("value", "const char *"),), "cJSON.h")


def full_state() -> dict[str, Any]:
    memory = empty_session_memory()
    memory = add_api_constraint(memory, "value must be NUL-terminated", "HIGH")
    memory = set_archetype(memory, "stateless_parser", "HIGH", "parses a string")
    memory = add_known_fix(memory, "add #include <stdlib.h> for free", True)
    memory = add_decision(memory, "route:enhancer", "compile error")
    memory = add_coverage_strategy(memory, "call cJSON_Print on the tree", target_functions=["cJSON_Print"])
    return {
        "target": TARGET.to_dict(), "api": [TARGET.to_dict()], "headers": ["cJSON.h"],
        "project": "cjson", "session_memory": memory, "harness_code": "int x;",
        "analysis": {"archetype": "stateless_parser", "constraints": []},
        "crash": {"kind": "SEGV", "frames": []}, "crash_analysis": {"version": 1},
        "run": {"coverage": {"lines": {"covered": 1, "count": 2, "percent": 50.0}}},
    }


def rendered_prompts(reads: dict[str, tuple[str, ...]]) -> dict[str, str]:
    s = full_state()
    prompts = {
        "function_analyzer": render("function_analyzer", FunctionAnalyzer.variables(
            s, reads["function_analyzer"], "- stateless_parser", "(none)")),
        "prototyper": render("prototyper", Prototyper.variables(
            s, reads["prototyper"], "stateless_parser", "desc", "/* skel */", "(none)")),
        "enhancer": render("enhancer_fix", Enhancer.fix_variables(
            s, reads["enhancer"], "does not compile", "x.c:1:1: error: e", "", "", "(none)")),
        "crash_analyzer": render("crash_analyzer", CrashAnalyzer.variables(s, reads["crash_analyzer"])),
        "crash_feasibility_analyzer": render("crash_feasibility", CrashFeasibilityAnalyzer.variables(
            s, reads["crash_feasibility_analyzer"])),
        "coverage_analyzer": render("coverage_analyzer", CoverageAnalyzer.variables(
            s, reads["coverage_analyzer"], "(none)", "(none)")),
    }
    return {name: system + "\n" + user for name, (system, user) in prompts.items()}


def test_each_agent_prompt_holds_exactly_its_categories() -> None:
    reads = memory_reads(default_registry())
    for agent, prompt in rendered_prompts(reads).items():
        present = {cat for cat, header in HEADERS.items() if header in prompt}
        assert present == set(reads[agent]), agent


def test_enhancer_improve_prompt_also_filtered() -> None:
    reads = memory_reads(default_registry())["enhancer"]
    _, user = render("enhancer_improve", Enhancer.improve_variables(full_state(), reads, "(none)", "(none)"))
    assert {c for c, h in HEADERS.items() if h in user} == set(reads)
    assert user.startswith("MODE: improve")


def test_render_rejects_missing_and_unused_values() -> None:
    names = placeholders("crash_analyzer")
    values = {n: "x" for n in names}
    with pytest.raises(PromptError, match="missing values"):
        render("crash_analyzer", {k: v for k, v in values.items() if k != "stack"})
    with pytest.raises(PromptError, match="unused values"):
        render("crash_analyzer", {**values, "surprise": "y"})
    with pytest.raises(PromptError, match="no prompt template"):
        render("no_such_role", {})


def test_values_with_braces_are_verbatim() -> None:
    values = {n: "x" for n in placeholders("crash_analyzer")}
    values["harness"] = "int f(void) { return {{0}}; }"
    _, user = render("crash_analyzer", values)
    assert "int f(void) { return {{0}}; }" in user


def test_every_role_prompt_names_its_role() -> None:
    for name in ("function_analyzer", "prototyper", "enhancer_fix", "enhancer_improve",
                 "crash_analyzer", "crash_feasibility", "coverage_analyzer"):
        system, _ = render(name, {n: "" for n in placeholders(name)})
        assert system.startswith("ROLE: ")
