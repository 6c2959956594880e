"""Retrieval: streams, fusion, snippets; `Searcher` answers one request."""

from __future__ import annotations

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
