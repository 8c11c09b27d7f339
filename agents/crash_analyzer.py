"""Crash analyzer and crash feasibility analyzer: triage, then real bug or harness misuse."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from agents.base import Agent
from agents.sections import memory_section, target_decl, types_section
from agents.usage_section import usage_section
from fuzzkit.api import FunctionDecl
from fuzzkit.crash_facts import CrashFacts, TerminatedInput, render_crash


class CrashTriage(BaseModel):
    """What the crash is and where it happens."""

    crash_type: str = "unknown"
    location: Literal["harness", "library", "unknown"] = "unknown"
    root_cause: str = ""
    summary: str = ""


class Feasibility(BaseModel):
    """Whether the crash is a real library bug."""

    feasible: bool
    verdict: Literal["library_bug", "harness_misuse"] = "harness_misuse"
    reasoning: str = ""
    fix_hint: str = ""


_RUNTIME = ("__sanitizer", "fuzzer::", "__asan", "__lsan", "__ubsan", "__libc_start", "_start")


def stack_text(crash: Mapping[str, Any], limit: int = 12) -> str:
    """The crash's frames, one per line, numbered from the first that is not the fuzzer's own.

    The sanitizer's and libFuzzer's frames (printing the trace, handling the signal) come first
    in a "deadly signal" report and would push the harness's frame out of the ``limit``.
    """
    lines = []
    frames = [f for f in crash.get("frames") or []
              if (f.get("function") or "?") != "?" and not str(f.get("function")).startswith(_RUNTIME)]
    for i, frame in enumerate(frames[:limit]):
        where = f"{frame.get('file') or '?'}:{frame.get('line') or '?'}"
        lines.append(f"#{i} {frame.get('function') or '?'} {where}")
    return "\n".join(lines) or "(no frames)"


def report_text(crash: Mapping[str, Any], location: str = "") -> str:
    """Key facts of the parsed sanitizer report: a line each, then the same as a facts block.

    ``location``: where the crash analyzer put the fault, for the prompts that follow it.
    """
    facts = crash_facts(crash).model_copy(update={"location": location})
    utf8 = ", ".join(f"{fn}({', '.join(names)})" for fn, names in facts.utf8.items())
    terminated = [f"{fn}({', '.join(names)})" for fn, names in facts.terminated.params.items()]
    flags = [n if v is None else f"{n}={v:#x}" for n, v in facts.terminated.flags.items()]
    entry_conditions = facts.conditions.get(facts.entry_function, [])
    terminated += [f"flags {', '.join(flags)}"] if flags else []
    return "\n".join([
        f"kind: {facts.kind}",
        f"summary: {facts.summary}",
        f"top project frame in harness: {facts.in_harness}",
        f"near initialization: {facts.near_init}",
        f"signature: {facts.signature}",
        f"category: {facts.category}",
        f"entry function: {facts.entry_function}",
        f"access: {facts.access}",
        *([f"region: {facts.region}"] if facts.region else []),
        f"buffer origin: {facts.buffer_origin}",
        f"misuse hint: {facts.misuse_hint}",
        *([f"released first inside: {facts.freed_first_in}"] if facts.freed_first_in else []),
        *([f"allocated inside: {facts.allocated_in}"] if facts.allocated_in else []),
        *([f"failed assertion: {facts.assertion}"] if facts.assertion else []),
        *([f"input size: {facts.input_size} bytes"] if facts.input_size is not None else []),
        *([f"input text: {facts.input_text}"] if facts.input_text else []),
        *([f"documented utf-8 parameters: {utf8}"] if utf8 else []),
        *([f"documented nul-terminated input: {'; '.join(terminated)}"] if terminated else []),
        *([f"documented conditions of {facts.entry_function}: {'; '.join(entry_conditions)}"]
          if entry_conditions else []),
        render_crash(facts),
    ])


def crash_facts(crash: Mapping[str, Any]) -> CrashFacts:
    """The run's crash record as :class:`CrashFacts` (what a prompt carries as data)."""
    def text(key: str) -> str:
        return str(crash.get(key) or "")

    utf8, terminated = crash.get("utf8_arguments"), crash.get("terminated_arguments")
    conditions = crash.get("documented_conditions")
    return CrashFacts(
        kind=text("kind") or "unknown", summary=text("summary"), in_harness=bool(crash.get("in_harness")),
        near_init=bool(crash.get("near_init")), signature=text("signature"), category=text("category"),
        entry_function=text("entry_function"), access=text("access"), region=text("region"),
        buffer_origin=text("buffer_origin"), misuse_hint=text("misuse_hint"),
        freed_first_in=text("freed_first_in"), allocated_in=text("allocated_in"), assertion=text("assertion"),
        input_size=_input_size(crash.get("reproducer")), input_text=text("input_text"),
        utf8=utf8 if isinstance(utf8, dict) else {},
        terminated=TerminatedInput.model_validate(terminated if isinstance(terminated, dict) else {}),
        conditions=conditions if isinstance(conditions, dict) else {},
    )


