"""Inspecting and maintaining a bank: lookups, statistics, export, prune (the CLI's back end)."""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from long_term_memory.embeddings import Embedder
from long_term_memory.experience.bank import ExperienceBank
from long_term_memory.experience.catalog import BankPaths, ItemEntry, catalog_update
from long_term_memory.experience.config import ExperienceConfig
from long_term_memory.experience.embedder import DeferredEmbedder, resolve_embedder
from long_term_memory.experience.models import ItemStats
from long_term_memory.experience.rules import BLOCKED, freshness
from long_term_memory.experience.vector_file import VectorFile, VectorMeta


class BankNotFoundError(FileNotFoundError):
    """There is no bank where one was expected."""


def embedder_for(paths: BankPaths, model: str) -> Embedder:
    """The configured model, loaded lazily when the stored vectors were made with it."""
    meta = VectorFile(paths.vectors, paths.meta).read_meta()
    if meta is not None and meta.model == model:
        return DeferredEmbedder(model, meta.dim)
    return resolve_embedder(model)


def open_existing(
    task: str, directory: Path, config: ExperienceConfig, read_only: bool = True
) -> ExperienceBank:
    """Open a bank that must already exist.

    Raises:
        BankNotFoundError: no ``<task>.jsonl`` in ``directory``.
    """
    paths = BankPaths(directory, task)
    if not paths.jsonl.exists():
        raise BankNotFoundError(
            f"no experience bank {task!r} in {directory} (no {paths.jsonl.name}); a run in "
            "retrieve-extract mode creates it, or pass --dir/--task to point at another one"
        )
    return ExperienceBank.open(
        task, directory, config, embedder_for(paths, config.embedding.model), read_only=read_only
    )


def repair(task: str, directory: Path, config: ExperienceConfig) -> ExperienceBank:
    """Open a bank for writing, reading every file in full and healing what is damaged.

    Corrupt record lines are quarantined, a damaged lifecycle store is moved aside and rebuilt
    (from the journal when there is one, else with default statistics), bad vectors are embedded
    again; :attr:`ExperienceBank.notices` lists what was done.

    Raises:
        BankNotFoundError: no ``<task>.jsonl`` in ``directory``.
    """
    paths = BankPaths(directory, task)
    if not paths.jsonl.exists():
        raise BankNotFoundError(
            f"no experience bank {task!r} in {directory} (no {paths.jsonl.name}); pass --dir/--task "
            "to point at the bank to repair"
        )
    return ExperienceBank.open(task, directory, config, resolve_embedder(config.embedding.model),
                               repair=True)


def find(bank: ExperienceBank, ident: str) -> tuple[str, str]:
    """``("item", id)`` or ``("record", id)`` for an item id, record id or unique prefix.

    Raises:
        KeyError: nothing, or more than one thing, matches; the message lists candidates.
    """
    wanted = ident.strip()
    if wanted.lower().startswith("mem-") or len(wanted) == 8:
        suffix = wanted[-8:].lower() if len(wanted) >= 8 else wanted.lower().removeprefix("mem-")
        items = [
            e.item_id
            for e in bank.entries()
            if e.item_id.lower().endswith(suffix) or e.item_id.lower().startswith(wanted.lower())
        ]
        if len(items) == 1:
            return "item", items[0]
        if len(items) > 1:
            raise KeyError(f"{ident!r} matches several items: {', '.join(items[:8])}")
    records = [r["memory_id"] for r in bank.records() if str(r.get("memory_id", "")).startswith(wanted)]
    if len(records) == 1:
        return "record", records[0]
    if len(records) > 1:
        raise KeyError(f"{ident!r} matches several records: {', '.join(records[:8])}")
    raise KeyError(
        f"no item or record {ident!r} in bank {bank.paths.task}; `logicfuzz memory list` shows the ids"
    )


def item_view(bank: ExperienceBank, item_id: str) -> dict[str, Any]:
    """An item with its record, lifecycle stats and history."""
    entry = next(e for e in bank.entries() if e.item_id == item_id)
    stats = bank.stats([item_id])[item_id]
    return {
        "item": asdict(entry),
        "stats": asdict(stats),
        "freshness": round(freshness(stats, time.time(), bank.config.gatekeeper), 4),
        "record": bank.record(entry.memory_id),
        "history": bank.history(item_id),
    }


def rows(
    bank: ExperienceBank,
    sort: str = "recent",
    status: str | None = None,
) -> list[tuple[ItemEntry, ItemStats]]:
    """Items with their stats, sorted (recent, trust, level, hits, uses) and filtered by status."""
    stats = bank.all_stats()
    out = [
        (e, stats[e.item_id]) for e in bank.entries() if status is None or stats[e.item_id].status == status
    ]
    keys = {
        "recent": lambda r: -r[0].created_at,
        "trust": lambda r: (-r[1].trust, -r[1].validation_level),
        "level": lambda r: (-r[1].validation_level, -r[1].trust),
        "hits": lambda r: -r[1].hit_count,
        "uses": lambda r: -r[1].use_count,
    }
    if sort not in keys:
        raise ValueError(f"sort must be one of {', '.join(keys)}, got {sort!r}")
    return sorted(out, key=keys[sort])


