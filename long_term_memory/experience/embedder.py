"""Which embedder a bank uses: a sentence-transformers model, or the model-free hashing one.

``hashing-<dim>`` (e.g. ``hashing-256``) is a deterministic bag-of-words feature-hashing
embedder: no model files, no torch import, a few microseconds per text. It keeps a bank usable
on a machine where the configured model cannot load, and makes multi-process tests fast. Any
other name goes to :func:`long_term_memory.embeddings.get_embedder`.
"""

from __future__ import annotations

import hashlib
import re

import numpy as np

from long_term_memory.embeddings import Embedder, get_embedder

_WORD = re.compile(r"[a-z0-9_]+")
_HASHING = re.compile(r"^hashing-(\d{1,5})$")


class HashingEmbedder:
    """Signed feature hashing of words and word bigrams, L2-normalized."""

    def __init__(self, dim: int = 256) -> None:
        """An embedder with ``dim`` dimensions (8..8192).

        Raises:
            ValueError: ``dim`` is out of range.
        """
        if not 8 <= dim <= 8192:
            raise ValueError(f"hashing embedder dimension must be 8..8192, got {dim}")
        self.dim = dim
        self.name = f"hashing-{dim}"

    def _features(self, text: str) -> list[str]:
        words = _WORD.findall(text.lower())
        return words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 rows (an empty text gives a fixed unit vector)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature in self._features(text) or ["<empty>"]:
                digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                out[row, value % self.dim] += 1.0 if (value >> 63) & 1 else -1.0
            norm = float(np.linalg.norm(out[row]))
            if norm == 0.0:
                out[row, 0] = norm = 1.0
            out[row] /= norm
        return out


def resolve_embedder(name: str) -> Embedder:
    """The embedder for a configured model name.

    Raises:
        long_term_memory.embeddings.EmbeddingModelError: a sentence-transformers model that
            cannot be loaded.
    """
    match = _HASHING.match(name)
    if match:
        return HashingEmbedder(int(match.group(1)))
    return get_embedder(name)


class DeferredEmbedder:
    """An embedder that loads its model only when something must be encoded.

    Inspecting a bank whose vectors match the configured model needs the model's name and
    dimension only; this keeps ``logicfuzz memory list`` from importing torch.
    """

    def __init__(self, name: str, dim: int) -> None:
        """Stand in for model ``name`` of dimension ``dim``."""
        self.name, self.dim = name, dim
        self._real: Embedder | None = None

    def encode(self, texts: list[str]) -> np.ndarray:
        """Load the model on first use and encode.

        Raises:
            ValueError: the loaded model's dimension differs from the promised one.
        """
        if self._real is None:
            real = resolve_embedder(self.name)
            if real.dim != self.dim:
                raise ValueError(f"model {self.name!r} has dimension {real.dim}, the bank says {self.dim}")
            self._real = real
        return self._real.encode(texts)
