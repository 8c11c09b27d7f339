"""What a bank knows about its items without their text: paths, item entries, catalog rows."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from long_term_memory.experience.lessons import lesson_fields
from long_term_memory.experience.lifecycle_rows import CatalogUpdate, NewItem
from long_term_memory.experience.models import normalize_text, short_hash


@dataclass(slots=True)
class ItemEntry:
    """One searchable item with its record's context."""

    item_id: str
    memory_id: str
    task_id: str
    title: str
    description: str
    content: str
    is_success: bool
    query: str
    created_at: float
    digest: str
    lesson: dict[str, Any] = field(default_factory=dict)


@dataclass
class BankPaths:
    """The files of one bank, all named after its task."""

    directory: Path
    task: str

    def file(self, suffix: str) -> Path:
        """``<directory>/<task><suffix>``."""
        return self.directory / f"{self.task}{suffix}"

    @property
    def jsonl(self) -> Path:
        """The records."""
        return self.file(".jsonl")

    @property
    def vectors(self) -> Path:
        """The item vectors."""
        return self.file(".embeddings.npy")

    @property
    def meta(self) -> Path:
        """Model, dimension and row order of the vectors."""
        return self.file(".meta.json")

    @property
    def lifecycle(self) -> Path:
        """Lifecycle statistics and the catalog (SQLite)."""
        return self.file(".lifecycle.sqlite")

    @property
    def lock(self) -> Path:
        """The writers' lock file."""
        return self.file(".lock")

    @property
    def journal(self) -> Path:
        """The lifecycle journal (every lifecycle write, to rebuild the SQLite store from)."""
        return self.file(".lifecycle.jsonl")

    @property
    def quarantine(self) -> Path:
        """Lines taken out of the records, kept byte for byte."""
        return self.file(".quarantine.jsonl")


def item_digest(title: str, description: str, content: str) -> str:
    """Hash of an item's normalized text (the same as ``MemoryItem.content_hash``)."""
    return short_hash(normalize_text(title), normalize_text(description), normalize_text(content), length=32)


class Found(NamedTuple):
    """An indexed item met while reading records (its text is kept only until embedded)."""

    item_id: str
    task_id: str
    offset: int
    digest: str
    record: dict[str, Any]
    item: dict[str, Any]

    def key_text(self) -> str:
        """The text embedded for this item (see ``models.item_key_text``)."""
        return (
            f"{self.record['query']}\n{self.item['title']}: {self.item['description']}\n"
            f"{self.item['content']}"
        )


def entry_from(record: dict[str, Any], item: dict[str, Any]) -> ItemEntry:
    """The :class:`ItemEntry` of one stored item."""
    return ItemEntry(
        item["item_id"],
        record["memory_id"],
        record["task_id"],
        item["title"],
        item["description"],
        item["content"],
        bool(record["is_success"]),
        record["query"],
        float(record.get("created_at") or 0.0),
        item.get("digest") or item_digest(item["title"], item["description"], item["content"]),
        lesson_fields(item),
    )


def record_problem(start: int, record: dict[str, Any]) -> str:
    """Why a stored record cannot be used ('' when it can)."""
    try:
        found_in(start, record)
    except ValueError as exc:
        return str(exc)
    return "" if isinstance(record.get("memory_items"), list) else "memory_items is not a list"


def found_in(start: int, record: dict[str, Any]) -> list[Found]:
    """The indexed items of a stored record (merged-away items are not indexed).

    Raises:
        ValueError: the record lacks a required field.
    """
    try:
        task_id, out = record["task_id"], []
        if not isinstance(record["memory_id"], str) or not isinstance(task_id, str):
            raise TypeError("memory_id and task_id must be strings")
        str(record["query"]), bool(record["is_success"]), float(record.get("created_at") or 0.0)
        for item in record["memory_items"]:
            if not isinstance(item, dict):
                raise TypeError("an item is not an object")
            if not item.get("item_id") or item.get("merged_into"):
                continue
            if not all(isinstance(item[k], str) for k in ("item_id", "title", "description", "content")):
                raise TypeError("item_id, title, description and content must be strings")
            digest = item.get("digest") or item_digest(item["title"], item["description"], item["content"])
            out.append(Found(item["item_id"], task_id, start, digest, record, item))
        return out
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise ValueError(f"record {record.get('memory_id')!r} is malformed: {exc!r}") from exc


def catalog_update(
    records: list[tuple[int, dict[str, Any]]],
    state: tuple[Any, ...] | None,
    full: bool = False,
    line_crc: dict[int, tuple[int, int]] | None = None,
) -> CatalogUpdate:
    """The catalog and lifecycle rows a set of stored records implies.

    ``line_crc`` (record offset to line length and CRC-32) adds the per-record checksums.
    """
    update = CatalogUpdate(state=state, full=full)
    line_crc = line_crc or {}
    for start, record in records:
        memory_id, task_id = record.get("memory_id"), record.get("task_id")
        if not isinstance(memory_id, str) or not isinstance(task_id, str):
            continue
        update.records.append((memory_id, task_id, start, *line_crc.get(start, (-1, None))))
        created = float(record.get("created_at") or 0.0)
        for position, item in enumerate(record.get("memory_items") or []):
            if not isinstance(item, dict):
                continue
            if item.get("merged_into"):
                update.merges.append((memory_id, position, item["merged_into"], task_id))
            elif item.get("item_id"):
                digest = item.get("digest") or item_digest(
                    str(item.get("title", "")), str(item.get("description", "")), str(item.get("content", ""))
                )
                update.items.append(NewItem(item["item_id"], memory_id, task_id, created, digest, start))
    return update
