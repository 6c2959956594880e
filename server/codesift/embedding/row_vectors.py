"""Static vectors computed with an index run's rows, before the writer stores them.

`summary_vectors` does the same for the call pass (call_pass.py): a summary
chunk whose text gains its calls gets its new static vector in the transaction
that changes its text hash.

When an index run is followed at once by the static vectors (the first tier of
`codesift index` and of the language server), the index workers build each
file's embedding texts with its rows (embedding/texts.py: the texts are in hand,
no summary is rebuilt from its node and no chunk read back), and the writer's
process embeds them as it writes the file, beside the workers' parsing, and
stores the vectors in the file's transaction; the fill that follows finds them
current. They are the vectors that fill would compute: the same texts, table,
truncation and int8 form. The table stays in the one process that writes (the
workers' memory does not grow by it).
"""

from __future__ import annotations

from collections.abc import Sequence

import apsw

from codesift.embedding.static_model import load_table, static_model_id
from codesift.embedding.texts import EmbeddingTexts
from codesift.store.vectors import embedded_models, insert_vectors, quantize

__all__ = ["RowVectors", "row_vectors", "summary_vectors"]

# (position of the chunk in the file's rows, int8 vector bytes)
RowVectors = list[tuple[int, bytes]]


def row_vectors(texts: EmbeddingTexts, max_tokens: int) -> tuple[str, RowVectors]:
    """(model id, vectors) of a file's embedding texts by the static model,
    truncating at `max_tokens`, in their order."""
    if not texts:
        return static_model_id(), []
    vectors = quantize(load_table(max_tokens).embed([text for _, text in texts]))
    return static_model_id(), [
        (position, vector.tobytes()) for (position, _), vector in zip(texts, vectors, strict=True)
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
