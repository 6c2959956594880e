"""On-device embeddings: the offline model and the chunk vector table."""

from __future__ import annotations

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
