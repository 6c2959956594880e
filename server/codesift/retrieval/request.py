"""The search request and response records, shared by the CLI and the LSP server."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from codesift.config import SearchSettings
from codesift.errors import QueryError
from codesift.history.records import ChangeInfo
from codesift.parsing.languages import DOCUMENT_LANGUAGES, LANGUAGES
from codesift.parsing.model import CHUNK_LAYERS
from codesift.timespec import TimeFilter, TimeValue, time_filter

__all__ = [
    "BROAD_LAYERS",
    "KNOWN_LANGUAGES",
    "MAX_QUERY_CHARS",
    "GraphEdge",
    "GraphNode",
    "RelatedResource",
    "SearchRequest",
    "SearchResponse",
    "SearchResult",
    "SearchWarning",
    "StreamHit",
    "StreamReport",
    "normalize_languages",
]

# A broad search covers code, summaries and docs; the bare `ast` layer is only
# searched when asked for, so signatures are not duplicated in broad results.
BROAD_LAYERS: tuple[str, ...] = ("code", "summary", "doc")
MAX_QUERY_CHARS = 2000
SNIPPET_MIN, SNIPPET_MAX = 80, 4000
_SEARCH_DEFAULTS = SearchSettings()

# What a file's language can be (parsing.languages.detect_language) and the
# short names people type for them.
KNOWN_LANGUAGES: tuple[str, ...] = (*sorted(LANGUAGES), *DOCUMENT_LANGUAGES, "text")
LANGUAGE_ALIASES: dict[str, str] = {
    "py": "python",
    "js": "javascript",
    "jsx": "javascript",
    "ts": "typescript",
    "c++": "cpp",
    "cxx": "cpp",
    "c#": "csharp",
    "cs": "csharp",
    "rb": "ruby",
    "kt": "kotlin",
    "rs": "rust",
    "golang": "go",
    "sh": "bash",
    "shell": "bash",
    "md": "markdown",
    "hs": "haskell",
    "ex": "elixir",
}


def normalize_languages(languages: tuple[str, ...]) -> tuple[str, ...]:
    """Language names as the index stores them (`ts` -> `typescript`); QueryError
    naming the known languages for one that is not."""
    known: list[str] = []
    unknown: list[str] = []
    for raw in languages:
        name = raw.strip().lower()
        name = LANGUAGE_ALIASES.get(name, name)
        (known if name in KNOWN_LANGUAGES else unknown).append(name or repr(raw))
    if unknown:
        raise QueryError(
            f"unknown language(s) {', '.join(unknown)}; choose from {', '.join(KNOWN_LANGUAGES)}"
        )
    return tuple(dict.fromkeys(known))


@dataclass(frozen=True, slots=True)
class SearchRequest:
    query: str
    # The defaults are the settings' (config.py): one place for them.
    top_k: int = _SEARCH_DEFAULTS.top_k
    layers: tuple[str, ...] = BROAD_LAYERS
    languages: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()  # glob patterns over root-relative paths
    snippet_chars: int = _SEARCH_DEFAULTS.snippet_chars
    max_tokens: int | None = None
    include_graph: bool = False
    # Git time (codesift.timespec): ISO 8601 dates or times, relative forms
    # ("2w", "3 days ago"), git revisions (resolved in `root`), or Unix seconds.
    as_of: TimeValue | None = None  # only content created at or before this time
    since: TimeValue | None = None  # only content last changed at or after this time
    until: TimeValue | None = None  # only content last changed at or before this time

    def time_filter(self) -> TimeFilter:
        """The time options as a TimeFilter (QueryError on a malformed one)."""
        return time_filter(self.as_of, self.since, self.until)

    def validated(self, *, root: Path | None = None) -> SearchRequest:
        """Return a request with clamped values and times in Unix seconds, or raise
        QueryError. `root` is the workspace where git revisions are resolved."""
        query = self.query.strip()
        if not query:
            raise QueryError("the query is empty")
        if len(query) > MAX_QUERY_CHARS:
            raise QueryError(
                f"the query is {len(query)} characters long; the limit is {MAX_QUERY_CHARS}"
            )
        if self.top_k < 1 or self.top_k > 200:
            raise QueryError(f"top_k must be between 1 and 200, got {self.top_k}")
        layers = tuple(dict.fromkeys(self.layers)) or BROAD_LAYERS
        unknown = [layer for layer in layers if layer not in CHUNK_LAYERS]
        if unknown:
            raise QueryError(
                f"unknown layer(s) {', '.join(unknown)}; choose from {', '.join(CHUNK_LAYERS)}"
            )
        if self.max_tokens is not None and self.max_tokens < 50:
            raise QueryError(f"max_tokens must be at least 50, got {self.max_tokens}")
        snippet = min(max(self.snippet_chars, SNIPPET_MIN), SNIPPET_MAX)
        times = time_filter(self.as_of, self.since, self.until, root=root)
        return SearchRequest(
            query=query,
            top_k=self.top_k,
            layers=layers,
            languages=normalize_languages(self.languages),
            paths=self.paths,
            snippet_chars=snippet,
            max_tokens=self.max_tokens,
            include_graph=self.include_graph,
            as_of=times.as_of,
            since=times.since,
            until=times.until,
        )


@dataclass(frozen=True, slots=True)
class StreamHit:
    """Provenance: a stream found this result at `rank` (1-based) with `score`."""

    stream: str
    rank: int
    score: float


@dataclass(frozen=True, slots=True)
class GraphNode:
    """A definition next to a result in the code graph."""

    id: int
    path: str
    kind: str
    name: str
    qualified_name: str
    start_line: int
    end_line: int


@dataclass(frozen=True, slots=True)
class RelatedResource:
    """A document collection's resource that mentions a code result (its qualified
    name, name, file or table: `term`)."""

    collection: str
    path: str
    start_line: int
    end_line: int
    title: str
    term: str


@dataclass(frozen=True, slots=True)
class GraphEdge:
    """An edge between a result's node and `node`.

    kind: the edge's true kind: calls, contains, inherits or imports.
    direction: "out" when the result is the edge's source (it calls, inherits from or
    imports `node`), "in" when `node` is (it calls, contains, inherits from or imports
    the result).
    relation: the pair named for people: callee, caller, parent, base, subclass,
    imports, imported_by.
    line: where the edge is written (the call site, the nested definition's line).
    """

    relation: str
    kind: str
    direction: str
    line: int
    node: GraphNode


@dataclass(frozen=True, slots=True)
class SearchResult:
    path: str
    start_line: int
    end_line: int
    kind: str
    qualified_name: str
    layer: str
    language: str
    score: float
    snippet: str
    snippet_start_line: int
    truncated: bool
    provenance: tuple[StreamHit, ...]
    chunk_id: int
    node_id: int | None
    # created / last-changed time and the commit that last changed it (None when
    # the index has no times for it yet)
    history: ChangeInfo | None = None
    # With include_graph: the node's parent container, callees and callers (code results).
    graph: tuple[GraphEdge, ...] = ()
    # The document collection a resource comes from ("" for a workspace result).
    collection: str = ""
    # Collection resources that mention this code result (engine/collections.py).
    related: tuple[RelatedResource, ...] = ()


@dataclass(frozen=True, slots=True)
class StreamReport:
    stream: str
    candidates: int
    ms: float
    error: str | None = None
    # Its weight in the fusion of this search (None: not fused, e.g. cancelled).
    weight: float | None = None
    # The feedback stream's words added to the query (retrieval/feedback.py).
    added_terms: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SearchWarning:
    """Something the caller should know about a page: `code` is a stable name
    (`history_pending`: a time filter ran while the git history pass was not
    done, so files not timed yet could not pass it), `message` says it to a person."""

    code: str
    message: str
    folder: str | None = None


@dataclass(slots=True)
class SearchResponse:
    query: str
    results: list[SearchResult] = field(default_factory=list)
    streams: list[StreamReport] = field(default_factory=list)
    took_ms: float = 0.0
    tokens: int = 0  # estimated tokens of the results (see retrieval.budget)
    truncated_by_budget: bool = False
    # Milliseconds per stage: embed (query vector), streams (all of them, wall time),
    # rank (fusion, priors, collapse), rerank, results (snippets), graph.
    stages: dict[str, float] = field(default_factory=dict)
    # What the rerank stage did: "off", "applied", or "skipped: <reason>".
    rerank: str = "off"
    # The best resources of the workspace's document collections (engine/collections.py),
    # at most search.resource_top_k, each with its `collection` set.
    resources: list[SearchResult] = field(default_factory=list)
    warnings: list[SearchWarning] = field(default_factory=list)
