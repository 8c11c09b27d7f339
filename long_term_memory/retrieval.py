"""KnowledgeRetriever: the long-term knowledge by id and by meaning.

Text files load when a :class:`KnowledgeRetriever` is built (see
:mod:`long_term_memory.knowledge_files` for the layout); the embedding model and the FAISS
index load on the first semantic search. Graph state holds a :class:`RetrieverHandle` (plain
data) and turns it into the process-cached retriever with :func:`get_retriever`.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from fuzzkit.paths import cache_dir
from long_term_memory.embeddings import DEFAULT_EMBEDDING_MODEL, Embedder, get_embedder
from long_term_memory.knowledge_files import (
    DEFAULT_KNOWLEDGE_DIR,
    PITFALL_CATEGORIES,
    Archetype,
    ArchetypeBundle,
    KnowledgeFormatError,
    KnowledgeHit,
    KnowledgeKind,
    MissingSkeletonError,
    Pitfall,
    UnknownArchetypeError,
    load_knowledge,
)
from long_term_memory.vector_index import EmbeddingCache, VectorIndex, embed_with_cache

__all__ = [
    "PITFALL_CATEGORIES",
    "Archetype",
    "ArchetypeBundle",
    "KnowledgeFormatError",
    "KnowledgeHit",
    "KnowledgeRetriever",
    "MissingSkeletonError",
    "Pitfall",
    "RetrieverHandle",
    "UnknownArchetypeError",
    "get_retriever",
]

KINDS: frozenset[str] = frozenset({"archetype", "pitfall", "skeleton"})
_SNIPPET_CHARS = 240


class RetrieverHandle(BaseModel):
    """The serializable stand-in for a retriever that graph state holds (as ``model_dump()``).

    ``knowledge_dir=None`` means the packaged knowledge. Equal handles resolve to the same
    process-cached :class:`KnowledgeRetriever` through :func:`get_retriever`.
    """

    model_config = ConfigDict(frozen=True)

    knowledge_dir: str | None = None
    embedding_model: str = DEFAULT_EMBEDDING_MODEL


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _SNIPPET_CHARS else flat[: _SNIPPET_CHARS - 3].rstrip() + "..."


Chunk = tuple[KnowledgeKind, str, str, str]  # kind, id, title, text to embed


class KnowledgeRetriever:
    """Read access to the long-term knowledge, by id and by meaning. Safe to share by threads."""

    def __init__(
        self,
        knowledge_dir: Path | None = None,
        embedder: Embedder | None = None,
        *,
        embedding_model: str = DEFAULT_EMBEDDING_MODEL,
        cache_dir: Path | None = None,
    ) -> None:
        """Load the knowledge files from ``knowledge_dir`` (default: the packaged knowledge).

        Args:
            knowledge_dir: the directory holding ``archetypes/``, ``skeletons/``, ``pitfalls/``.
            embedder: the embedder for semantic search; without one, ``embedding_model`` is
                loaded on the first search.
            embedding_model: model name used when no ``embedder`` is given.
            cache_dir: where embeddings are cached; default
                ``fuzzkit.paths.cache_dir() / "knowledge_index"``.

        Raises:
            KnowledgeFormatError: a knowledge file is malformed or refers to an unknown id.
        """
        self._knowledge = load_knowledge(Path(knowledge_dir or DEFAULT_KNOWLEDGE_DIR).resolve())
        self.knowledge_dir = self._knowledge.directory
        self.embedding_model = embedder.name if embedder is not None else embedding_model
        self._embedder = embedder
        self._cache_dir = cache_dir
        self._lock = threading.Lock()
        self._index: VectorIndex | None = None
        self._chunks: list[Chunk] = []
        self.encoded_on_load = 0
        """How many chunks the first search had to embed (0 when the disk cache matched)."""

    def handle(self) -> RetrieverHandle:
        """The serializable handle that :func:`get_retriever` resolves to this configuration."""
        packaged = self.knowledge_dir == DEFAULT_KNOWLEDGE_DIR
        directory = None if packaged else str(self.knowledge_dir)
        return RetrieverHandle(knowledge_dir=directory, embedding_model=self.embedding_model)

    def list_archetypes(self) -> list[str]:
        """All archetype ids, sorted."""
        return sorted(self._knowledge.archetypes)

    def get_archetype(self, archetype_id: str) -> Archetype:
        """The archetype ``archetype_id``.

        Raises:
            UnknownArchetypeError: no such archetype (the message lists the valid ids).
        """
        try:
            return self._knowledge.archetypes[archetype_id]
        except KeyError:
            raise UnknownArchetypeError(archetype_id, self._knowledge.archetypes) from None

    def skeleton_path(self, archetype_id: str) -> Path:
        """Where the skeleton of ``archetype_id`` lives (whether or not it exists)."""
        return self._knowledge.skeleton_path(archetype_id)

    def get_skeleton(self, archetype_id: str) -> str:
        """The C skeleton source of ``archetype_id``.

        Raises:
            UnknownArchetypeError: no such archetype.
            MissingSkeletonError: the archetype exists but its skeleton file does not.
        """
        self.get_archetype(archetype_id)
        try:
            return self._knowledge.skeletons[archetype_id]
        except KeyError:
            raise MissingSkeletonError(archetype_id, self.skeleton_path(archetype_id)) from None

    def get_pitfalls_for_archetype(self, archetype_id: str) -> list[Pitfall]:
        """Pitfalls that apply to ``archetype_id``, by category in :data:`PITFALL_CATEGORIES`.

        Raises:
            UnknownArchetypeError: no such archetype.
        """
        self.get_archetype(archetype_id)
        return [p for p in self._knowledge.pitfalls if p.applies_to(archetype_id)]

    def list_pitfalls(self, category: str | None = None) -> list[Pitfall]:
        """All pitfalls, or those of one category."""
        return [p for p in self._knowledge.pitfalls if category in (None, p.category)]

    def get_archetype_bundle(self, archetype_id: str) -> ArchetypeBundle:
        """Archetype, skeleton and pitfalls together (raises like the single getters)."""
        return ArchetypeBundle(
            archetype=self.get_archetype(archetype_id),
            skeleton=self.get_skeleton(archetype_id),
            pitfalls=self.get_pitfalls_for_archetype(archetype_id),
        )

    def _build_chunks(self) -> list[Chunk]:
        """One chunk per archetype, pitfall and skeleton, in a fixed order."""
        chunks: list[Chunk] = []
        archetypes = self._knowledge.archetypes
        for aid, arch in sorted(archetypes.items()):
            # MiniLM reads about 256 word pieces: lead with the most telling text.
            parts = [
                arch.title,
                "Signals: " + "; ".join(arch.signals),
                "Examples: " + ", ".join(arch.examples),
                arch.sections.get("Description", ""),
            ]
            chunks.append(("archetype", aid, arch.title, "\n".join(parts)))
        for pit in self._knowledge.pitfalls:
            text = f"{pit.title}\n{pit.description}\nFix: {pit.fix}"
            chunks.append(("pitfall", pit.id, pit.title, text))
        for aid, source in sorted(self._knowledge.skeletons.items()):
            title = f"C harness skeleton for {archetypes[aid].title}"
            chunks.append(("skeleton", aid, title, f"{title}\n{source}"))
        return chunks

    def _cache(self) -> EmbeddingCache:
        root = self._cache_dir
        if root is None:
            root = cache_dir() / "knowledge_index"
        # One slot per (model, knowledge dir): switching between them never thrashes the cache.
        slug = "".join(c if c.isalnum() or c in "-_." else "_" for c in self.embedding_model)
        where = hashlib.sha256(str(self.knowledge_dir).encode()).hexdigest()[:12]
        return EmbeddingCache(root / f"{slug[-60:]}-{where}")

    def _ensure_index(self) -> tuple[VectorIndex, Embedder]:
        with self._lock:
            if self._embedder is None:
                self._embedder = get_embedder(self.embedding_model)
            if self._index is None:
                chunks = self._build_chunks()
                keys = [f"{kind}:{cid}" for kind, cid, _, _ in chunks]
                texts = [text for _, _, _, text in chunks]
                vectors, self.encoded_on_load = embed_with_cache(keys, texts, self._embedder, self._cache())
                self._chunks = chunks
                self._index = VectorIndex(vectors)
            return self._index, self._embedder

    def search(self, query: str, k: int = 5, kinds: set[str] | None = None) -> list[KnowledgeHit]:
        """The ``k`` knowledge chunks closest in meaning to ``query``, best first.

        Args:
            query: free text: a signature, an error message, a question.
            k: how many hits to return at most.
            kinds: restrict to some of ``archetype``, ``pitfall``, ``skeleton``.

        Raises:
            ValueError: ``kinds`` names something else.
            EmbeddingModelError: the embedding model cannot be loaded.
        """
        if kinds is not None and not set(kinds) <= KINDS:
            raise ValueError(f"Unknown kinds {sorted(set(kinds) - KINDS)}; use {sorted(KINDS)}.")
        if k <= 0 or not query.strip():
            return []
        index, embedder = self._ensure_index()
        hits: list[KnowledgeHit] = []
        # The index is tiny (about a hundred rows): rank everything, then filter by kind.
        for row, score in index.search(embedder.encode([query])[0], index.size):
            kind, cid, title, text = self._chunks[row]
            if kinds is not None and kind not in kinds:
                continue
            body = text.split("\n", 1)[-1]
            if kind == "archetype":
                body = self._knowledge.archetypes[cid].sections.get("Description", body)
            hits.append(KnowledgeHit(kind=kind, id=cid, title=title, score=score, snippet=_snippet(body)))
            if len(hits) == k:
                break
        return hits

    def suggest_archetypes(self, signature_text: str, k: int = 3) -> list[tuple[str, float]]:
        """The ``k`` archetypes that best match a signature or API summary, with scores."""
        return [(hit.id, hit.score) for hit in self.search(signature_text, k, {"archetype"})]


_retrievers: dict[tuple[str, str], KnowledgeRetriever] = {}
_retrievers_lock = threading.Lock()


def get_retriever(handle: RetrieverHandle | Mapping[str, Any]) -> KnowledgeRetriever:
    """The process-wide retriever for ``handle``; equal handles give the same instance.

    Args:
        handle: a :class:`RetrieverHandle` or its ``model_dump()`` (as graph state holds it).

    Raises:
        pydantic.ValidationError: the mapping is not a handle.
        KnowledgeFormatError: the handle's knowledge directory is missing or malformed.
    """
    if not isinstance(handle, RetrieverHandle):
        handle = RetrieverHandle.model_validate(dict(handle))
    directory = Path(handle.knowledge_dir or DEFAULT_KNOWLEDGE_DIR).resolve()
    key = (str(directory), handle.embedding_model)
    with _retrievers_lock:
        retriever = _retrievers.get(key)
        if retriever is None:
            retriever = KnowledgeRetriever(directory, embedding_model=handle.embedding_model)
            _retrievers[key] = retriever
        return retriever
