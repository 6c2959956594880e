"""What a search reads from an index: the interface every storage backend offers
the retrieval layer, and the typed rows it returns.

The retrieval streams (retrieval/streams.py) and one search request
(retrieval/search.py) call these methods and never see SQL or a connection. A
backend runs each stream's candidate query in its own SQL, with the filters
(languages, paths, layers, git time) inside that SQL and before the cap, as it
does best: SQLite answers with FTS5 bm25, an FTS5 trigram index of names and
sqlite-vec (store/sqlite/search.py); a PostgreSQL backend would answer the same
calls with full-text search, pg_trgm and pgvector. Scoring that is the same for
every backend (name similarity, fusion, priors, snippets) stays in retrieval/.

Hits are (chunk id, raw score) pairs, higher is better; they are plain tuples
because streams sort and merge thousands of them per query.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any, NamedTuple, Protocol

import numpy as np
import numpy.typing as npt

from codesift.store.filters import SearchFilters
from codesift.store.history import TimeRow
from codesift.store.reader import ChunkRow, EdgeRow, NodeRow

__all__ = [
    "ChildSpan",
    "ChunkPlace",
    "ResidentVectors",
    "ScoredChunk",
    "SearchStore",
    "SymbolCandidate",
]

ScoredChunk = tuple[int, float]


class SymbolCandidate(NamedTuple):
    """A definition whose name may match a probe, for the symbol stream to score."""

    node_id: int
    name: str
    qualified_name: str
    kind: str
    start_line: int
    end_line: int


class ChunkPlace(NamedTuple):
    """Where a chunk is: its node, layer, file path, the file's language, whether
    the file was generated, and its node's name ("" for a line window)."""

    chunk_id: int
    node_id: int | None
    layer: str
    path: str
    language: str
    generated: bool = False  # the file's header says a tool generated it
    name: str = ""


class ChildSpan(NamedTuple):
    """A child definition's lines inside its parent: `stub_start` is the first line
    of any of its code chunks (a doc comment included), else its start line."""

    stub_start: int
    end_line: int
    start_line: int


class ResidentVectors(Protocol):
    """A copy of the vectors kept in memory by a long-running process; it reads
    new and removed vectors through the connection it is given."""

    def sync(self, conn: Any) -> None: ...

    def search(
        self,
        conn: Any,
        query: npt.NDArray[np.float32],
        k: int,
        layers: Sequence[str],
        allowed_ids: npt.NDArray[np.int64] | None = None,
    ) -> list[tuple[int, float]]: ...


class SearchStore(Protocol):
    """The reads of one search, on one connection of one backend. Not shared
    between threads: each stream worker has its own."""

    def interrupt(self) -> None:
        """Stop the statement running on this store (called from another thread)."""
        ...

    def checking(
        self, cancelled: Callable[[], bool] | None, steps: int
    ) -> AbstractContextManager[None]:
        """While inside, the backend asks `cancelled` every `steps` units of work
        and stops the running statement when it returns True."""
        ...

    def sync_resident(self, index: ResidentVectors) -> None:
        """Bring the in-memory vectors up to date with this index."""
        ...

    def lexical_hits(
        self,
        layer: str,
        terms: Sequence[str],
        filters: SearchFilters,
        cap: int,
        max_df: float = 0.5,
    ) -> list[ScoredChunk]:
        """Chunks of `layer` (code, ast or doc) matching any of `terms`, by a text
        relevance score; `max_df` lets a backend leave out terms found in more than
        that share of the layer's chunks (they weigh next to nothing)."""
        ...

    def phrase_hits(
        self, layer: str, phrase: str, filters: SearchFilters, cap: int
    ) -> list[ScoredChunk]:
        """Chunks of `layer` (code or ast) holding `phrase`'s words in its order (its
        tokens as the layer's full-text index has them: punctuation aside), best
        first."""
        ...

    def path_hits(
        self, path: str, filters: SearchFilters, cap: int, line: int = 0
    ) -> list[ScoredChunk]:
        """One chunk of each file whose path is `path` or ends with `/path` (ASCII case
        aside): its first in the first requested layer it has among code, doc,
        summary and ast, or with `line` its narrowest code chunk holding that line
        when it has one. Scored 1.0 for the file whose path is `path`, 0.95 for
        one whose path ends with it in case, else 0.9; best first, then shorter paths
        first (`filters.path_hit_order`)."""
        ...

    def term_counts(self, layer: str, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        """The chunks of `layer` (code, ast or doc) in its full-text index, and per
        term how many of them hold it (counts a backend may cache)."""
        ...

    def symbol_candidates(
        self, probe: str, filters: SearchFilters, limit: int, threshold: float | None = None
    ) -> list[SymbolCandidate]:
        """Definitions named `probe` in any case, and up to `limit` whose names look
        most like it, that pass the language, path and time filters. `threshold`:
        the trigram similarity (retrieval/streams.py's) the caller keeps names at;
        a backend may leave out the names that cannot reach it."""
        ...

    def chunks_for_nodes(self, node_ids: Sequence[int], layers: Sequence[str]) -> dict[int, int]:
        """node id -> its first chunk (part 0) in the first of `layers` it has."""
        ...

    def nearest_chunks(
        self, query_vector: bytes, layers: Sequence[str], k: int, filters: SearchFilters
    ) -> list[ScoredChunk]:
        """The k chunks of `layers` nearest to an int8 query vector, among those in
        the time window; the score is 1 - cosine distance."""
        ...

    def resident_nearest(
        self,
        index: ResidentVectors,
        query: npt.NDArray[np.float32],
        layers: Sequence[str],
        k: int,
        filters: SearchFilters,
    ) -> list[ScoredChunk]:
        """`nearest_chunks` over the vectors held in memory, with the same time
        window (a float32 query)."""
        ...

    def current_chunks(self, chunk_ids: Sequence[int], filters: SearchFilters) -> set[int]:
        """The chunks among `chunk_ids` whose vector was made from their current text
        and that pass the language and path filters."""
        ...

    def chunk_places(self, chunk_ids: Sequence[int]) -> list[ChunkPlace]:
        """Node, layer, path and language of each chunk that exists."""
        ...

    def chunk_rows(self, chunk_ids: Iterable[int]) -> dict[int, ChunkRow]:
        """Chunks by id, with their text."""
        ...

    def child_spans(self, parent_ids: Sequence[int]) -> dict[int, list[ChildSpan]]:
        """parent node id -> the spans of its children, by child id."""
        ...

    def chunk_times(self, chunk_ids: Iterable[int]) -> dict[int, TimeRow]:
        """Git times of the chunks that have them."""
        ...

    def node_rows(self, node_ids: Iterable[int]) -> dict[int, NodeRow]:
        """Definitions by id."""
        ...

    def edges_from(self, node_id: int) -> list[EdgeRow]:
        """Edges leaving a node."""
        ...

    def edges_to(self, node_id: int) -> list[EdgeRow]:
        """Edges arriving at a node."""
        ...

    def meta(self, key: str) -> str | None:
        """A value of the index's meta table (e.g. `root`, the indexed folder)."""
        ...
