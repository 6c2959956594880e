"""The int8 query encoder: built once per model folder in a child process, close to
the batch model's vectors, and a search still answers when it cannot be built."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from codesift.embedding import Embedder
from codesift.embedding.query_model import QUERY_MODEL_FILE, load_query_tokenizer

TEXTS = [
    "how does billing retry a failed charge",
    "ParseConfig",
    "func (s *Server) Handle",
    "where are expired sessions removed from the cache",
]


def test_queries_use_the_int8_encoder_close_to_the_batch_model(embedder: Embedder) -> None:
    encoder = embedder.query_encoder()
    assert encoder is not None, embedder.query_encoder_error
    built = embedder.model_dir() / QUERY_MODEL_FILE
    assert built.is_file()
    queries = np.stack([embedder.embed_query(t) for t in TEXTS])
    batch = embedder.embed(TEXTS)
    assert queries.shape == (len(TEXTS), 384) and queries.dtype == np.float32
    assert np.allclose(np.linalg.norm(queries, axis=1), 1.0, atol=1e-4)
    agreement = np.einsum("ij,ij->i", queries, batch)
    assert agreement.min() > 0.97, agreement
    # Each query is nearest to its own text's batch vector.
    assert (np.argmax(queries @ batch.T, axis=1) == np.arange(len(TEXTS))).all()


def test_the_query_model_is_built_once_per_model_folder(embedder: Embedder) -> None:
    embedder.query_encoder()
    built = embedder.model_dir() / QUERY_MODEL_FILE
    stamp = built.stat().st_mtime_ns
    again = Embedder(embedder.cache_dir, max_tokens=embedder.max_tokens)
    assert again.query_encoder() is not None
    assert built.stat().st_mtime_ns == stamp
    text = TEXTS[0]
    assert np.array_equal(again.embed_query(text), embedder.embed_query(text))


def test_quantized_queries_off_embeds_queries_with_the_batch_model(embedder: Embedder) -> None:
    exact = Embedder(embedder.cache_dir, max_tokens=embedder.max_tokens, quantized_queries=False)
    assert exact.query_encoder() is None
    query = exact.embed_query(TEXTS[0])
    assert float(query @ exact.embed([TEXTS[0]])[0]) > 0.9999


def test_a_query_model_that_cannot_be_built_leaves_queries_on_the_batch_model(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    embedder = Embedder(tmp_path / "cache", max_tokens=64)
    # A folder where the built model should go: the build cannot put it there.
    (embedder.model_dir() / QUERY_MODEL_FILE).mkdir()
    with caplog.at_level("WARNING", logger="codesift.embedding.model"):
        query = embedder.embed_query(TEXTS[0])
    assert embedder.query_encoder() is None
    assert embedder.query_encoder_error and "query model" in embedder.query_encoder_error
    assert "batch model" in caplog.text
    assert float(query @ embedder.embed([TEXTS[0]])[0]) > 0.9999


def test_the_query_tokenizer_reads_text_as_the_batch_model_does(embedder: Embedder) -> None:
    ours = load_query_tokenizer(embedder.model_dir())
    batch = embedder._load().model.tokenizer  # fastembed's, as it embeds chunks
    long_text = "retry the declined charge " * 200  # beyond max_tokens: truncated
    for text in [*TEXTS, long_text, "naïve café [CLS] <tag> 🙂", ""]:
        expected = batch.encode(text)
        got = ours.encode(text)
        assert got.ids == expected.ids[: len(got.ids)]
        # fastembed pads to the longest text of a batch; a lone text has no padding.
        assert len(got.ids) == sum(expected.attention_mask)
    assert len(ours.encode(long_text).ids) == embedder.max_tokens
