"""Usage rules as data: what the analyzer asks of a harness and what a repair taught, as models.

The function analyzer writes its constraints for people ("the returned T must be freed with
T_free"); the rules a harness writer acts on travel beside them as :class:`Rule` models, in the
analyzer's JSON reply (``rules``) and, through session memory, as a ``# facts: rules v1`` block
(:mod:`fuzzkit.facts_block`). The fixer records the edits a later draft should repeat (an include,
a rename, a call the library does not link, a release, the input fed through a call) the same
way, and the run's trajectory carries them to the experience extractor. A rule's ``text`` is for
the reader; nothing acts on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ModelWrapValidatorHandler, PrivateAttr, model_validator

from fuzzkit.facts_block import read_facts, render_facts
from fuzzkit.vocabulary import c_group

RuleKind = Literal["include", "rename", "avoid", "release_with", "call_before", "nul_terminated", "min_size",
                   "release_result", "release_field", "feed_input", "keep_tag", "opaque"]
TAGS = c_group("tag")  # struct, union, enum

# What each kind needs, as documented on :class:`Rule`.
_NEEDS: dict[str, tuple[str, ...]] = {
    "include": ("name",), "rename": ("name", "then"), "avoid": ("name",), "release_with": ("name",),
    "call_before": ("name", "then"), "nul_terminated": ("name",), "min_size": ("size",),
    "release_result": ("name", "producer", "var"), "release_field": ("name", "producer", "var", "field"),
    "feed_input": ("name", "then"), "keep_tag": ("name", "then"), "opaque": ("name",),
}


class Rule(BaseModel):
    """One rule a harness follows.

    ``include``: ``name`` is a header with its brackets (``<x.h>``, ``"x.h"``). ``rename``: the
    identifier ``name`` is written ``then``. ``avoid``: never call ``name``. ``release_with``:
    ``name`` is the releaser to prefer. ``call_before``: call ``name`` before ``then``.
    ``nul_terminated``: parameter ``name`` is a NUL-terminated string. ``min_size``: the input
    needs at least ``size`` bytes (1: the harness returns early on the empty input).
    ``release_result``: the harness's ``var`` holds what ``producer`` hands back; release it with
    ``name``. ``release_field``: ``producer`` leaves a buffer in field ``field`` of the harness's
    record ``var``; release it with ``name``. ``feed_input``: hand the fuzz input to the object
    of ``then`` with ``name`` before calling ``then``. ``keep_tag``: the type ``name`` is written
    with its tag ``then`` (``struct``, ``union`` or ``enum``). ``opaque``: the type ``name`` is
    only declared: hold it through a pointer. ``fixit``: a rename clang's own fix-it made.
    """

    model_config = ConfigDict(extra="forbid")

    kind: RuleKind
    name: str = ""
    then: str = ""
    size: int = Field(default=0, ge=0)
    producer: str = ""  # the function that hands back (or fills) what is released
    var: str = ""  # the harness's variable
    field: str = ""  # a field of the record ``var``
    fixit: bool = False
    text: str = ""  # the sentence it comes with, for people

    @model_validator(mode="after")
    def _complete(self) -> Rule:
        missing = [f for f in _NEEDS[self.kind] if not getattr(self, f)]
        if missing:
            raise ValueError(f"a {self.kind} rule needs {' and '.join(missing)}")
        if self.kind == "keep_tag" and self.then not in TAGS:
            raise ValueError(f"a keep_tag rule's then is one of {', '.join(sorted(TAGS))}, not {self.then!r}")
        return self

    def sentence(self) -> str:
        """Its sentence, or what it asks in words when it came without one."""
        return self.text or " ".join(filter(None, [self.kind, self.name, self.then, str(self.size or ""),
                                                   self.producer, self.var, self.field]))

    def key(self) -> tuple[str | int, ...]:
        """What the rule asks, without its sentence (two sentences of one rule are one rule)."""
        return self.kind, self.name, self.then, self.size, self.producer, self.var, self.field


class Rules(BaseModel):
    """The rules of one prompt section."""

    model_config = ConfigDict(extra="forbid")

    rules: list[Rule] = Field(default_factory=list)


KIND = "rules"


def unique(rules: Iterable[Rule]) -> list[Rule]:
    """``rules`` in order, each asked once."""
    seen: dict[tuple[str | int, ...], Rule] = {}
    for rule in rules:
        seen.setdefault(rule.key(), rule)
    return list(seen.values())


def render_rules(rules: Sequence[Rule]) -> str:
    """The rules as a ``# facts: rules v1`` block; ``""`` when there are none."""
    return render_facts(KIND, Rules(rules=unique(rules))) if rules else ""


def read_rules(text: str) -> list[Rule]:
    """The rules of the first rules block in ``text`` (none: ``[]``).

    Raises:
        FactsBlockError: The block is there but does not fit :class:`Rules`.
    """
    found = read_facts(text, KIND, Rules)
    return found.rules if found else []


class WithRules(BaseModel):
    """A model's reply that states rules: those that fit :class:`Rule` are kept, the rest counted.

    A reply's rule that names no function or lacks its field is no reason to lose the whole
    reply (its sentences and its other rules); how many were left out is ``rules_dropped`` (not
    part of the reply's schema), for the node's event.
    """

    rules: list[Rule] = Field(default_factory=list)  # what the reply asks, as data
    _rules_dropped: int = PrivateAttr(default=0)

    @model_validator(mode="wrap")
    @classmethod
    def _fitting_rules(cls, data: Any, handler: ModelWrapValidatorHandler[WithRules]) -> WithRules:
        dropped = 0
        if isinstance(data, dict) and "rules" in data:
            given = data["rules"] if isinstance(data["rules"], list) else []
            kept = valid_rules(given)
            dropped = len(given) - len(kept)
            data = {**data, "rules": kept}
        reply = handler(data)
        reply._rules_dropped = dropped
        return reply

    @property
    def rules_dropped(self) -> int:
        """How many of the reply's rules did not fit :class:`Rule` and were left out."""
        return self._rules_dropped


def valid_rules(data: Any) -> list[Any]:
    """The entries of a model's ``rules`` that fit :class:`Rule`; the others are left out.

    A reply's rule that names no function or lacks its field is no reason to lose the whole
    reply (its sentences and its other rules): a pydantic ``before`` validator for such fields.
    """
    out: list[Any] = []
    for entry in data if isinstance(data, list) else []:
        try:
            out.append(entry if isinstance(entry, Rule) else Rule.model_validate(entry))
        except ValueError:
            continue
    return out


def rules_of(data: Iterable[Any]) -> list[Rule]:
    """Rules from JSON data (dicts or models), as an agent's reply or a memory entry holds them."""
    return [r if isinstance(r, Rule) else Rule.model_validate(r) for r in data]
