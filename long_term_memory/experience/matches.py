"""Search results (:class:`Match`) and the part of one the Gatekeeper injects (:class:`InjectItem`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Match:
    """One search result: the item, its similarity and its lifecycle standing."""

    item_id: str
    memory_id: str
    task_id: str
    title: str
    description: str
    content: str
    score: float
    status: str
    validation_level: int
    trust: float
    freshness: float
    consecutive_fail: float
    is_success: bool
    query: str
    hit_count: int = 0
    use_count: int = 0
    blocked_runs: int = 0
    lesson: dict[str, Any] = field(default_factory=dict)

    @property
    def use_rate(self) -> float:
        """How often the item was used when shown (seed 001: ``use_count / hit_count``)."""
        return self.use_count / self.hit_count if self.hit_count > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        """Plain data (for events, results and graph state)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Match:
        """Inverse of :meth:`to_dict`."""
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


@dataclass(frozen=True)
class InjectItem:
    """An item the Gatekeeper let into a prompt."""

    item_id: str
    memory_id: str
    title: str
    description: str
    content: str
    score: float
    validation_level: int
    trust: float
    is_success: bool
    query: str
    lesson: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_match(cls, match: Match) -> InjectItem:
        """The injectable part of a match."""
        return cls(
            match.item_id,
            match.memory_id,
            match.title,
            match.description,
            match.content,
            match.score,
            match.validation_level,
            match.trust,
            match.is_success,
            match.query,
            dict(match.lesson),
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain data (graph state holds these between the prompt and the post-run step)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> InjectItem:
        """Inverse of :meth:`to_dict` (a state saved before ``lesson`` existed loads too)."""
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})
