"""The static embedding model: one vector per token, no transformer.

A text's vector is the L2-normalised sum of its tokens' vectors (the mean,
normalised). The table has one 384-d row per token of all-MiniLM-L6-v2's
vocabulary, fitted so that these sums reproduce MiniLM's own sentence vectors on
a corpus of code and docstrings (tools/train_static_model.py has the recipe, the
corpus and how to rebuild it), and it lives in MiniLM's space: a static vector
and a MiniLM vector of the same text are close (cosine ~0.8 on held-out texts).

It ships in the package (`embedding/static/static.npz`: int8 rows with a float32
scale per row, 11.8 MB, and `static.json`, its manifest) with MiniLM's tokenizer
files (`embedding/minilm/`). Embedding is a tokenizer call (the `tokenizers`
library, both cores; embedding/static_tokens.py) and a gather-and-sum in numpy:
~10,000 chunks a second on 2 cores, a query in ~0.1 ms. Nothing is built or
downloaded; the table is loaded once per process (~50 ms, ~12 MB).
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from codesift.embedding.static_tokens import MODEL_DIR, load_static_tokenizer, token_ids
from codesift.errors import EmbeddingError

__all__ = [
    "MODEL_DIR",
    "REFERENCE_TEXTS",
    "STATIC_DIR",
    "STATIC_MODEL_ID",
    "StaticTable",
    "load_static_tokenizer",
    "load_table",
    "static_manifest",
    "static_model_id",
    "table_checksum",
]

# Which model made a vector, as the index records it (store/vectors.py): vectors of
# another model, or of another table (`static_model_id`), are computed again.
STATIC_MODEL_ID = "static-minilm"

STATIC_DIR = Path(str(resources.files("codesift.embedding") / "static"))
_TABLE_FILE = "static.npz"
_MANIFEST_FILE = "static.json"

# Texts whose vectors the manifest records (first 8 components), checked by a test.
REFERENCE_TEXTS: tuple[str, ...] = (
    "how does the server retry a failed request",
    "def parse_config(path: str) -> dict: Read the settings file.",
    "func (s *Server) Handle(w http.ResponseWriter, r *http.Request)",
    "impl Iterator for Lines { fn next(&mut self) -> Option<String> }",
    "## Installation\nRun npm install and start the development server.",
)

Vectors = npt.NDArray[np.float32]

# Texts per gather: the gathered rows of a chunk of texts (tokens x 384 float32)
# stay ~a few MB at the usual chunk sizes.
_GATHER_TEXTS = 256


def table_checksum(rows: npt.NDArray[np.int8], scales: npt.NDArray[np.float32]) -> str:
    """SHA-256 of the table's content (rows and scales, little-endian)."""
    digest = hashlib.sha256()
    digest.update(np.ascontiguousarray(rows, dtype=np.int8).tobytes())
    digest.update(np.ascontiguousarray(scales, dtype="<f4").tobytes())
    return digest.hexdigest()


def static_manifest() -> dict[str, Any]:
    """The shipped model's manifest (recipe, corpus, checksums)."""
    try:
        data = json.loads((STATIC_DIR / _MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EmbeddingError(f"cannot read the static model's manifest: {exc}") from exc
    if not isinstance(data, dict):
        raise EmbeddingError("the static model's manifest is not an object")
    return data


@functools.cache
def static_model_id() -> str:
    """The shipped table's id as the index records it: STATIC_MODEL_ID and the start
    of the table's checksum (from its manifest), so that a codesift shipping another
    table computes the vectors again."""
    checksum = str(static_manifest().get("table_sha256", ""))[:12]
    return f"{STATIC_MODEL_ID}-{checksum}" if checksum else STATIC_MODEL_ID


@dataclass(frozen=True, slots=True)
class StaticTable:
    """The token table and the tokenizer that indexes it."""

    rows: npt.NDArray[np.int8]  # (vocabulary, 384)
    scales: npt.NDArray[np.float32]  # (vocabulary,)
    tokenizer: Any  # tokenizers.Tokenizer

    @property
    def dimensions(self) -> int:
        return int(self.rows.shape[1])

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each text ([CLS] ... [SEP], truncated): `static_tokens.token_ids`."""
        return token_ids(self.tokenizer, texts)

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One L2-normalised row per text, in order."""
        out = np.zeros((len(texts), self.dimensions), np.float32)
        for start in range(0, len(texts), _GATHER_TEXTS):
            batch = texts[start : start + _GATHER_TEXTS]
            out[start : start + len(batch)] = self.embed_ids(self.token_ids(batch))
        return out

    def embed_ids(self, ids: Sequence[Sequence[int] | npt.NDArray[Any]]) -> Vectors:
        """Vectors of texts given as token ids (each at least one token)."""
        sums: Vectors = np.zeros((len(ids), self.dimensions), np.float32)
        for row, tokens in enumerate(ids):
            if len(tokens):
                # Scales times int8 rows, summed in float32 on this thread: no float32
                # copy of the table, no BLAS threads (3-4x faster than np.add.reduceat
                # over the gathered rows, which walks them column by column).
                index = np.asarray(tokens, np.intp)
                sums[row] = np.einsum(
                    "i,ij->j",
                    self.scales[index],
                    self.rows[index],
                    dtype=np.float32,
                    casting="unsafe",
                )
        norms = np.sqrt(np.einsum("ij,ij->i", sums, sums))
        norms[norms == 0] = 1.0
        sums /= norms[:, None]
        return sums


_TABLES: dict[int, StaticTable] = {}
_TABLES_LOCK = threading.Lock()


def load_table(max_tokens: int = 512) -> StaticTable:
    """The shipped static model with a tokenizer truncating at `max_tokens` (loaded
    once per process and length; the rows are shared)."""
    with _TABLES_LOCK:
        table = _TABLES.get(max_tokens)
        if table is not None:
            return table
        shared = next(iter(_TABLES.values()), None)
        if shared is not None:
            rows, scales = shared.rows, shared.scales
        else:
            rows, scales = _read_table(STATIC_DIR / _TABLE_FILE)
        table = StaticTable(rows, scales, load_static_tokenizer(MODEL_DIR, max_tokens))
        _TABLES[max_tokens] = table
        return table


def _read_table(path: Path) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    try:
        with np.load(path, allow_pickle=False) as data:
            rows = np.ascontiguousarray(data["rows"], dtype=np.int8)
            scales = np.ascontiguousarray(data["scales"], dtype=np.float32)
    except (OSError, ValueError, KeyError) as exc:
        raise EmbeddingError(f"cannot read the static embedding model {path}: {exc}") from exc
    if rows.ndim != 2 or scales.shape != (rows.shape[0],):
        raise EmbeddingError(f"the static embedding model {path} has the wrong shape")
    return rows, scales