def _input_size(path: Any) -> int | None:
    """The size of the crash's reproducer, when it is still on disk."""
    try:
        return Path(path).stat().st_size if path else None
    except OSError:
        return None


def stack_api(state: Mapping[str, Any], crash: Mapping[str, Any]) -> str:
    """Prototypes of the library's public functions among the crash's frames, outermost last."""
    frames = [str(f.get("function") or "") for f in crash.get("frames") or []]
    frames += [str(crash.get(k) or "") for k in ("freed_first_in", "allocated_in")]  # the other stacks
    api = {d.get("name"): d for d in state.get("api") or []}
    shown = dict.fromkeys(f for f in frames if f in api)
    return "\n".join(FunctionDecl.from_dict(api[f]).prototype() for f in shown) or "(none)"


def harness_api(state: Mapping[str, Any]) -> str:
    """Prototypes of the library's public functions the harness calls, in the order it first calls them.

    Whose a leak is depends on every call that handled the leaked object, not only those in its
    allocation stack (a later ``view(&src, ..., &dst)`` overwrites what ``dst`` held).
    """
    api = {d.get("name"): d for d in state.get("api") or []}
    called = dict.fromkeys(re.findall(r"\b([A-Za-z_]\w*)\s*\(", str(state.get("harness_code") or "")))
    return "\n".join(FunctionDecl.from_dict(api[f]).prototype() for f in called if f in api) or "(none)"


class CrashAnalyzer(Agent[CrashTriage]):
    """Triage from the sanitizer report."""

    name = "crash_analyzer"
    template = "crash_analyzer"
    output_model = CrashTriage

    @staticmethod
    def variables(state: Mapping[str, Any], reads: tuple[str, ...]) -> dict[str, str]:
        """Template values."""
        crash = state.get("crash") or {}
        return {
            "target_prototype": target_decl(state).prototype(),
            "crash_report": report_text(crash),
            "stack": stack_text(crash),
            "harness": state.get("harness_code", ""),
            "session_memory": memory_section(state, reads),
        }


class CrashFeasibilityAnalyzer(Agent[Feasibility]):
    """Real bug or false positive."""

    name = "crash_feasibility_analyzer"
    template = "crash_feasibility"
    output_model = Feasibility

    @staticmethod
    def variables(state: Mapping[str, Any], reads: tuple[str, ...]) -> dict[str, str]:
        """Template values."""
        crash = state.get("crash") or {}
        triage = state.get("crash_analysis") or {}
        triage_text = "\n".join(f"{k}: {triage.get(k, '')}" for k in
                                ("crash_type", "location", "root_cause", "summary"))
        return {
            "target_prototype": target_decl(state).prototype(),
            "crash_triage": f"{report_text(crash, str(triage.get('location') or ''))}\n{triage_text}",
            "stack": stack_text(crash),
            "stack_api": stack_api(state, crash),
            "harness_api": harness_api(state),
            "types": types_section(state),
            "usage": usage_section(state),
            "harness": state.get("harness_code", ""),
            "session_memory": memory_section(state, reads),
        }
