"""Function analysis: which usage archetype a C function follows, and how its API must be used.

:func:`analyze_function` reads a target's prototype against the library's other prototypes
(signature shapes, naming, which functions create and destroy the types involved) and returns
the archetype with a confidence, plain-English usage constraints, the lifecycle of every type
involved and related functions worth calling on the same objects.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agents.offline import ckinds
from agents.offline.archetype import MUTATE, classify
from agents.offline.synth_api import ApiIndex, words
from agents.offline.synth_finders import inverse_of
from agents.offline.synth_init import choose_init
from agents.offline.synth_roles import roles
from agents.offline.synth_types import Role
from agents.offline.synth_vocab import CONSUME, has_checked_twin, risky
from fuzzkit.api import FunctionDecl
from fuzzkit.guidance_facts import Rule
from fuzzkit.vocabulary import words_of

ARCHETYPES = (
    "stateless_parser", "object_lifecycle", "state_machine", "stream_processor", "round_trip",
    "file_based", "buffer_codec", "object_builder", "callback_driven", "incremental_digest",
)  # fmt: skip


@dataclass
class Analysis:
    """What the analyzer concluded about one function."""

    function: str
    archetype: str
    confidence: str
    reasoning: str
    constraints: list[str] = field(default_factory=list)
    lifecycle: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    related: list[str] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)  # what the constraints ask, as data

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "function": self.function,
            "archetype": self.archetype,
            "confidence": self.confidence,
            "reasoning": self.reasoning,
            "constraints": list(self.constraints),
            "lifecycle": {k: dict(v) for k, v in self.lifecycle.items()},
            "related": list(self.related),
            "rules": [r.model_dump(exclude_defaults=True) for r in self.rules],
        }


@dataclass(frozen=True)
class Said:
    """One constraint: its sentence, and the rules it asks as data."""

    text: str
    rules: tuple[Rule, ...] = ()


def with_target(target: FunctionDecl, api: list[FunctionDecl]) -> list[FunctionDecl]:
    """The API list with ``target`` in it (prompts sometimes list it separately)."""
    return list(api) if any(f.name == target.name for f in api) else [*api, target]


def analyze_function(target: FunctionDecl, api: list[FunctionDecl]) -> Analysis:
    """Classify ``target`` into an archetype and describe how to use it safely."""
    idx = ApiIndex(with_target(target, api))
    rs = roles(target, idx)
    archetype, confidence, why = classify(target, idx, rs)
    types = _types_involved(target, idx)
    said = constraints(target, idx, rs, archetype)
    return Analysis(
        function=target.name,
        archetype=archetype,
        confidence=confidence,
        reasoning=why,
        constraints=[c.text for c in said],
        lifecycle={t: _life(idx, t) for t in types},
        related=related_functions(target, idx, types),
        rules=[r for c in said for r in c.rules],
    )


def _types_involved(target: FunctionDecl, idx: ApiIndex) -> list[str]:
    found: list[str] = []
    for t in [target.return_type, *(p.type for p in target.params)]:
        key = idx.type_key(t)
        if key and key not in found:
            found.append(key)
    return found


def _life(idx: ApiIndex, key: str) -> dict[str, list[str]]:
    life = idx.lifecycle(key).to_dict()
    best = idx.destructor(key, (life["init"] or life["create"] or [""])[0])
    if best and best in life["destroy"]:
        life["destroy"] = [best] + [d for d in life["destroy"] if d != best]
    return life


def related_functions(target: FunctionDecl, idx: ApiIndex, types: list[str]) -> list[str]:
    """Functions worth calling on the same objects, most useful first (at most 16)."""
    scored: list[tuple[int, str]] = []
    for f in idx.api:
        if f.name == target.name or risky(f.name) or has_checked_twin(f.name, idx.by_name) or not f.params:
            continue
        key = idx.type_key(f.params[0].type)
        if key not in types or idx.kind(f) in ("init", "destroy"):
            continue
        ws = set(words(f.name)) | set(idx.verbs(f.name))
        if ckinds.is_string(f.return_type) and idx.returns_owned(f):
            # Printers with options reach more of the printing code.
            score = 0 if len(f.params) > 1 else 1
        elif ws & {"size", "count", "length"}:
            score = 2
        elif ws & {"is", "has"}:
            score = 3
        elif ws & {"get", "find", "lookup", "root", "node"}:
            score = 4
        elif ws & (words_of("copy") | {"compare", "equal"}):
            score = 5
        elif ws & CONSUME or ws & MUTATE:
            score = 7
        else:
            score = 6
        scored.append((score, f.name))

    inverse = inverse_of(idx, target.name)
    names = [n for _, n in sorted(scored)]
    if inverse:
        names.insert(0, inverse.name)
    return list(dict.fromkeys(names))[:16]


def constraints(target: FunctionDecl, idx: ApiIndex, rs: list[Role], archetype: str) -> list[Said]:
    """Short usage rules a harness author must respect, from the roles and lifecycles."""
    out = [_said(c) for r in rs if (rule := _ROLE_RULES.get(r.kind)) and (c := rule(r, rs, target, idx))]
    rkey = idx.type_key(target.return_type)
    if rkey and idx.returns_owned(target):
        dtor = idx.destructor(rkey, target.name)
        text = f"the returned {rkey} must be freed with {dtor or 'free'}"
        out.append(Said(text, (Rule(kind="release_with", name=dtor, text=text),) if dtor else ()))
    elif idx.returns_owned(target):
        out.append(Said(f"the returned memory must be freed with {idx.free_function() or 'free'}"))
    elif rkey:
        out.append(Said(f"the returned {rkey} is borrowed: never free it"))
    if archetype in ("state_machine", "stream_processor"):
        out.append(Said("loop a bounded number of times and stop at the end state or the first error"))
    return out


def _said(said: Said | str) -> Said:
    return said if isinstance(said, Said) else Said(said)


def _object_rule(r: Role, rs: list[Role], target: FunctionDecl, idx: ApiIndex) -> Said | None:
    if not r.type_key:
        return None
    life = idx.lifecycle(r.type_key)
    dtor = idx.destructor(r.type_key, (life.init or life.create or [target.name])[0])
    if life.init and not life.create and r.index == 0 and idx.kind(target) != "init":
        chosen = choose_init(idx, r.type_key, target.name, set())
        init = chosen.name if chosen else life.init[0]
        dtor = idx.destructor(r.type_key, init)
        text = (f"{r.type_key} must be zeroed and initialised with {init} before "
                f"{target.name}" + (f" and released with {dtor}" if dtor else ""))
        before = Rule(kind="call_before", name=init, then=target.name, text=text)
        return Said(text, (before, Rule(kind="release_with", name=dtor, text=text)) if dtor else (before,))
    if not life.create:
        return None
    # Released by what undoes the constructor, not an initializer it also has; of several
    # constructors, the one of the target's own family (x_parse_chunk: x_create_push, not y_create_push).
    made = max(life.create,
               key=lambda n: (len(os.path.commonprefix([n, target.name])), -life.create.index(n)))
    dtor = idx.destructor(r.type_key, made)
    if dtor:
        text = f"{r.param.name} must come from {made} (or another constructor) and be released with {dtor}"
        return Said(text, (Rule(kind="release_with", name=dtor, text=text),))
    return None


def _out_object_rule(r: Role, rs: list[Role], target: FunctionDecl, idx: ApiIndex) -> Said | None:
    dtor = idx.destructor(r.type_key, target.name) if r.type_key else None
    if not dtor:
        return None
    text = f"each {r.type_key} filled by {target.name} must be released with {dtor}"
    return Said(text, (Rule(kind="release_with", name=dtor, text=text),))


def _text_rule(r: Role, rs: list[Role], target: FunctionDecl, idx: ApiIndex) -> Said:
    text = f"{r.param.name or f'argument {r.index + 1}'} must be a NUL-terminated string"
    # (a parameter the header leaves unnamed has no name a rule could give)
    return Said(text, (Rule(kind="nul_terminated", name=r.param.name, text=text),) if r.param.name else ())


def _int_rule(r: Role, rs: list[Role], target: FunctionDecl, idx: ApiIndex) -> str | None:
    if len(r.choices) == 2 and r.choices[0] < r.choices[1]:
        return f"{r.param.name} should stay within {r.choices[0]}..{r.choices[1]}"
    if len(r.choices) > 2:
        return f"{r.param.name} should be one of {', '.join(map(str, r.choices[:8]))}..."
    return None


def _version_rule(r: Role, rs: list[Role], target: FunctionDecl, idx: ApiIndex) -> str | None:
    integer = not ckinds.is_pointer(r.param.type)
    return f"{r.param.name} must be {idx.version_function(target.name, integer)}()"


_RoleRule = Callable[[Role, list[Role], FunctionDecl, ApiIndex], Said | str | None]
_ROLE_RULES: dict[str, _RoleRule] = {  # one usage rule per parameter role, by role kind
    "text": _text_rule,
    "bytes": lambda r, rs, t, i: (
        f"{rs[r.pair].param.name} bounds the read of {r.param.name}" if r.pair is not None else None
    ),
    "outbuf": lambda r, rs, t, i: (
        f"{r.param.name} must have at least {rs[r.pair].param.name} writable bytes"
        if r.pair is not None
        else None
    ),
    "object": _object_rule,
    "handle": _object_rule,
    "consumed": lambda r, rs, t, i: (
        f"{r.param.name} belongs to the object once {t.name} succeeds: free it only if the call failed"
    ),
    "child": lambda r, rs, t, i: f"{r.param.name} must be an item inside {rs[0].param.name}",
    "out_object": _out_object_rule,
    "int": _int_rule,
    "callback": lambda r, rs, t, i: (
        f"{r.param.name} must match {r.param.type} exactly and never give more than asked"
    ),
    "version": _version_rule,
    "struct_size": lambda r, rs, t, i: f"{r.param.name} must be sizeof({r.type_key})",
}
