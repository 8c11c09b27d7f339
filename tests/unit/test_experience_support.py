"""Helpers shared by the experience-memory tests, and the tests of the model-free embedder."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np

from long_term_memory.experience import (
    ExperienceBank,
    ExperienceConfig,
    HashingEmbedder,
    MemoryItem,
    MemoryRecord,
    Outcome,
)
from long_term_memory.experience.model_guard import PROBE_TEXT

EMBEDDER = HashingEmbedder(256)


def config(**overrides: Any) -> ExperienceConfig:
    """The packaged defaults with the hashing embedder and ``section__key`` overrides."""
    overrides.setdefault("embedding__model", EMBEDDER.name)
    return ExperienceConfig.load().with_overrides(**overrides)


def open_bank(directory: Path, read_only: bool = False, cfg: ExperienceConfig | None = None,
              embedder: Any = None) -> ExperienceBank:
    return ExperienceBank.open("fuzz-c", directory, cfg or config(), embedder or EMBEDDER,
                               read_only=read_only)


def item(title: str, content: str, description: str = "targets that parse a C string") -> MemoryItem:
    return MemoryItem(title=title, description=description, content=content)


def record(memory_id: str, task_id: str, items: list[MemoryItem], success: bool = True,
           query: str | None = None) -> MemoryRecord:
    project, function = task_id.split("/")
    return MemoryRecord(
        memory_id=memory_id, task_id=task_id, task_type="fuzz-c",
        query=query or f"project {project}; target int {function}(const char * text)",
        trajectory="- [build] v1 built", is_success=success,
        kind="success" if success else "failure", memory_items=items)


def outcome(task_id: str = "kv/kv_parse", run_id: str = "run-1", **kw: Any) -> Outcome:
    facts = {"compiles": True, "runs": True, "lines_percent": 40.0, "harness_versions": 2,
             "fix_rounds": 1, "model_calls": 4, "iterations": 1}
    facts.update(kw)
    return Outcome(task_id=task_id, run_id=run_id, **facts)


def checksums(directory: Path) -> dict[str, str]:
    """sha256 of every file of a directory (the set of names is part of the comparison)."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(directory.iterdir()) if p.is_file()}


class CountingEmbedder:
    """A real embedder that counts how many texts it encoded (no-re-encoding checks).

    The model-identity probe a writer encodes once per open (``model_guard.PROBE_TEXT``) is not
    an item and is not counted.
    """

    def __init__(self, inner: Any = EMBEDDER, name: str | None = None) -> None:
        self.inner, self.name, self.dim = inner, name or inner.name, inner.dim
        self.encoded = 0

    def encode(self, texts: list[str]) -> np.ndarray:
        self.encoded += sum(t != PROBE_TEXT for t in texts)
        return self.inner.encode(texts)


def test_hashing_embedder_is_unit_length_deterministic_and_meaningful() -> None:
    vectors = EMBEDDER.encode(["call inflateInit before inflate", "call inflateInit before inflate",
                               "inflateInit must precede inflate calls", "cJSON_Print a parsed tree", ""])
    assert vectors.shape == (5, 256) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    assert np.array_equal(vectors[0], vectors[1])
    assert float(vectors[0] @ vectors[2]) > float(vectors[0] @ vectors[3]) + 0.2
    assert np.array_equal(HashingEmbedder(256).encode(["x y"]), EMBEDDER.encode(["x y"]))
