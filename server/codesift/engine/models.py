"""The models a workspace's settings ask for: the embedder and the reranker.

One place builds them for every front end (the CLI builds one per process, the
language server shares one embedder between folders with the same settings).
"""

from __future__ import annotations

from pathlib import Path

from codesift.config import EmbeddingSettings, Settings
from codesift.embedding import Embedder, query_model
from codesift.embedding.model import cache_dir_from, model_dir_path
from codesift.embedding.query_model import (
    QUERY_MODEL_FILE,
    query_model_inputs,
    recent_build_failure,
)
from codesift.retrieval.rerank import RerankerLoad, load_reranker

__all__ = ["embedder_key", "load_rerank", "make_embedder", "query_path"]


def make_embedder(settings: EmbeddingSettings) -> Embedder:
    """The embedding model for these settings (loaded lazily, on first use)."""
    return Embedder(
        cache_dir_from(settings.cache_dir),
        max_tokens=settings.max_tokens,
        batch_size=settings.batch_size,
        quantized_queries=settings.quantized_queries,
        model=settings.model,
        static_first=settings.static_first,
    )


def embedder_key(settings: EmbeddingSettings) -> tuple[str, int, int, bool, str]:
    """Settings with the same key can share one embedder."""
    return (
        settings.cache_dir,
        settings.max_tokens,
        settings.batch_size,
        settings.quantized_queries,
        f"{settings.model}+static" if settings.static_first else settings.model,
    )


def load_rerank(settings: Settings) -> RerankerLoad:
    """The rerank model (None with a warning when it is off or fails to load)."""
    return load_reranker(settings.rerank, cache_dir_from(settings.embedding.cache_dir))


def query_path(settings: EmbeddingSettings) -> tuple[str, str | None]:
    """How a search would embed its query, without loading anything: `static` (the
    static model), `int8`, `pending` (the query model is not built yet), `batch` or
    `off`; and, when the
    int8 encoder is asked for but a build of the query model failed lately, why
    (queries then use the batch model)."""
    if not settings.enabled:
        return "off", None
    if settings.model == "static":
        return "static", None
    if not settings.quantized_queries:
        return "batch", None
    model_dir = model_dir_path(cache_dir_from(settings.cache_dir), settings.max_tokens)
    if _query_model_built(model_dir):
        return "int8", None
    failed = recent_build_failure(model_dir)
    return ("batch", failed) if failed else ("pending", None)


def _query_model_built(model_dir: Path) -> bool:
    """Whether a search would load the int8 query model as it is on disk: the
    loader's own test (query_model.ensure_query_model), i.e. the file there is the
    one the folder's manifest records, built from today's model.onnx with today's
    recipe. A leftover, truncated, altered or stale file is rebuilt by the next
    search, so it does not count (the file's presence alone, or the manifest's
    record alone, would say `int8` wrongly)."""
    target = model_dir / QUERY_MODEL_FILE
    if not target.is_file():
        return False
    # A private helper of query_model: the one definition of "built", shared
    # rather than copied (it should become public there).
    return query_model._is_built(model_dir, target, query_model_inputs(model_dir))
