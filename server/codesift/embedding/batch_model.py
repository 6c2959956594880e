"""The batch encoder: embeds chunk texts with the fused int8 graph.

The model folder's query model (embedding/query_model.py: the export rebuilt with
onnxruntime's fused transformer operators, its matrix products int8 but for two
feed-forward output projections) embeds chunk texts too. Against the export as
shipped, which computes in float32 (its int8 weights cast at every run), on 2,000
Python stdlib summaries and doc sections on two threads: ~0.010 instead of 0.023
CPU seconds a chunk (2.3x), peak RSS ~145 instead of 336 MiB in a process of its
own (no float32 weight casts, no fastembed import), cosine to the export's vectors
0.996 on average (0.993 at worst), the same nearest neighbour for 91% of the chunks.

Texts run one at a time. The graph quantises its activations with one scale per
run, so a text run beside others gets a slightly different vector (cosine ~0.995
to its own): alone, a chunk's vector depends on its text only, and equals the
vector the query encoder gives the same text. It costs no CPU (batches of 32
took as much or more, 1,500 texts: 14.8-15.1 s alone, 16.8-18.2 s batched, at
load 4-5) and holds the activations of one text (peak 142 instead of 203 MiB).

Its vectors are not the export's, so the index records them under their own model
id (`FUSED_MODEL_ID`, named after the query model's recipe): an index whose
vectors the export made gets them computed again, and so does one whose vectors an
earlier recipe made. When the graph cannot be built (recorded next to it, see
query_model.ensure_query_model), texts run on the export through fastembed, as
before, under the export's id.

Tokenisation, mean pooling and L2 normalisation are those of the query encoder
(fastembed's for the batch model), with `tokenizers` called directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from codesift.embedding.query_model import QUERY_MODEL_FILE, load_query_tokenizer
from codesift.embedding.sessions import batch_session_options

if TYPE_CHECKING:
    import onnxruntime as ort
    from tokenizers import Tokenizer

__all__ = ["FUSED_MODEL_ID", "BatchEncoder"]

# What the index records for vectors of the fused int8 graph: a change of the
# query model's recipe (its file name) changes the vectors, and so the id.
FUSED_MODEL_ID = f"all-MiniLM-L6-v2-{QUERY_MODEL_FILE.removesuffix('.onnx')}"

Vectors = npt.NDArray[np.float32]


class BatchEncoder:
    """Embeds padded batches of token ids with the fused int8 graph at `model_path`
    on `threads` threads (onnxruntime's choice for None), which sleep between runs."""

    def __init__(self, model_dir: Path, model_path: Path, threads: int | None) -> None:
        import onnxruntime as ort

        self.tokenizer: Tokenizer = load_query_tokenizer(model_dir)
        self._session: ort.InferenceSession = ort.InferenceSession(
            str(model_path), batch_session_options(threads), providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """The ids the model reads for each text (markers included, truncated)."""
        return [list(e.ids) for e in self.tokenizer.encode_batch(list(texts))]

    def encode(self, batch: Sequence[Sequence[int]]) -> Vectors:
        """One L2-normalised row per text of `batch` (token ids), padded to the
        longest of them."""
        width = max((len(ids) for ids in batch), default=0)
        ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, text_ids in enumerate(batch):
            ids[row, : len(text_ids)] = text_ids
            mask[row, : len(text_ids)] = 1
        feeds: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return np.asarray(pooled / norms, dtype=np.float32)
