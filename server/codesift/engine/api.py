"""The engine's query interface, whatever holds the index.

`SearchSources` is a set of places one search reads: a server's live folders
(engine/live_search.py, `LiveFolders`), one-shot engines over folders on disk
(engine/folder_search.py, `EngineFolders`), the shared PostgreSQL index alone
(`SharedIndexSource`), the folders with the shared index beside them when the
settings name one. engine/conductor.py's `conduct` runs the same steps over any
of them: the routing plan, each source's page, the test filter, the page merge,
the resources.

`IndexReader` is what reads one index's definitions and graph: the local index
(engine/session.py, `Engine`), a server's live folder (engine/live_engine.py,
`LiveEngine`, on the server's reader) and the shared index (engine/postgres.py,
`SharedSearch`), all three over the one symbol lookup and graph walk
(engine/symbols.find_symbols, engine/graph.walk_graph on store/ports.NodeStore).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from codesift.retrieval.request import SearchRequest, SearchResponse, SearchResult

if TYPE_CHECKING:
    from codesift.engine.live import Cancellation
    from codesift.engine.results import GraphQuery, GraphResult, NodeRow, SymbolMatches
    from codesift.engine.shared_overlay import SharedPage
    from codesift.timespec import TimeFilter, TimeValue

__all__ = ["IndexReader", "SearchSources", "SourcePlan"]


@dataclass(frozen=True, slots=True)
class SourcePlan:
    """What a search reads, from the routing plan (engine/unscoped.py's rules)."""

    sources: list[str]  # the sources searched, by name, in their order
    # The sources the router chose, best first; None: not narrowed (every source
    # searched); []: it narrowed and none passed its threshold.
    routed: list[str] | None = None
    # Every source the router ranked, best first; empty: not routed.
    ranked: list[str] = field(default_factory=list)
    # Each page's weight in the merge, by page name; empty: by score alone.
    weights: dict[str, float] = field(default_factory=dict)
    # The shared index's repositories to search (None: every one in view).
    shared_keys: list[str] | None = None


class SearchSources(Protocol):
    """The places one search reads, and how each answers."""

    def plan(self, query: str, cancel: Cancellation | None) -> SourcePlan:
        """Which sources `query` is searched in, and how their pages weigh."""
        ...

    def page(self, name: str, top_k: int, cancel: Cancellation | None) -> SearchResponse:
        """The source's page for the search, `top_k` results at most."""
        ...

    def shared(
        self, request: SearchRequest, only: Sequence[str] | None, cancel: Cancellation | None
    ) -> SharedPage | None:
        """The shared index's pages (only the repositories in `only`, when given);
        None without a shared index."""
        ...

    def resources(
        self,
        searched: Sequence[str],
        request: SearchRequest,
        results: list[SearchResult],
        cancel: Cancellation | None,
    ) -> tuple[list[SearchResult], list[SearchResult]]:
        """The best resources of the collections the searched sources list, and
        `results` each with the resources that mention it (`related`)."""
        ...


class IndexReader(Protocol):
    """One index's definitions and graph (the reading commands' interface)."""

    def times(
        self,
        as_of: TimeValue | None = None,
        since: TimeValue | None = None,
        until: TimeValue | None = None,
    ) -> TimeFilter:
        """A git-time window, its revisions resolved where the index's folder is."""
        ...

    def symbols(self, name: str, limit: int = 20, times: TimeFilter | None = None) -> SymbolMatches:
        """Definitions named `name` (exact, then similar names), at most `limit`."""
        ...

    def start_nodes(
        self, target: str | int, times: TimeFilter | None = None, limit: int = 20
    ) -> list[NodeRow]:
        """The definitions named `target` (at most `limit`), or the node with id `target`."""
        ...

    def graph(self, target: str | int, query: GraphQuery) -> GraphResult:
        """The walk from the definitions named `target`, or the node with id `target`."""
        ...

    def close(self) -> None: ...