def summary(bank: ExperienceBank) -> dict[str, Any]:
    """Counts for ``memory stats``."""
    records = list(bank.records())
    stats = bank.all_stats()
    kinds = Counter(str(r.get("kind", "?")) for r in records)
    merged = sum(1 for r in records for i in r.get("memory_items") or [] if i.get("merged_into"))
    trust = [s.trust for s in stats.values()]
    view = bank.view
    files = {
        p.name: p.stat().st_size
        for p in sorted(bank.paths.directory.glob(f"{bank.paths.task}.*"))
        if p.is_file()
    }
    return {
        "task": bank.paths.task,
        "directory": str(bank.paths.directory),
        "records": len(records),
        "items": bank.size,
        "merged_items": merged,
        "kinds": dict(kinds),
        "statuses": dict(Counter(s.status for s in stats.values())),
        "levels": {str(k): v for k, v in sorted(Counter(s.validation_level for s in stats.values()).items())},
        "trust_mean": round(sum(trust) / len(trust), 4) if trust else None,
        "lifecycle": bank.lifecycle_counts(),
        "model": view.meta.model if view.meta else bank.embedder.name,
        "dim": bank.embedder.dim,
        "index": view.index.mode if view.index else "exact",
        "files": files,
    }


def export_records(bank: ExperienceBank) -> Iterator[dict[str, Any]]:
    """Every record, each item carrying its lifecycle stats."""
    stats = bank.all_stats()
    for record in bank.records():
        items = []
        for item in record.get("memory_items") or []:
            st = stats.get(item.get("item_id", ""))
            items.append({**item, "lifecycle": asdict(st) if st else None})
        yield {**record, "memory_items": items}


@dataclass
class PruneCriteria:
    """Which items ``prune`` removes (an item goes when any criterion holds)."""

    blocked: bool = False
    min_trust: float | None = None
    older_than_days: float | None = None

    def any(self) -> bool:
        """True when at least one criterion is set."""
        return self.blocked or self.min_trust is not None or self.older_than_days is not None


@dataclass
class PruneReport:
    """What prune removed (or would remove, on a dry run)."""

    removed: list[dict[str, str]] = field(default_factory=list)
    records_dropped: int = 0
    kept: int = 0
    dry_run: bool = False


def _reason(entry: ItemEntry, stats: ItemStats, criteria: PruneCriteria, now: float) -> str:
    if criteria.blocked and stats.status == BLOCKED:
        return f"blocked (consecutive_fail {stats.consecutive_fail:g})"
    if criteria.min_trust is not None and stats.trust < criteria.min_trust:
        return f"trust {stats.trust:.2f} < {criteria.min_trust}"
    if criteria.older_than_days is not None:
        age = (now - max(entry.created_at, stats.last_pass_at)) / 86400
        if age > criteria.older_than_days:
            return f"not created or passed for {age:.0f} days"
    return ""


def prune(bank: ExperienceBank, criteria: PruneCriteria, dry_run: bool = False) -> PruneReport:
    """Remove matching items from every bank file (atomically per file, under the lock).

    Raises:
        ValueError: no criterion given.
    """
    if not criteria.any():
        raise ValueError("prune needs a criterion: --blocked, --min-trust or --older-than")
    report = PruneReport(dry_run=dry_run)

    def plan() -> set[str]:
        now = time.time()
        stats = bank.all_stats()
        report.removed = [
            {"item_id": e.item_id, "title": e.title, "reason": why}
            for e in bank.entries()
            if (why := _reason(e, stats[e.item_id], criteria, now))
        ]
        report.kept = bank.size - len(report.removed)
        return {r["item_id"] for r in report.removed}

    if dry_run:
        plan()
        return report
    with bank.write_lock():
        gone = plan()
        if not gone:
            return report
        view = bank.view
        kept_records = []
        for record in bank.records():
            items = [
                i
                for i in record.get("memory_items") or []
                if i.get("item_id") not in gone and i.get("merged_into") not in gone
            ]
            if items:
                kept_records.append({**record, "memory_items": items})
            else:
                report.records_dropped += 1
        keep = [i for i in view.ids if i not in gone]
        vectors = view.index.vectors()[[view.row_of[i] for i in keep]]
        bank.lifecycle.delete(sorted(gone))
        view.log.rewrite(kept_records)
        meta = VectorMeta(
            model=bank.embedder.name,
            dim=bank.embedder.dim,
            item_ids=keep,
            jsonl_offset=view.log.size(),
            generation=uuid.uuid4().hex,
        )
        bank.lifecycle.update_catalog(
            catalog_update(view.log.read_from(0).records, (meta.generation, meta.jsonl_offset), full=True)
        )
        view.vector_file.rewrite(meta, vectors)
        bank.reload()
    return report


def dumps(value: Any) -> str:
    """One JSON line."""
    return json.dumps(value, ensure_ascii=False, default=str)
