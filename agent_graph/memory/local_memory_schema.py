"""Local (working) memory: its JSON shape, the validated extraction reply, and direction matching.

The state's ``local_memory`` value, maintained by the memory manager during phase 2::

    {"global_status": {"iteration": int, "best_coverage": float, "best_harness_id": str,
                       "current_approach": str},
     "attempted_directions": [{"direction": str, "outcome": "Success" | "Failed" | "Noise",
                               "source_ref": str, "evidence": str}],
     # a direction dropped for a crash adds "calls": [str] (the library calls its block added)
     "reasoning_bank": [{"type": "Success" | "Failure", "title": str, "description": str,
                         "content": str, "related_operator": str, "source_ref": dict,
                         "evidence": {"code_change": str, "metrics_delta": str, "context": str}}],
     "recorded_version": int}

The pydantic models below validate what an extraction reply may put there; a reply that does
not validate changes nothing.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Collection, Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

Outcome = Literal["Success", "Failed", "Noise"]
ItemType = Literal["Success", "Failure"]
MAX_DIRECTIONS = 40
MAX_LINE = 300

Line = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_LINE)]
Text = Annotated[str, StringConstraints(strip_whitespace=True, max_length=2000)]

_OUTCOMES = {"success": "Success", "succeeded": "Success", "failed": "Failed",
             "failure": "Failed", "fail": "Failed", "noise": "Noise"}
_ITEM_TYPES = {"success": "Success", "failure": "Failure", "failed": "Failure"}
# Words that say nothing about which change was made; two directions differing only in
# these are the same direction.
_STOPWORDS = frozenset(
    "a an and the of on in into to for with by from at as is it its this that then than "
    "call calls calling add adds added use uses using try tried also more new harness "
    "input data each every one two via".split()
)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class MeasurementFacts(BaseModel):
    """What the extraction prompt states about one measured version, as its ``measurement`` block.

    The prompt's Problem, Measurement and Change sections say it in lines; the same facts follow
    as a fenced ``# facts: measurement v1`` block (:mod:`fuzzkit.facts_block`) that the offline
    extractor reads back with this model.
    """

    model_config = ConfigDict(extra="forbid")

    outcome: Outcome  # the branch the coverage delta took
    old_coverage: float  # the parent's line coverage, percent
    new_coverage: float
    noise: float = 0.0
    version: str  # the measured version's id (``v5``)
    parent: str
    iteration: int = 0
    operator: str = "improve"
    directions: list[str] = Field(default_factory=list)  # what the enhancer said it followed
    archetype: str = ""


def _normalized(value: Any, table: Mapping[str, str], what: str) -> Any:
    if isinstance(value, str) and value.strip().casefold() in table:
        return table[value.strip().casefold()]
    allowed = sorted(set(table.values()))
    raise ValueError(f"{what} must be one of {allowed}, got {value!r}")


class Direction(BaseModel):
    """One entry of the tabu / recommendation list."""

    model_config = ConfigDict(extra="ignore")

    direction: Line
    outcome: Outcome
    source_ref: Text = ""
    evidence: Text = ""

    @field_validator("outcome", mode="before")
    @classmethod
    def _outcome(cls, value: Any) -> Any:
        return _normalized(value, _OUTCOMES, "outcome")

    @field_validator("source_ref", mode="before")
    @classmethod
    def _ref(cls, value: Any) -> Any:
        # Models often write a bare version number for a version id.
        return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


class ItemEvidence(BaseModel):
    """What backs a lesson: the logical change, the measured delta, when it applies."""

    model_config = ConfigDict(extra="ignore")

    code_change: Text = ""
    metrics_delta: Text = ""
    context: Text = ""


class MemoryItem(BaseModel):
    """One distilled lesson of the reasoning bank."""

    model_config = ConfigDict(extra="ignore")

    type: ItemType
    title: Line
    description: Text = ""
    content: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000)]
    related_operator: Text = ""
    source_ref: dict[str, Any] = Field(default_factory=dict)
    evidence: ItemEvidence = Field(default_factory=ItemEvidence)

    @field_validator("type", mode="before")
    @classmethod
    def _type(cls, value: Any) -> Any:
        return _normalized(value, _ITEM_TYPES, "type")

    @field_validator("source_ref", mode="before")
    @classmethod
    def _ref(cls, value: Any) -> Any:
        # The memory manager overwrites it with the measured ids; a plain id is kept as one.
        if isinstance(value, str | int) and not isinstance(value, bool):
            return {"harness_id": str(value)}
        return {} if value is None else value


class ExtractionReply(BaseModel):
    """The extraction's JSON: the whole new direction list and at most one new lesson."""

    model_config = ConfigDict(extra="ignore")

    updated_directions: list[Direction] = Field(min_length=1, max_length=MAX_DIRECTIONS)
    new_memory_item: MemoryItem | None = None


def empty_local_memory() -> dict[str, Any]:
    """A local memory with every part present and empty."""
    return {
        "global_status": {"iteration": 0, "best_coverage": 0.0, "best_harness_id": "",
                          "current_approach": ""},
        "attempted_directions": [],
        "reasoning_bank": [],
        "recorded_version": 0,
    }


def copy_memory(memory: Mapping[str, Any] | None) -> dict[str, Any]:
    """A deep copy with every part present, so results share nothing with their input."""
    out = empty_local_memory()
    for key, value in copy.deepcopy(dict(memory or {})).items():
        out[key] = value
    out["global_status"] = {**empty_local_memory()["global_status"], **(out.get("global_status") or {})}
    out["attempted_directions"] = list(out.get("attempted_directions") or [])
    out["reasoning_bank"] = list(out.get("reasoning_bank") or [])
    return out


def api_tokens(text: str, api_names: Collection[str] = ()) -> frozenset[str]:
    """Identifiers that name C API: in ``api_names``, or shaped like one (``a_b``, ``aB``)."""
    known = {n.casefold() for n in api_names}
    found = set()
    for word in _IDENT.findall(text):
        folded = word.casefold()
        if folded in known or "_" in word.strip("_") or re.search(r"[a-z][A-Z]", word):
            found.add(folded)
    return frozenset(found)


def _stem(word: str) -> str:
    """A crude English stem: ``parse``, ``parsed``, ``parsing`` and ``parses`` all give ``pars``."""
    for suffix in ("ing", "ed", "es", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def word_tokens(text: str) -> frozenset[str]:
    """The words of a text that say what was done (case-folded, stemmed, stopwords removed)."""
    words = {w.casefold() for w in _IDENT.findall(text)}
    return frozenset(_stem(w) for w in words if w not in _STOPWORDS and len(w) > 2)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Overlap of two token sets (0 when both are empty)."""
    return len(a & b) / len(a | b) if a | b else 0.0


def same_direction(a: str, b: str, api_names: Collection[str] = ()) -> bool:
    """True when two direction texts describe the same change.

    Directions naming API functions must name the same ones and share a third of their
    words (so ``call acme_print on the tree`` and ``print the tree with acme_print`` match,
    while two ways of calling one function with different arguments stay apart); directions
    without API names must share 60% of their words.
    """
    api_a, api_b = api_tokens(a, api_names), api_tokens(b, api_names)
    words = jaccard(word_tokens(a), word_tokens(b))
    if api_a or api_b:
        return api_a == api_b and words >= 1 / 3
    return words >= 0.6


def clip_line(text: str, limit: int = MAX_LINE) -> str:
    """``text`` on one line, cut at a word boundary to fit ``limit`` characters (ends with "...")."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    return line[: limit - 3].rsplit(" ", 1)[0].rstrip(";,") + "..."
