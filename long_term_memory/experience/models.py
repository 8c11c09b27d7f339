"""The experience bank's data: memory items and records, outcomes, stats, Gatekeeper decisions.

A *record* is one finished target trajectory (ReasoningBank's memory entry); it carries 1–3
*items* (title, description, content), which are what retrieval finds and the Gatekeeper
injects. Items get ids like ``MEM-3f2a9c01`` so a model can cite the ones it used.
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from long_term_memory.experience.lessons import (
    MAX_FAILURE,
    LessonScope,
    lesson_fields,
    parse_action,
    parse_scope,
)

MAX_ITEMS = 3
MAX_TITLE = 120
MAX_DESCRIPTION = 400
MAX_CONTENT = 2000

ITEM_ID = re.compile(r"\bMEM-[0-9a-fA-F]{8}\b")
RecordKind = Literal["success", "failure", "contrastive"]
ValidationResult = Literal["pass", "partial", "fail"]


def normalize_text(text: str) -> str:
    """Lower-case, whitespace-collapsed text: the form exact-duplicate hashing compares."""
    return re.sub(r"\s+", " ", text).strip().lower()


def short_hash(*parts: str, length: int = 16) -> str:
    """A stable hex digest of ``parts`` (NUL-separated)."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:length]


class MemoryItem(BaseModel):
    """One distilled lesson: a title, when it applies, and what to do (or not to do)."""

    model_config = ConfigDict(extra="ignore")

    title: str = Field(min_length=1, max_length=MAX_TITLE)
    description: str = Field(min_length=1, max_length=MAX_DESCRIPTION)
    content: str = Field(min_length=1, max_length=MAX_CONTENT)
    item_id: str = ""
    merged_into: str = ""
    digest: str = ""
    # The actionable part (optional: records written before it load unchanged).
    scope: LessonScope | None = None
    failure: str = Field(default="", max_length=MAX_FAILURE)
    action: str = ""

    @field_validator("title", "description", "content", mode="before")
    @classmethod
    def _strip(cls, value: Any) -> Any:
        return value.strip() if isinstance(value, str) else value

    @field_validator("scope", mode="before")
    @classmethod
    def _scope(cls, value: Any) -> LessonScope | None:
        return value if isinstance(value, LessonScope) else parse_scope(value)

    @field_validator("failure", mode="before")
    @classmethod
    def _failure(cls, value: Any) -> str:
        text = " ".join(str(value or "").split())[:MAX_FAILURE]
        return "" if re.fullmatch(r"<[^<>]*>|\.\.\.|none|n/?a", text, re.I) else text  # an echoed placeholder

    @field_validator("action", mode="before")
    @classmethod
    def _action(cls, value: Any) -> str:
        """An action outside the vocabulary is dropped (the lesson's text still stands)."""
        action = parse_action(value)
        return action.render() if action else ""

    def lesson(self) -> dict[str, Any]:
        """The structured part that is set (``scope``, ``failure``, ``action``)."""
        return lesson_fields(self.model_dump())

    def content_hash(self) -> str:
        """Hash of the normalized lesson text (exact-duplicate detection ignores ids and case)."""
        return short_hash(
            normalize_text(self.title),
            normalize_text(self.description),
            normalize_text(self.content),
            length=32,
        )

    def text(self) -> str:
        """The lesson as plain text (redaction and confidence look at this)."""
        return f"{self.title}\n{self.description}\n{self.content}"


class MemoryRecord(BaseModel):
    """One finished target trajectory and the items distilled from it."""

    model_config = ConfigDict(extra="ignore")

    memory_id: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    task_type: str = Field(min_length=1)
    query: str
    trajectory: str = ""
    is_success: bool
    kind: RecordKind
    memory_items: list[MemoryItem] = Field(min_length=1, max_length=MAX_ITEMS)
    created_at: float = Field(default_factory=time.time)
    run_id: str = ""
    confidence: float = 0.0
    tags: list[str] = Field(default_factory=list)

    def indexed_items(self) -> list[MemoryItem]:
        """Items that are searchable in their own right (not merged into an older one)."""
        return [item for item in self.memory_items if item.item_id and not item.merged_into]


