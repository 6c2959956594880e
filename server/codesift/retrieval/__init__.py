"""Retrieval: streams, fusion, snippets; `Searcher` answers one request.

The names below are loaded on first use (PEP 562): the request's records
(retrieval/request.py), which the engine's results use, do not load the
searcher (numpy, the streams, the embedding models' wrappers).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from codesift.retrieval.request import (
        BROAD_LAYERS,
        SearchRequest,
        SearchResponse,
        SearchResult,
        StreamHit,
        StreamReport,
    )
    from codesift.retrieval.search import Searcher

__all__ = [
    "BROAD_LAYERS",
    "SearchRequest",
    "SearchResponse",
    "SearchResult",
    "Searcher",
    "StreamHit",
    "StreamReport",
]

_HOME = {
    **{name: "codesift.retrieval.request" for name in __all__ if name != "Searcher"},
    "Searcher": "codesift.retrieval.search",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
