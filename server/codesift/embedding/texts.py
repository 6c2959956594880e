"""The text the embedding model sees for a chunk.

Kept apart from the models (no numpy): the index workers build these texts with
a file's rows and turn them into the static model's token ids
(`chunk_embedding_ids`); embedding/row_vectors.py sums the ids' rows in the
writer's process, which holds the table.
"""

from __future__ import annotations

import array
from collections.abc import Collection

from codesift.embedding.static_tokens import static_tokenizer, token_ids
from codesift.parsing.model import ParsedFile

__all__ = [
    "IDS_TYPECODE",
    "EmbeddingIds",
    "EmbeddingTexts",
    "chunk_embedding_ids",
    "chunk_embedding_texts",
    "embedding_text",
]

# (position of the chunk in the file's rows, the text its vector is computed from)
EmbeddingTexts = list[tuple[int, str]]
# (position of the chunk in the file's rows, its text's token ids as an `array`
# of IDS_TYPECODE, in bytes: cheap to send from a worker process)
EmbeddingIds = list[tuple[int, bytes]]
IDS_TYPECODE = "I"  # unsigned 32-bit (numpy's uint32)


def embedding_text(text: str, qualified_name: str, layer: str) -> str:
    """What the model sees: a code chunk is prefixed with its qualified name, so a
    body that never states what it belongs to still carries that context."""
    if layer == "code" and qualified_name and qualified_name not in text[:200]:
        return f"{qualified_name}\n{text}"
    return text


def chunk_embedding_texts(parsed: ParsedFile, path: str, layers: Collection[str]) -> EmbeddingTexts:
    """The embedding texts of the chunks of `parsed` in `layers`, in chunk order:
    the texts a fill computes their vectors from after reading them back."""
    out: EmbeddingTexts = []
    for position, chunk in enumerate(parsed.chunks):
        if chunk.layer not in layers:
            continue
        # A read names a chunk by its node's qualified name, else its title, else
        # its file's path (store/reader.py chunk_rows).
        node = parsed.nodes[chunk.node] if chunk.node is not None else None
        name = (node.qualified_name if node is not None else "") or chunk.title or path
        out.append((position, embedding_text(chunk.text, name, chunk.layer)))
    return out


def chunk_embedding_ids(
    parsed: ParsedFile, path: str, layers: Collection[str], max_tokens: int
) -> EmbeddingIds:
    """The static model's token ids of `chunk_embedding_texts`, truncated at
    `max_tokens`: what embedding/row_vectors.py turns into vectors."""
    texts = chunk_embedding_texts(parsed, path, layers)
    if not texts:
        return []
    ids = token_ids(static_tokenizer(max_tokens), [text for _, text in texts])
    return [
        (position, array.array(IDS_TYPECODE, found).tobytes())
        for (position, _), found in zip(texts, ids, strict=True)
    ]
