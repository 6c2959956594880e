"""Static vectors computed with an index run's rows, before the writer stores them.

`summary_vectors` does the same for the call pass (call_pass.py): a summary
chunk whose text gains its calls gets its new static vector in the transaction
that changes its text hash.

When an index run is followed at once by the static vectors (the first tier of
`codesift index` and of the language server), the index workers build each
file's embedding texts with its rows and tokenize them (embedding/texts.py: the
texts are in hand, no summary is rebuilt from its node and no chunk read back),
and the writer's process sums the tokens' rows as it writes the file and stores
the vectors in the file's transaction; the fill that follows finds them current.
They are the vectors that fill would compute: the same texts, tokens, table and
int8 form. Tokenizing is most of the static model's work and runs beside the
parsing; the table stays in the one process that writes (a worker holds the
tokenizer, ~13 MB, and no numpy).
"""

from __future__ import annotations

from collections.abc import Sequence

import apsw
import numpy as np

from codesift.embedding.static_model import load_table, static_model_id
from codesift.embedding.texts import IDS_TYPECODE, EmbeddingIds
from codesift.store.vectors import embedded_models, insert_vectors, quantize

__all__ = ["RowVectors", "row_vectors", "summary_vectors"]

# (position of the chunk in the file's rows, int8 vector bytes)
RowVectors = list[tuple[int, bytes]]


def row_vectors(ids: EmbeddingIds, max_tokens: int) -> tuple[str, RowVectors]:
    """(model id, vectors) of a file's embedding texts by the static model, from
    their token ids (truncated at `max_tokens` by the worker that made them), in
    their order."""
    if not ids:
        return static_model_id(), []
    dtype = np.dtype(IDS_TYPECODE)
    vectors = quantize(
        load_table(max_tokens).embed_ids([np.frombuffer(found, dtype) for _, found in ids])
    )
    return static_model_id(), [
        (position, vector.tobytes()) for (position, _), vector in zip(ids, vectors, strict=True)
    ]


def summary_vectors(
    conn: apsw.Connection, changed: Sequence[tuple[int, int, str]], max_tokens: int
) -> int:
    """New static vectors for the summary chunks of `changed` (chunk id, new text
    hash, text) whose vector the static model made, in the caller's transaction;
    a vector of another model (MiniLM's) is left to its fill. Returns how many."""
    model = static_model_id()
    made_by = embedded_models(conn, [chunk_id for chunk_id, _, _ in changed])
    todo = [item for item in changed if made_by.get(item[0]) == model]
    if not todo:
        return 0
    vectors = quantize(load_table(max_tokens).embed([text for _, _, text in todo]))
    insert_vectors(
        conn,
        [
            (chunk_id, "summary", vector.tobytes(), digest)
            for (chunk_id, digest, _), vector in zip(todo, vectors, strict=True)
        ],
        model,
    )
    return len(todo)
