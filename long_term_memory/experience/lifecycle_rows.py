"""What the lifecycle store takes in and gives back: new items, catalog updates, applied changes.

Shared by the SQLite store (``lifecycle``), its PostgreSQL twin (``pg_lifecycle``), the
catalog builder (``catalog``) and the bank's writes (``writes``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from long_term_memory.experience.models import HitRef, ItemStats, ValidationPlan


@dataclasses.dataclass(frozen=True)
class NewItem:
    """What the lifecycle table needs to know about an item when it is first stored."""

    item_id: str
    memory_id: str
    task_id: str
    created_at: float
    digest: str = ""
    offset: int = -1


Merge = tuple[str, int, str, str]  # (memory_id, position in its record, merged into, task_id)


@dataclasses.dataclass
class CatalogUpdate:
    """Items, merges and records a set of JSONL lines implies, and the state they bring about.

    ``full`` means the update lists every record of the bank (after a rewrite or a repair), so
    records missing from it are forgotten and items missing from it leave the catalog (their
    statistics stay). ``records`` rows are ``(memory_id, task_id, offset[, length, crc])``;
    ``state`` is ``(generation, jsonl_offset[, jsonl_crc])``.
    """

    items: list[NewItem] = dataclasses.field(default_factory=list)
    merges: list[Merge] = dataclasses.field(default_factory=list)
    records: list[tuple[Any, ...]] = dataclasses.field(default_factory=list)
    state: tuple[Any, ...] | None = None
    full: bool = False


@dataclasses.dataclass
class Catalog:
    """What a fast open needs, as columns in table order, plus each record's offset."""

    ids: list[str]
    tasks: list[str]
    offsets: list[int]
    digests: list[str]
    records: dict[str, int]
    state: tuple[str, int] | None
    jsonl_crc: int | None = None
    record_crc: dict[str, int] = dataclasses.field(default_factory=dict)

    def columns_for(self, order: list[str]) -> tuple[list[str], list[int], list[str]] | None:
        """(tasks, offsets, digests) in ``order``; None when an id has no row."""
        if self.ids == order:  # the usual case: rows were inserted in the order of the vectors
            return self.tasks, self.offsets, self.digests
        row_of = dict(zip(self.ids, range(len(self.ids)), strict=True))
        try:
            rows = list(map(row_of.__getitem__, order))
        except KeyError:
            return None
        return ([self.tasks[r] for r in rows], [self.offsets[r] for r in rows],
                [self.digests[r] for r in rows])


def validation_change(plan: ValidationPlan, before: ItemStats, after: ItemStats) -> dict[str, Any]:
    """What one validation changed, as events and ``Applied.validations`` report it."""
    return {"item_id": plan.item_id, "result": plan.result, "used": plan.used,
            "trust": [before.trust, after.trust],
            "validation_level": [before.validation_level, after.validation_level],
            "consecutive_fail": [before.consecutive_fail, after.consecutive_fail],
            "status": [before.status, after.status], "notes": plan.notes}


@dataclasses.dataclass
class Applied:
    """What one decision changed (empty with ``replayed`` when it had been applied before)."""

    replayed: bool = False
    hits: list[HitRef] = dataclasses.field(default_factory=list)
    validations: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    unknown_items: list[str] = dataclasses.field(default_factory=list)
