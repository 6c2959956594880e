"""On-device embeddings: the offline model and the chunk vector table.

The names below load on first use: an index worker that only needs the static
table (embedding/row_vectors.py) does not import the transformer's modules.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
    "DIMENSIONS": "model",
    "Embedder": "model",
    "remembered_queries": "model",
    "EMBEDDED_LAYERS": "vectors",
    "VectorCoverage": "vectors",
    "fill_vectors": "vectors",
    "vector_coverage": "vectors",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