def record_id_for(decision_id: str) -> str:
    """The record id a decision writes: the same decision always writes the same record."""
    return f"rec-{short_hash(decision_id, 'record', length=12)}"


def item_id_for(memory_id: str, index: int, salt: int = 0) -> str:
    """A deterministic item id; ``salt`` resolves the rare collision."""
    return "MEM-" + short_hash(memory_id, str(index), str(salt), length=8)


def item_key_text(query: str, item: MemoryItem) -> str:
    """What gets embedded for an item: the source target's description, then the lesson."""
    return f"{query}\n{item.title}: {item.description}\n{item.content}"


class Outcome(BaseModel):
    """A finished target, from measured facts only (build, fuzz run, coverage, crash verdict)."""

    model_config = ConfigDict(frozen=True)

    task_id: str = Field(min_length=1)
    run_id: str = ""
    attempt: int = Field(default=0, ge=0)
    compiles: bool
    runs: bool
    crashed: bool = False
    crashed_real: bool = False
    lines_percent: float = Field(default=0.0, ge=0.0, le=100.0)
    branches_percent: float = Field(default=0.0, ge=0.0, le=100.0)
    fix_rounds: int = Field(default=0, ge=0)
    dropped: int = Field(default=0, ge=0)  # improvements (or their blocks) dropped: they broke the harness
    model_calls: int = Field(default=0, ge=0)
    iterations: int = Field(default=0, ge=0)
    harness_versions: int = Field(default=0, ge=0)
    termination_reason: str = ""

    def decision_id(self) -> str:
        """Idempotency key of this outcome's memory writes (a resumed run repeats it exactly)."""
        return short_hash(self.run_id, self.task_id, str(self.attempt), length=20)

    def summary(self) -> str:
        """One line of the measured facts."""
        yes = lambda b: "yes" if b else "no"  # noqa: E731
        crash = "real bug" if self.crashed_real else ("harness misuse" if self.crashed else "none")
        return (
            f"compiles: {yes(self.compiles)}; runs: {yes(self.runs)}; crash: {crash}; "
            f"line coverage: {self.lines_percent:.1f}%; branch coverage: "
            f"{self.branches_percent:.1f}%; fix rounds: {self.fix_rounds}; iterations: "
            f"{self.iterations}; model calls: {self.model_calls}"
        )


@dataclass(frozen=True)
class ItemStats:
    """Lifecycle statistics of one item (SQLite)."""

    item_id: str
    status: str = "active"
    validation_level: int = 0
    trust: float = 0.5
    consecutive_fail: float = 0.0
    hit_count: int = 0
    use_count: int = 0
    pass_count: int = 0
    partial_count: int = 0
    fail_count: int = 0
    support: int = 1
    created_at: float = 0.0
    last_pass_at: float = 0.0


@dataclass(frozen=True)
class HitRef:
    """An item that was shown to the model, used by it, or both."""

    item_id: str
    shown: bool
    used: bool


@dataclass(frozen=True)
class ValidationPlan:
    """How one shown or used item fared in this run."""

    item_id: str
    result: ValidationResult
    used: bool
    strong_signal: bool
    notes: str


@dataclass
class GatekeeperDecision:
    """Everything the post-run step writes, and why anything was not written."""

    decision_id: str
    task_id: str
    is_success: bool
    hit_refs: list[HitRef] = field(default_factory=list)
    validations: list[ValidationPlan] = field(default_factory=list)
    should_extract: bool = False
    skip_reasons: list[str] = field(default_factory=list)
    candidate: MemoryRecord | None = None
    confidence: float = 0.0
    redactions: list[str] = field(default_factory=list)
    top1_score: float = 0.0
    has_strong: bool = False

    def to_dict(self) -> dict[str, Any]:
        """Plain data for events and tests."""
        out = {k: v for k, v in asdict(self).items() if k != "candidate"}
        out["candidate"] = self.candidate.model_dump() if self.candidate else None
        return out
