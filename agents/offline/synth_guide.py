"""Reading usage rules (API constraints, known fixes) into the actions a draft takes.

Rules come as data (:class:`fuzzkit.guidance_facts.Rule`): from the function analyzer's reply
and session memory's rules blocks, and from the fixes the fixer recorded. A rule naming a
function the API does not have is ignored; nothing here reads a sentence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from fuzzkit.api import FunctionDecl
from fuzzkit.guidance_facts import Rule


@dataclass
class Guidance:
    """What the guidance lines ask the generated code to do."""

    includes: list[str] = field(default_factory=list)
    avoid: set[str] = field(default_factory=set)
    release: dict[str, str] = field(default_factory=dict)  # destructor name -> why
    before: list[tuple[str, str]] = field(default_factory=list)
    c_strings: set[str] = field(default_factory=set)
    renames: dict[str, str] = field(default_factory=dict)
    min_size: int = 0
    applied: list[str] = field(default_factory=list)


def read_guidance(
    rules: Sequence[Rule], api: list[FunctionDecl], target: FunctionDecl | None = None
) -> Guidance:
    """What ``rules`` ask of a draft of ``target`` (rules naming no function of ``api`` are left out)."""
    names = {f.name for f in api}
    params = {p.name for p in target.params} if target else set()
    g = Guidance()
    for rule in rules:
        understood = True
        if rule.kind == "include":
            _add_include(g, rule.name if rule.name[0] in '<"' else f'"{rule.name}"')
        elif rule.kind == "rename" and rule.then in names and rule.name != rule.then:
            g.renames[rule.name] = rule.then
        elif rule.kind == "avoid" and (rule.name in names or "_" in rule.name):
            g.avoid.add(rule.name)
        elif rule.kind == "release_with" and rule.name in names:
            g.release[rule.name] = rule.text or rule.name
        elif rule.kind == "call_before" and rule.name in names:
            g.before.append((rule.name, rule.then))
        elif rule.kind == "nul_terminated" and rule.name in params:
            g.c_strings.add(rule.name)
        elif rule.kind == "min_size":
            g.min_size = max(g.min_size, rule.size)
        else:
            understood = False
        if understood:
            g.applied.append(rule.sentence())
    g.avoid -= set(g.renames.values())
    return g


def _add_include(g: Guidance, header: str) -> None:
    if header not in g.includes:
        g.includes.append(header)
