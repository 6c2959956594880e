"""The int8 query encoder: built once per model folder in a child process, close to
the batch model's vectors, and a search still answers when it cannot be built."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from codesift.embedding import Embedder
from codesift.embedding.bert_graph import UnsupportedGraph, bert_shape, fuse_bert, max_difference
from codesift.embedding.query_model import (
    QUERY_MODEL_FILE,
    QueryEncoder,
    build_query_model,
    load_query_tokenizer,
    query_model_inputs,
)

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


def test_a_failed_build_is_not_retried_by_each_process_until_a_day_has_passed(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "cache"
    first = Embedder(cache, max_tokens=64)
    target = first.model_dir() / QUERY_MODEL_FILE
    target.mkdir()  # the build cannot put its file there
    assert first.query_encoder() is None
    marker = target.with_name(target.name + ".failed")
    recorded = json.loads(marker.read_text())
    assert recorded["error"] and recorded["at"] > 0
    # It says what the build was made from: a record for other inputs counts for
    # nothing (tests/integration/test_model_cache.py).
    assert recorded["inputs"] == query_model_inputs(first.model_dir())
    target.rmdir()  # a build would work now, but the failure is recent
    second = Embedder(cache, max_tokens=64)
    assert second.query_encoder() is None
    assert second.query_encoder_error is not None
    assert recorded["error"] in second.query_encoder_error
    assert "retried a day later" in second.query_encoder_error
    assert not target.exists()
    # A day later the next process builds it, and the record goes, with the
    # models of earlier recipes.
    marker.write_text(json.dumps({**recorded, "at": recorded["at"] - 2 * 86400}))
    older = target.with_name("query-int8-v1.onnx")
    older.write_bytes(b"an earlier recipe's model")
    third = Embedder(cache, max_tokens=64)
    assert third.query_encoder() is not None, third.query_encoder_error
    assert target.is_file() and not marker.exists() and not older.exists()
    model = target.parent / "model.onnx"
    assert model.is_file() and not model.is_symlink()  # a copy: never into an environment


def test_the_query_tokenizer_reads_text_as_the_batch_model_does(embedder: Embedder) -> None:
    ours = load_query_tokenizer(embedder.model_dir())
    inner: Any = embedder._load().model
    batch = inner.tokenizer  # fastembed's, as it embeds chunks
    long_text = "retry the declined charge " * 200  # beyond max_tokens: truncated
    for text in [*TEXTS, long_text, "naïve café [CLS] <tag> 🙂", ""]:
        expected = batch.encode(text)
        got = ours.encode(text)
        assert got.ids == expected.ids[: len(got.ids)]
        # fastembed pads to the longest text of a batch; a lone text has no padding.
        assert len(got.ids) == sum(expected.attention_mask)
    assert len(ours.encode(long_text).ids) == embedder.max_tokens


def _folded(model_dir: Path, target: Path) -> Path:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(target)
    ort.InferenceSession(str(model_dir / "model.onnx"), options, providers=["CPUExecutionProvider"])
    return target


def test_the_fused_graph_computes_what_the_export_computes(
    embedder: Embedder, tmp_path: Path
) -> None:
    import onnx

    model_dir = embedder.model_dir()
    folded = _folded(model_dir, tmp_path / "folded.onnx")
    fused = tmp_path / "fused.onnx"
    down = fuse_bert(folded, model_dir / "config.json", fused)
    assert down == [f"output_{layer}" for layer in range(6)]
    ops = [node.op_type for node in onnx.load(str(fused)).graph.node]
    assert ops.count("Attention") == 6 and len(ops) < 60
    assert len(onnx.load(str(folded)).graph.node) > 250
    # Same network: padded and unpadded probes agree to float32 rounding.
    assert max_difference(folded, fused) < 1e-4
    # The built query model is the fused one, quantised.
    embedder.query_encoder()
    built = [node.op_type for node in onnx.load(str(model_dir / QUERY_MODEL_FILE)).graph.node]
    assert built.count("QAttention") == 6


@pytest.mark.parametrize(
    ("change", "logged"),
    [
        ({"hidden_act": "relu"}, "not rebuilt with fused operators: not a BERT encoder"),
        # Builds a graph, but with the wrong head count it computes something else.
        ({"num_attention_heads": 16}, "the fused graph differs from the export"),
    ],
)
def test_a_model_the_fused_graph_does_not_fit_is_quantised_as_exported(
    embedder: Embedder,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    change: dict[str, object],
    logged: str,
) -> None:
    import shutil

    import onnx

    model_dir = embedder.model_dir()
    folder = tmp_path / "model"
    folder.mkdir()
    shutil.copyfile(model_dir / "model.onnx", folder / "model.onnx")
    config = json.loads((model_dir / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, **change}))
    target = folder / QUERY_MODEL_FILE
    with caplog.at_level("INFO", logger="codesift.embedding.query_model"):
        build_query_model(folder / "model.onnx", target)
    assert logged in caplog.text
    ops = [node.op_type for node in onnx.load(str(target)).graph.node]
    assert "QAttention" not in ops and "MatMulInteger" in ops
    # Still the same model: close to the batch model's vectors.
    encoder = QueryEncoder(model_dir, target)
    queries = np.stack([encoder.encode(t) for t in TEXTS])
    agreement = np.einsum("ij,ij->i", queries, embedder.embed(TEXTS))
    assert agreement.min() > 0.97, agreement


def test_unreadable_or_foreign_configs_are_unsupported(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text("{not json")
    with pytest.raises(UnsupportedGraph, match="cannot read"):
        bert_shape(path)
    base = {
        "model_type": "bert",
        "hidden_act": "gelu",
        "num_hidden_layers": 2,
        "hidden_size": 64,
        "num_attention_heads": 4,
        "intermediate_size": 128,
    }
    path.write_text(json.dumps({**base, "model_type": "roberta"}))
    with pytest.raises(UnsupportedGraph, match="not a BERT"):
        bert_shape(path)
    path.write_text(json.dumps({**base, "hidden_act": "relu"}))
    with pytest.raises(UnsupportedGraph, match="GELU"):
        bert_shape(path)
    path.write_text(json.dumps({**base, "num_attention_heads": 5}))
    with pytest.raises(UnsupportedGraph, match="multiple"):
        bert_shape(path)
    path.write_text(json.dumps(base))
    assert bert_shape(path).heads == 4 and bert_shape(path).epsilon == 1e-12
