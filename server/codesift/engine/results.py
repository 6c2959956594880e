"""The engine's typed results: frozen records every front end renders its own way.

This module is the front ends' vocabulary: besides the engine's own records it
names the search's (SearchRequest, SearchResponse, SearchResult: defined in
retrieval/request.py) and a definition's row (NodeRow, store/reader.py), so that
no front end imports retrieval/ or store/ for a type (the import contracts in
pyproject.toml forbid it).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any

from codesift.history.records import ChangeInfo
from codesift.retrieval.request import (
    BROAD_LAYERS,
    MAX_QUERY_CHARS,
    SearchRequest,
    SearchResponse,
    SearchResult,
    SearchWarning,
    StreamReport,
)
from codesift.store.reader import NodeRow
from codesift.timespec import TimeFilter

if TYPE_CHECKING:  # history/update.py loads pygit2 and numpy: not for an annotation
    from codesift.history.update import HistoryStatus

__all__ = [
    "BROAD_LAYERS",
    "EDGE_KINDS",
    "MAX_QUERY_CHARS",
    "EmbedReport",
    "GraphLink",
    "GraphQuery",
    "GraphResult",
    "IndexStatus",
    "NodeRow",
    "RerankStatus",
    "SearchRequest",
    "SearchResponse",
    "SearchResult",
    "SearchWarning",
    "StreamReport",
    "Symbol",
    "SymbolMatches",
    "VectorStatus",
    "link_json",
    "result_json",
    "symbol_json",
]

# The most definitions a symbols lookup returns (engine/symbols.py).
MAX_SYMBOLS = 200
# What a front end's `tests` option takes: keep the results in test files, leave
# them out, or leave them out unless the query asks for test code (engine/search.py,
# `keeps_tests`). Here, with the results, so that the CLI's parser reads it without
# loading the search.
TESTS_CHOICES = ("include", "exclude", "auto")
EDGE_KINDS: tuple[str, ...] = ("calls", "contains", "imports", "inherits", "references")


@dataclass(frozen=True, slots=True)
class Symbol:
    """A definition found by name. `score` orders fuzzy matches (exact ones: 0)."""

    node: NodeRow
    history: ChangeInfo | None = None
    score: float = 0.0


@dataclass(frozen=True, slots=True)
class SymbolMatches:
    """Definitions named as asked (`exact`), then similar names (`fuzzy`, best first)."""

    name: str
    exact: tuple[Symbol, ...] = ()
    fuzzy: tuple[Symbol, ...] = ()

    @property
    def all(self) -> tuple[Symbol, ...]:
        return (*self.exact, *self.fuzzy)


@dataclass(frozen=True, slots=True)
class GraphQuery:
    """A walk along edges from some definitions.

    direction: `callers` (edges into a node), `callees` (edges out of it) or `both`;
    depth: how many edges away (1..10); kinds: the edge kinds followed;
    max_nodes: the walk stops (truncated) when it would show more definitions;
    times: neighbours outside this git-time window are left out, with their edges.
    """

    direction: str = "both"
    depth: int = 1
    kinds: tuple[str, ...] = ("calls",)
    max_nodes: int = 100
    times: TimeFilter = field(default_factory=TimeFilter)


# How an edge's target was found, from the most to the least certain: by the
# language's scope rules in the caller's file (`scope`), through the receiver's
# class or type (`type`), through an import (`import`), as the only definition of
# that name in the index (`unique`), or by a guess among several definitions of the
# name (`guess`). The last two are found by the name alone: guesses.
CONFIDENCES = ("scope", "type", "import", "unique", "guess")
GUESSES = frozenset({"unique", "guess"})
# edges.resolution -> confidence (`local` and `hint`: indexes made before these).
_CONFIDENCE_OF = {
    "scope": "scope",
    "local": "scope",
    "type": "type",
    "import": "import",
    "hint": "import",
    "unique": "unique",
    "guess": "guess",
}


def confidence_of(resolution: str | None) -> str | None:
    """The confidence of an edge stored with `resolution` (None: unresolved)."""
    return _CONFIDENCE_OF.get(resolution or "")


@dataclass(frozen=True, slots=True)
class GraphLink:
    """An edge, with its true kind; `target` is None for a name not resolved to a
    definition (`target_name` is what the code says). `confidence`: how the
    target was found (CONFIDENCES), None while unresolved."""

    source: int
    target: int | None
    target_name: str
    kind: str
    line: int
    resolution: str | None
    confidence: str | None = None

    @property
    def guessed(self) -> bool:
        """Found by the name alone (a unique name or a guess among several)."""
        return self.confidence in GUESSES


@dataclass(frozen=True, slots=True)
class GraphResult:
    roots: tuple[int, ...]
    nodes: tuple[Symbol, ...]  # roots first, then in the order the walk met them
    edges: tuple[GraphLink, ...]
    # The walk stopped at its max_nodes; `omitted` definitions it met were not
    # shown (exact for one step from the definitions shown, else a lower bound).
    truncated: bool = False
    omitted: int = 0
    # Files whose calls were not resolved yet (the call pass of a large index run
    # is under way, engine/call_phase.py): their calls edges have no targets.
    calls_pending: int = 0

    def node(self, node_id: int) -> Symbol | None:
        for symbol in self.nodes:
            if symbol.node.id == node_id:
                return symbol
        return None


@dataclass(frozen=True, slots=True)
class VectorStatus:
    embedded: int  # chunks with a vector of the configured model
    embeddable: int
    queries: str  # int8, pending, batch, off
    queries_error: str | None
    # Chunks with a vector of any model (the first tier's static ones too): what
    # the vector stream searches; and how many vectors each model made.
    usable: int = 0
    models: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RerankStatus:
    enabled: bool
    provider: str
    model_path: str
    active: bool
    warning: str | None


@dataclass(frozen=True, slots=True)
class IndexStatus:
    """What an index holds (counts by kind and language), its size and freshness."""

    root: str
    database: str
    exists: bool
    database_bytes: int = 0
    files: int = 0
    nodes: int = 0
    edges: int = 0
    chunks: int = 0
    languages: dict[str, int] = field(default_factory=dict)
    vectors: VectorStatus | None = None
    last_update: float | None = None
    history: HistoryStatus | None = None
    rerank: RerankStatus | None = None
    read_only: bool = False  # this user may read the index but not write it
    # Files whose calls wait for the call pass (engine/call_phase.py).
    calls_pending: int = 0


@dataclass(frozen=True, slots=True)
class EmbedReport:
    """`embedded` vectors computed here; `running_elsewhere` when another process
    holds the embed lock (`holder` says which); `failed` why the model could not run."""

    embedded: int = 0
    running_elsewhere: bool = False
    holder: str | None = None
    embeddable: int = 0
    total_embedded: int = 0
    failed: str | None = None

    def as_json(self) -> dict[str, Any]:
        """`codesift embed --json` (docs/cli.md)."""
        if self.running_elsewhere:
            return {"embedded": 0, "running_elsewhere": True, "holder": self.holder or ""}
        return {
            "embedded": self.embedded,
            "running_elsewhere": False,
            "vectors": {"embedded": self.total_embedded, "embeddable": self.embeddable},
        }


# -- the JSON of each record (front ends add only their own fields: URIs, folders,
# citations, string ids) --------------------------------------------------------------


def result_json(result: SearchResult) -> dict[str, Any]:
    """A search result (or a collection's resource) as JSON: its fields, each
    provenance entry (stream, rank, raw score) an object."""
    if result.graph or result.related:
        data = asdict(result)
        data["provenance"] = [dict(hit) for hit in data["provenance"]]
        return data
    # The common case, field by field: what asdict gives, without its deep copy of
    # every value (a tenth of a millisecond a page over HTTP).
    data = {name: getattr(result, name) for name in _RESULT_FIELDS}
    data["provenance"] = [
        {"stream": hit.stream, "rank": hit.rank, "score": hit.score} for hit in result.provenance
    ]
    history = result.history
    data["history"] = (
        None
        if history is None
        else {
            "created": history.created,
            "changed": history.changed,
            "commit": history.commit,
            "subject": history.subject,
            "source": history.source,
        }
    )
    return data


_RESULT_FIELDS = tuple(f.name for f in fields(SearchResult))


def symbol_json(symbol: Symbol) -> dict[str, Any]:
    """A definition as JSON: the node's fields and its git history (null until
    the history pass has timed its file)."""
    data = asdict(symbol.node)
    data["history"] = asdict(symbol.history) if symbol.history is not None else None
    return data


def link_json(link: GraphLink) -> dict[str, Any]:
    """An edge of a graph walk as JSON (its ids as numbers)."""
    return asdict(link)
