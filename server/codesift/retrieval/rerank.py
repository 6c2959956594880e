"""The optional rerank stage: a cross-encoder rescoring the best fused candidates.

Off by default (`[rerank] enabled = false`). When on, it runs after fusion, priors
and collapsing, and is skipped (`rerank_skip_reason`) for a blank query, when
fusion found fewer candidates than `rerank.threshold`, and when the first result is
already an exact match of a symbol-shaped query: there is nothing a cross-encoder
can improve on then, and it costs tens of milliseconds.

Providers:
  none                 no reranking
  local_cross_encoder  a user-supplied ONNX cross-encoder (a folder with model.onnx
                       and its tokenizer files: tokenizer.json, config.json,
                       special_tokens_map.json, tokenizer_config.json) run by
                       fastembed's TextCrossEncoder, offline

An unknown provider is a ConfigError (raised when settings load). A provider that
fails to load (missing or broken model files) degrades to none: `load_reranker`
returns no reranker and a warning, which the CLI prints and `codesift status` shows.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from codesift.config import RERANK_PROVIDERS, RerankSettings
from codesift.errors import ConfigError
from codesift.retrieval.fusion import FusedCandidate
from codesift.retrieval.query import QueryAnalysis
from codesift.retrieval.request import SearchRequest, SearchResponse
from codesift.store.search_store import SearchStore

if TYPE_CHECKING:
    from fastembed.rerank.cross_encoder import TextCrossEncoder

__all__ = [
    "CrossEncoderReranker",
    "Reranker",
    "RerankerLoad",
    "load_reranker",
    "rerank_order",
    "rerank_skip_reason",
    "rerank_stage",
]

log = logging.getLogger(__name__)

# Characters of each candidate's text the cross-encoder reads (it truncates to its
# token limit anyway; this bounds tokenizer work on long chunks).
RERANK_TEXT_CHARS = 2000


class Reranker(Protocol):
    name: str

    def scores(self, query: str, documents: Sequence[str]) -> list[float]:
        """One relevance score per document, higher is better."""
        ...


def rerank_skip_reason(
    query: str, candidates: int, threshold: int, exact_symbol_first: bool
) -> str | None:
    """Why the rerank stage does not run for this query, or None when it does."""
    if not query.strip():
        return "blank query"
    if candidates < threshold:
        return f"{candidates} candidates, fewer than the threshold {threshold}"
    if exact_symbol_first:
        return "an exact symbol match is already first"
    return None


def rerank_order(scores: Sequence[float]) -> list[int]:
    """Indices of `scores` best first; ties keep the earlier (fused) order."""
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))


def _model_location(model_path: str) -> tuple[Path, str]:
    """(folder, ONNX file name) for a configured path: a folder holding model.onnx,
    or the .onnx file itself beside its tokenizer files."""
    path = Path(os.path.expanduser(model_path))
    if path.suffix == ".onnx":
        return path.parent, path.name
    return path, "model.onnx"


class CrossEncoderReranker:
    """A local ONNX cross-encoder through fastembed's TextCrossEncoder. The model
    loads in the constructor, so a broken model fails there, not mid-search."""

    name = "local_cross_encoder"

    def __init__(self, model_path: str, cache_dir: Path, *, batch_size: int = 32) -> None:
        folder, model_file = _model_location(model_path)
        if not (folder / model_file).is_file():
            raise FileNotFoundError(f"no ONNX model at {folder / model_file}")
        self.batch_size = batch_size
        self._lock = threading.Lock()
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from fastembed.common.model_description import ModelSource
        from fastembed.rerank.cross_encoder import TextCrossEncoder

        # fastembed knows models by name: register the folder under a name of its own.
        digest = hashlib.sha1(str(folder.resolve() / model_file).encode()).hexdigest()[:12]
        registered = f"codesift/local-cross-encoder-{digest}"
        with contextlib.suppress(ValueError):  # registered by an earlier load of this file
            TextCrossEncoder.add_custom_model(
                registered, sources=ModelSource(hf=registered), model_file=model_file
            )
        cache_dir.mkdir(parents=True, exist_ok=True)
        self._model: TextCrossEncoder = TextCrossEncoder(
            registered, cache_dir=str(cache_dir), specific_model_path=str(folder)
        )

    def scores(self, query: str, documents: Sequence[str]) -> list[float]:
        if not documents:
            return []
        texts = [d[:RERANK_TEXT_CHARS] for d in documents]
        with self._lock:  # one ONNX session; its runs are not re-entrant here
            raw: list[Any] = list(self._model.rerank(query, texts, batch_size=self.batch_size))
        return [float(x) for x in raw]


@dataclass(frozen=True, slots=True)
class RerankerLoad:
    reranker: Reranker | None
    warning: str | None = None


def load_reranker(settings: RerankSettings, cache_dir: Path) -> RerankerLoad:
    """The configured reranker, or none (with a warning when loading failed)."""
    if settings.provider not in RERANK_PROVIDERS:
        raise ConfigError(
            f"rerank.provider must be one of {', '.join(RERANK_PROVIDERS)}, "
            f"got {settings.provider!r}"
        )
    if not settings.enabled or settings.provider == "none":
        return RerankerLoad(None)
    if not settings.model_path:
        return RerankerLoad(
            None,
            "rerank is enabled but rerank.model_path is empty; searching without reranking",
        )
    try:
        reranker = CrossEncoderReranker(settings.model_path, cache_dir / "fastembed")
    except Exception as exc:  # onnxruntime and tokenizers raise plain exceptions
        message = (
            f"the {settings.provider} reranker could not be loaded from "
            f"{settings.model_path} ({type(exc).__name__}: {str(exc)[:300]}); "
            "searching without reranking"
        )
        log.warning("%s", message)
        return RerankerLoad(None, message)
    return RerankerLoad(reranker)


def rerank_stage(
    reranker: Reranker | None,
    settings: RerankSettings,
    store: SearchStore,
    request: SearchRequest,
    analysis: QueryAnalysis,
    candidates: int,
    collapsed: list[FusedCandidate],
    response: SearchResponse,
) -> list[FusedCandidate]:
    """Reorder the best `rerank.candidates` results by the cross-encoder, when
    the stage is on and not skipped (rerank.rerank_skip_reason)."""
    if reranker is None:
        response.rerank = "off"
        return collapsed
    exact_first = (
        analysis.symbol_like
        and bool(collapsed)
        and any(stream == "symbol" and raw >= 1.0 for stream, _, raw in collapsed[0].hits)
    )
    skip = rerank_skip_reason(request.query, candidates, settings.threshold, exact_first)
    if skip is not None:
        response.rerank = f"skipped: {skip}"
        return collapsed
    t0 = time.perf_counter()
    head = collapsed[: settings.candidates]
    rows = store.chunk_rows([c.chunk_id for c in head])
    texts = [rows[c.chunk_id].text if c.chunk_id in rows else "" for c in head]
    try:
        scores = reranker.scores(request.query, texts)
    except Exception as exc:  # a failing reranker leaves the fused order
        log.warning("rerank failed for %r: %s", request.query, exc)
        response.rerank = f"skipped: {type(exc).__name__}: {exc}"
        return collapsed
    order = rerank_order(scores)
    reranked = [
        FusedCandidate(
            head[i].chunk_id,
            head[i].score,
            [*head[i].hits, ("rerank", rank, round(scores[i], 6))],
        )
        for rank, i in enumerate(order, start=1)
    ]
    response.rerank = "applied"
    response.stages["rerank"] = (time.perf_counter() - t0) * 1000
    return reranked + collapsed[len(head) :]
