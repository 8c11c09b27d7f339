"""The bug list of ``bench/bugbench.py``: Debian fixes of known bugs, each a package and a patch.

A bugs file is YAML with two lists of the same entries: ``bugs`` (measured) and ``untriggered``
(listed apart: no side was seen to trigger them; measured with ``--include-untriggered``):

    bugs:
      - id: libfoo-CVE-2024-0001            # unique; names the work folder and the table row
        source: libfoo=1.2-3+deb12u1        # a Debian source package pinned NAME=VERSION,
                                            # or {path: DIR} (relative to this file)
        patch: CVE-2024-0001.patch          # a file of debian/patches/ that fixes the bug, or a
                                            # list in Debian's order (a fix in parts; all reversed)
        functions: [foo_parse]              # optional: LogicFuzz's targets (else init-benchmark's)
        harness: harnesses/foo_parse.c      # optional: a harness of the patched function (relative
                                            # to this file), fuzzed as the side `function`
        build: {system: cmake}              # optional: the benchmark YAML's `build:` forms
        verified: true                      # false: nobody has seen a side trigger it yet
        note: heap overflow in foo_parse    # optional, one line for the reader

Every problem is reported with the entry's position and id and what to write instead.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from fuzzkit.source import SourceSpec

LISTS = ("bugs", "untriggered")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")


class BugsFileError(Exception):
    """A bugs file that cannot be used; the message says where and what to change."""


class BugEntry(BaseModel):
    """One known bug: the source that has its fix, and the fix."""

    model_config = ConfigDict(extra="forbid")

    id: str
    source: dict[str, str]
    patch: list[str]
    functions: list[str] = []
    harness: str | None = None
    build: dict[str, Any] | None = None
    verified: bool = True
    note: str = ""
    listed_in: str = "bugs"

    @field_validator("id")
    @classmethod
    def _plain_id(cls, value: str) -> str:
        if not _ID.fullmatch(value):
            raise ValueError(f"id {value!r} must be letters, digits and . _ + - (it names a folder)")
        return value

    @field_validator("patch", mode="before")
    @classmethod
    def _patch_names(cls, value: Any) -> Any:
        names = [value] if isinstance(value, str) else value
        if not isinstance(names, list) or not names:
            raise ValueError("patch must be a file name in debian/patches/ or a list of them")
        for name in names:
            # Debian's series may name a file in a subfolder (CVE-2026-0992/01-fix.patch).
            if not isinstance(name, str) or not name or name.startswith(("/", ".")) or ".." in name:
                raise ValueError(f"patch {name!r} must be a file name in debian/patches/")
        return names

    @field_validator("source", mode="before")
    @classmethod
    def _pinned_source(cls, value: Any) -> Any:
        if isinstance(value, str):
            name, eq, version = value.partition("=")
            if not eq or not name or not version:
                raise ValueError(f"source {value!r} is not pinned: write NAME=VERSION "
                                 "(see `apt-cache showsrc NAME`), or {path: DIR}")
            value = {"apt": value}
        if not isinstance(value, dict) or set(value) - {"apt", "path"}:
            raise ValueError("source must be NAME=VERSION or a mapping {path: DIR}")
        SourceSpec.model_validate(value)  # the same checks a benchmark's source gets
        return value

    @property
    def package(self) -> str:
        """The source package name (or the path's folder name)."""
        spec = SourceSpec.model_validate(self.source)
        return spec.apt or Path(str(spec.path)).name


def _entry(raw: Any, where: str, base: Path) -> BugEntry:
    if not isinstance(raw, dict):
        raise BugsFileError(f"{where}: an entry is a mapping with id, source and patch, not {raw!r}")
    try:
        entry = BugEntry.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "entry"
        name = raw.get("id", "?")
        raise BugsFileError(f"{where} (id {name}): {field}: {first['msg']}") from None
    path = entry.source.get("path")
    if path and not Path(path).is_absolute():
        entry.source = {"path": str((base / path).resolve())}
    if entry.harness:
        entry.harness = str((base / entry.harness).resolve())
        if not Path(entry.harness).is_file():
            raise BugsFileError(f"{where} (id {entry.id}): harness {entry.harness} does not exist; "
                                "give a path relative to the bugs file")
    return entry


def load_bugs(path: Path) -> list[BugEntry]:
    """Every entry of both lists, ``listed_in`` saying which.

    Raises:
        BugsFileError: Not a readable YAML mapping, an unknown key, a bad entry, a repeated id.
    """
    try:
        data = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise BugsFileError(f"{path}: cannot read it as YAML ({exc})") from None
    if not isinstance(data, dict) or not any(k in data for k in LISTS):
        raise BugsFileError(f"{path}: expected a mapping with a `bugs:` list (see bench/bugs/dev.yaml)")
    unknown = sorted(set(data) - set(LISTS))
    if unknown:
        raise BugsFileError(f"{path}: unknown key(s) {', '.join(unknown)}; the lists are {', '.join(LISTS)}")
    entries: list[BugEntry] = []
    for listed in LISTS:
        items = data.get(listed) or []
        if not isinstance(items, list):
            raise BugsFileError(f"{path}: `{listed}:` must be a list of entries")
        for i, raw in enumerate(items):
            entry = _entry(raw, f"{path}: {listed}[{i}]", Path(path).resolve().parent)
            entries.append(entry.model_copy(update={"listed_in": listed}))
    ids = [e.id for e in entries]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise BugsFileError(f"{path}: id(s) used twice: {', '.join(twice)}; give each entry its own id")
    return entries
