"""The long-term knowledge files and the plain data models they load into.

Layout of a knowledge directory (files are reviewed by humans and shipped with the code)::

    archetypes/<id>.md        YAML front matter (id, title, signals, examples) + Markdown sections
    skeletons/<id>.c          one C harness skeleton per archetype
    pitfalls/<category>.yaml  {category, pitfalls: [{id, title, archetypes, description, fix}]}
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

DEFAULT_KNOWLEDGE_DIR = Path(__file__).resolve().parent / "knowledge"
PITFALL_CATEGORIES = ("initialization", "data_arguments", "call_sequence", "resource_management")
KnowledgeKind = Literal["archetype", "pitfall", "skeleton"]


class UnknownArchetypeError(KeyError):
    """An archetype id that the knowledge does not define."""

    def __init__(self, archetype_id: str, valid: Iterable[str]) -> None:
        self.archetype_id = archetype_id
        self.valid = sorted(valid)
        valid_ids = ", ".join(self.valid)
        super().__init__(f"Unknown archetype {archetype_id!r}; valid ids: {valid_ids}.")

    def __str__(self) -> str:
        return str(self.args[0])


class MissingSkeletonError(KeyError):
    """An archetype whose skeleton file does not exist."""

    def __init__(self, archetype_id: str, path: Path) -> None:
        self.archetype_id = archetype_id
        self.path = path
        super().__init__(
            f"No skeleton for archetype {archetype_id!r}: expected the file {path}; "
            "add it (one C skeleton per archetype) or check the knowledge directory."
        )

    def __str__(self) -> str:
        return str(self.args[0])


class KnowledgeFormatError(ValueError):
    """A knowledge file that cannot be parsed or refers to something undefined."""


class Archetype(BaseModel):
    """One API archetype: how to recognize it and how to write a harness for it."""

    model_config = ConfigDict(frozen=True)

    id: str
    title: str
    signals: list[str]
    examples: list[str]
    text: str
    sections: dict[str, str]


class Pitfall(BaseModel):
    """One common harness mistake, its fix, and the archetypes it applies to (or ``all``)."""

    model_config = ConfigDict(frozen=True)

    id: str
    category: str
    title: str
    description: str
    fix: str
    archetypes: list[str]

    def applies_to(self, archetype_id: str) -> bool:
        """Whether this pitfall concerns ``archetype_id``."""
        return "all" in self.archetypes or archetype_id in self.archetypes


class ArchetypeBundle(BaseModel):
    """What a prompt needs about one archetype: its description, skeleton and pitfalls."""

    model_config = ConfigDict(frozen=True)

    archetype: Archetype
    skeleton: str
    pitfalls: list[Pitfall]


class KnowledgeHit(BaseModel):
    """One semantic search result; ``score`` is the cosine similarity."""

    model_config = ConfigDict(frozen=True)

    kind: KnowledgeKind
    id: str
    title: str
    score: float
    snippet: str


def _yaml(path: Path, text: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise KnowledgeFormatError(f"{path}: invalid YAML: {exc}") from exc


def _split_front_matter(path: Path) -> tuple[dict[str, Any], str]:
    raw = path.read_text(encoding="utf-8")
    if not raw.startswith("---\n") or "\n---\n" not in raw[3:]:
        raise KnowledgeFormatError(f"{path}: expected YAML front matter between '---' lines.")
    head, body = raw[4:].split("\n---\n", 1)
    meta = _yaml(path, head)
    if not isinstance(meta, dict):
        raise KnowledgeFormatError(f"{path}: the front matter is not a YAML mapping.")
    return meta, body.strip() + "\n"


def _sections(body: str) -> dict[str, str]:
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in body.splitlines():
        if line.startswith("## "):
            current = sections.setdefault(line[3:].strip(), [])
        elif current is not None:
            current.append(line)
    return {name: "\n".join(lines).strip() for name, lines in sections.items()}


def load_archetype(path: Path) -> Archetype:
    """Parse one ``archetypes/<id>.md`` file."""
    meta, body = _split_front_matter(path)
    if meta.get("id") != path.stem:
        raise KnowledgeFormatError(f"{path}: front matter id {meta.get('id')!r} != file name.")
    for key in ("signals", "examples"):
        if any(isinstance(item, dict) for item in meta.get(key) or []):
            raise KnowledgeFormatError(
                f"{path}: an item of {key!r} parsed as a mapping; quote it, because an "
                "unquoted ': ' inside a YAML list item starts a key."
            )
    try:
        return Archetype.model_validate({**meta, "text": body, "sections": _sections(body)})
    except ValidationError as exc:
        raise KnowledgeFormatError(f"{path}: {exc}") from exc


def load_pitfalls(path: Path) -> list[Pitfall]:
    """Parse one ``pitfalls/<category>.yaml`` file."""
    data = _yaml(path, path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("pitfalls"), list):
        raise KnowledgeFormatError(f"{path}: expected a mapping with a 'pitfalls' list.")
    if data.get("category", path.stem) != path.stem:
        raise KnowledgeFormatError(f"{path}: category {data['category']!r} != file name.")
    pitfalls = []
    for position, item in enumerate(data["pitfalls"], 1):
        if not isinstance(item, dict):
            raise KnowledgeFormatError(f"{path}: pitfall #{position} is not a mapping.")
        fields: dict[str, Any] = {
            key: value.strip() if isinstance(value, str) else value for key, value in item.items()
        }
        try:
            pitfalls.append(Pitfall.model_validate({**fields, "category": path.stem}))
        except ValidationError as exc:
            raise KnowledgeFormatError(f"{path}: pitfall #{position}: {exc}") from exc
    return pitfalls


@dataclass(frozen=True)
class Knowledge:
    """Everything in one knowledge directory, validated."""

    directory: Path
    archetypes: dict[str, Archetype]
    pitfalls: list[Pitfall]
    skeletons: dict[str, str]

    def skeleton_path(self, archetype_id: str) -> Path:
        """Where the skeleton of ``archetype_id`` lives (whether or not it exists)."""
        return skeleton_path(self.directory, archetype_id)


def skeleton_path(directory: Path, archetype_id: str) -> Path:
    """The skeleton file of ``archetype_id`` under the knowledge ``directory``."""
    return directory / "skeletons" / f"{archetype_id}.c"


def load_knowledge(directory: Path) -> Knowledge:
    """Load and cross-check a knowledge directory; missing skeletons are allowed here.

    Raises:
        KnowledgeFormatError: a file is missing or malformed, a pitfall id repeats, or a
            pitfall names an archetype that does not exist.
    """
    folder = directory / "archetypes"
    files = sorted(folder.glob("*.md"))
    if not files:
        raise KnowledgeFormatError(
            f"No archetype files (*.md) in {folder}: pass the directory that holds archetypes/, "
            "pitfalls/ and skeletons/, or None for the knowledge shipped with the package."
        )
    archetypes = {path.stem: load_archetype(path) for path in files}
    pitfalls: list[Pitfall] = []
    for category in PITFALL_CATEGORIES:
        path = directory / "pitfalls" / f"{category}.yaml"
        if not path.is_file():
            raise KnowledgeFormatError(f"Missing pitfall file {path}.")
        pitfalls.extend(load_pitfalls(path))
    seen: set[str] = set()
    for pitfall in pitfalls:
        unknown = set(pitfall.archetypes) - set(archetypes) - {"all"}
        if unknown or pitfall.id in seen:
            problem = f"unknown archetypes {sorted(unknown)}" if unknown else "a duplicate id"
            raise KnowledgeFormatError(f"Pitfall {pitfall.id!r} has {problem}.")
        seen.add(pitfall.id)
    skeletons = {
        aid: path.read_text(encoding="utf-8")
        for aid in archetypes
        if (path := skeleton_path(directory, aid)).is_file()
    }
    return Knowledge(directory, archetypes, pitfalls, skeletons)
