"""The prompt's ``## Usage in the library's own code`` section, rendered from the prepared usage.

A real model reads the snippets (the shortest functions of the library's own tests, examples
and tools that call the target) and the summary; the offline model reads the fenced YAML block,
rendered from :class:`fuzzkit.usage_models.UsageFacts` and read back with the same model
(:func:`read_usage`). Everything stays within :data:`USAGE_TOKENS`: snippets go first, then
object protocols beyond the target's own, then callback sources.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_graph.memory.tokens import count_text_tokens
from fuzzkit.facts_block import read_facts, render_facts
from fuzzkit.usage_models import Step, TargetUsage, UsageFacts

HEADING = "Usage in the library's own code"
KIND = "usage"
USAGE_TOKENS = 2500


def _call(step: Step) -> str:
    return f"{step.call}({', '.join(a.text for a in step.args)})"


def summary(facts: UsageFacts) -> list[str]:
    """One line per object protocol and per target sequence, for a reader."""
    lines = []
    for o in facts.objects:
        parts = []
        if o.make:
            parts.append(f"made by {_call(o.make[0])}")
        elif o.declared:
            parts.append("declared on the stack")
        if o.configure:
            parts.append("configured with " + ", ".join(_call(s) for s in o.configure))
        if o.feed:
            parts.append(f"fed by {_call(o.feed[0])}")
        if o.release:
            parts.append(f"released by {o.release}")
        lines.append(f"- {o.type}: " + "; ".join(parts) + f" ({o.uses} uses)")
    for t in facts.targets:
        calls = " -> ".join(s.call for s in t.sequence)
        lines.append(f"- {t.function} in {t.seen_in} ({t.origin}): {calls}")
    for r in facts.records:
        sets = ", ".join(f"{f.field} = {f.value or f.kind}" for f in r.fields)
        lines.append(f"- a {r.type} passed to {r.call} is set first: {sets} ({r.uses} uses)")
    return lines


def render_usage(usage: TargetUsage, budget: int = USAGE_TOKENS) -> str:
    """The section's body ('' when the library's own code never uses the target's API)."""
    facts = usage.facts.model_copy(deep=True)
    snippets = list(usage.snippets)
    while True:
        text = _compose(facts, snippets)
        if not text or count_text_tokens(text) <= budget:
            return text
        if snippets:
            snippets.pop()
        elif len(facts.objects) > 1:
            facts.objects.pop()
        elif any(cb.source for t in facts.targets for cb in t.callbacks):
            for t in facts.targets:
                for cb in t.callbacks:
                    cb.source = ""
        else:
            return text


def _compose(facts: UsageFacts, snippets: list[Any]) -> str:
    if not facts.objects and not facts.targets and not facts.records and not snippets:
        return ""
    out = [
        "How the library's own tests, examples and tools use this API (never its fuzz harnesses):",
        *summary(facts),
    ]
    for s in snippets:
        out += [f"From {s.seen_in} ({s.origin}):", "```c", s.code.rstrip(), "```"]
    if facts.objects or facts.targets or facts.records:
        out += ["The same as data:", render_facts(KIND, facts)]
    return "\n".join(out)


def usage_section(state: Mapping[str, Any]) -> str:
    """The whole section, heading included, or '' (the template leaves no trace of it then)."""
    usage = TargetUsage.model_validate(state.get("library_usage") or {})
    body = render_usage(usage)
    return f"## {HEADING}\n{body}" if body else ""


def read_usage(section: str) -> UsageFacts:
    """The usage facts of a rendered section (empty when it carries none)."""
    return read_facts(section, KIND, UsageFacts) or UsageFacts()
