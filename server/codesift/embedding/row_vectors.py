"""Static vectors computed with a file's rows, in the index worker that parsed it.

When an index run is followed at once by the static vectors (the first tier of
`codesift index` and of the language server), the workers embed each file's
chunks as they build its rows: the texts are in hand (no summary rebuilt from
its node, no chunk read back and decompressed) and the embedding runs on every
core beside the parsing, instead of in one process after it. The writer stores
the vectors with the chunks, in the same transaction; the fill that follows
finds them current. They are the vectors that fill would compute: the same text
(`embedding_text` of the text a read rebuilds), the same table and truncation,
the same int8 form.
"""

from __future__ import annotations

from collections.abc import Sequence

from codesift.embedding.static_model import load_table, static_model_id
from codesift.parsing.model import ParsedFile
from codesift.store.vectors import VECTOR_LAYERS, quantize

__all__ = ["RowVectors", "embedding_text", "row_vectors"]

# (position of the chunk in the file's rows, int8 vector bytes)
RowVectors = list[tuple[int, bytes]]


def embedding_text(text: str, qualified_name: str, layer: str) -> str:
    """What the model sees: a code chunk is prefixed with its qualified name, so a
    body that never states what it belongs to still carries that context."""
    if layer == "code" and qualified_name and qualified_name not in text[:200]:
        return f"{qualified_name}\n{text}"
    return text


def row_vectors(
    parsed: ParsedFile, path: str, layers: Sequence[str], max_tokens: int
) -> tuple[str, RowVectors]:
    """(model id, vectors) of the chunks of `parsed` in `layers`, by the static
    model truncating at `max_tokens`, in chunk order."""
    wanted = set(layers) & set(VECTOR_LAYERS)
    positions: list[int] = []
    texts: list[str] = []
    for position, chunk in enumerate(parsed.chunks):
        if chunk.layer not in wanted:
            continue
        # A read names a chunk by its node's qualified name, else its title, else
        # its file's path (store/reader.py chunk_rows).
        node = parsed.nodes[chunk.node] if chunk.node is not None else None
        name = (node.qualified_name if node is not None else "") or chunk.title or path
        positions.append(position)
        texts.append(embedding_text(chunk.text, name, chunk.layer))
    if not texts:
        return static_model_id(), []
    vectors = quantize(load_table(max_tokens).embed(texts))
    return static_model_id(), [
        (position, vector.tobytes()) for position, vector in zip(positions, vectors, strict=True)
    ]
