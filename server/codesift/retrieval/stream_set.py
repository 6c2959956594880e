"""The streams a search runs (retrieval/streams.py has each one), bound to a
search's settings: which run for which query, and over which layers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from codesift.config import SearchSettings
from codesift.retrieval.flight import Stream, StreamInput
from codesift.retrieval.streams import (
    Ranked,
    StreamFilters,
    exact_stream,
    lexical_doc_stream,
    lexical_stream,
    path_stream,
    resident_vector_stream,
    symbol_stream,
    vector_stream,
)
from codesift.retrieval.vector_index import VectorIndex
from codesift.store.search_store import SearchStore

__all__ = ["search_streams"]


def search_streams(
    settings: SearchSettings,
    *,
    vectors: bool,
    resident: Callable[[], VectorIndex | None],
) -> list[Stream]:
    """The streams of a search with these settings: lexical, lexical_doc, symbol, exact
    and path, and with `vectors` vector and vector_doc (over the in-memory vectors
    `resident` returns when loaded, else sqlite-vec's kNN)."""
    threshold = settings.symbol_threshold
    max_df = settings.lexical_max_df
    prose_weight = settings.weight_symbol_prose

    def lexical(store: SearchStore, i: StreamInput) -> Ranked:
        return lexical_stream(store, i.analysis, i.filters, i.cap, max_df)

    def lexical_doc(store: SearchStore, i: StreamInput) -> Ranked:
        return lexical_doc_stream(store, i.analysis, i.filters, i.cap)

    def symbol(store: SearchStore, i: StreamInput) -> Ranked:
        return symbol_stream(store, i.analysis, i.filters, i.cap, threshold)

    def symbol_wanted(i: StreamInput) -> bool:
        # A question in words leaves names to the lexical stream.
        return i.analysis.symbol_like or prose_weight > 0.0

    def exact(store: SearchStore, i: StreamInput) -> Ranked:
        return exact_stream(store, i.analysis, i.filters, i.cap)

    def exact_wanted(i: StreamInput) -> bool:
        return bool(i.analysis.verbatim or i.analysis.phrase) and "code" in i.filters.layers

    def path(store: SearchStore, i: StreamInput) -> Ranked:
        return path_stream(store, i.analysis, i.filters, i.cap)

    def lexical_doc_wanted(i: StreamInput) -> bool:
        return "doc" in i.filters.layers

    streams = [
        Stream("lexical", lexical),
        Stream("lexical_doc", lexical_doc, wanted=lexical_doc_wanted),
        Stream("symbol", symbol, wanted=symbol_wanted),
        Stream("exact", exact, wanted=exact_wanted, inline=True),
        Stream("path", path, wanted=lambda i: bool(i.analysis.path), inline=True),
    ]
    if not vectors:
        return streams

    def nearest(store: SearchStore, i: StreamInput, filters: StreamFilters) -> Ranked:
        index = resident()
        if index is not None and i.query_embedding is not None:
            return resident_vector_stream(store, index, i.query_embedding, filters, i.cap)
        if i.query_vector is None:
            return []
        return vector_stream(store, i.query_vector, filters, i.cap)

    def vector(store: SearchStore, i: StreamInput) -> Ranked:
        code_layers = tuple(layer for layer in i.filters.layers if layer != "doc")
        return nearest(store, i, replace(i.filters, layers=code_layers))

    def vector_doc(store: SearchStore, i: StreamInput) -> Ranked:
        if "doc" not in i.filters.layers:
            return []
        return nearest(store, i, replace(i.filters, layers=("doc",)))

    # Doc sections found by meaning are weighted like those found by words.
    streams.append(Stream("vector", vector, needs_query_vector=True))
    streams.append(Stream("vector_doc", vector_doc, needs_query_vector=True))
    return streams
