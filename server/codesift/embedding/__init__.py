"""On-device embeddings: the offline model and the chunk vector table.

The names below load on first use: an index worker that only needs the static
table (embedding/row_vectors.py) does not import the transformer's modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from codesift.lazy_names import lazy_names

if TYPE_CHECKING:
    from codesift.embedding.model import DIMENSIONS, Embedder, remembered_queries
    from codesift.embedding.vectors import (
        EMBEDDED_LAYERS,
        VectorCoverage,
        fill_vectors,
        vector_coverage,
    )

__all__ = [
    "DIMENSIONS",
    "EMBEDDED_LAYERS",
    "Embedder",
    "VectorCoverage",
    "fill_vectors",
    "remembered_queries",
    "vector_coverage",
]

_HOME = {
    "DIMENSIONS": "codesift.embedding.model",
    "Embedder": "codesift.embedding.model",
    "remembered_queries": "codesift.embedding.model",
    "EMBEDDED_LAYERS": "codesift.embedding.vectors",
    "VectorCoverage": "codesift.embedding.vectors",
    "fill_vectors": "codesift.embedding.vectors",
    "vector_coverage": "codesift.embedding.vectors",
}

__getattr__, __dir__ = lazy_names(__name__, _HOME, globals())
