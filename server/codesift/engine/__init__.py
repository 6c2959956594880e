"""The codesift engine: one API under every front end (CLI, language server, MCP).

Open a workspace (root, settings and index path resolved once), then ask it:

    from codesift.engine import Engine, GraphQuery, Workspace

    ws = Workspace.resolve(None)            # nearest index, else the git work tree
    with Engine(ws) as engine:              # the index is updated on first use
        page = engine.search(engine.request("where are retries scheduled", top_k=5))
        found = engine.symbols("RetryPolicy")             # exact, then similar names
        walk = engine.graph("charge", GraphQuery(direction="callers", depth=2))
    status = index_status(ws)
    report, vectors, conn = reindex(ws)     # writers queue on the index's write lock

Results are frozen records (engine/results.py, retrieval/request.py); failures
are the named errors of codesift.errors, which each front end maps once (CLI
exit codes, JSON-RPC codes, MCP tool errors). A long-running server (the language
server, the MCP server) keeps each folder's index live with
`codesift.engine.live` (a writer thread and a watcher per folder, reader
threads with their own connections) and reads through its `LiveReader`
(search, symbols, graph, status, waiting for freshness up to a deadline); that
module is imported on its own, so that one-shot commands do not load the
watcher.

The names below are loaded on first use (PEP 562): `from codesift.engine import
Engine, Workspace` loads the session and the workspace, not the indexer, the
embedding models or git, which a search of an up-to-date index never needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from codesift.lazy_names import lazy_names

if TYPE_CHECKING:
    from codesift.engine.access import IndexReport, open_for_reading, summary_line, update_index
    from codesift.engine.folder_search import FolderResult, FoldersResponse, search_folders
    from codesift.engine.graph import check_graph_query, start_nodes, walk_graph
    from codesift.engine.listener import EngineListener
    from codesift.engine.models import embedder_key, load_rerank, make_embedder, query_path
    from codesift.engine.results import (
        CONFIDENCES,
        EDGE_KINDS,
        EmbedReport,
        GraphLink,
        GraphQuery,
        GraphResult,
        IndexStatus,
        RerankStatus,
        Symbol,
        SymbolMatches,
        VectorStatus,
    )
    from codesift.engine.search import FolderPage, MergedPage, merge_pages
    from codesift.engine.session import Engine, embed, reindex
    from codesift.engine.status import database_bytes, index_status, read_status
    from codesift.engine.symbols import find_symbols
    from codesift.engine.workspace import Workspace, db_path_for, find_root, indexed_root

__all__ = [
    "CONFIDENCES",
    "EDGE_KINDS",
    "EmbedReport",
    "Engine",
    "EngineListener",
    "FolderPage",
    "FolderResult",
    "FoldersResponse",
    "GraphLink",
    "GraphQuery",
    "GraphResult",
    "IndexReport",
    "IndexStatus",
    "MergedPage",
    "RerankStatus",
    "Symbol",
    "SymbolMatches",
    "VectorStatus",
    "Workspace",
    "check_graph_query",
    "database_bytes",
    "db_path_for",
    "embed",
    "embedder_key",
    "find_root",
    "find_symbols",
    "index_status",
    "indexed_root",
    "load_rerank",
    "make_embedder",
    "merge_pages",
    "open_for_reading",
    "query_path",
    "read_status",
    "reindex",
    "search_folders",
    "start_nodes",
    "summary_line",
    "update_index",
    "walk_graph",
]

# Where each name lives (a test checks this table against __all__).
_HOME = {
    "IndexReport": "codesift.engine.access",
    "open_for_reading": "codesift.engine.access",
    "summary_line": "codesift.engine.access",
    "update_index": "codesift.engine.access",
    "FolderResult": "codesift.engine.folder_search",
    "FoldersResponse": "codesift.engine.folder_search",
    "search_folders": "codesift.engine.folder_search",
    "check_graph_query": "codesift.engine.graph",
    "start_nodes": "codesift.engine.graph",
    "walk_graph": "codesift.engine.graph",
    "EngineListener": "codesift.engine.listener",
    "embedder_key": "codesift.engine.models",
    "load_rerank": "codesift.engine.models",
    "make_embedder": "codesift.engine.models",
    "query_path": "codesift.engine.models",
    "CONFIDENCES": "codesift.engine.results",
    "EDGE_KINDS": "codesift.engine.results",
    "EmbedReport": "codesift.engine.results",
    "GraphLink": "codesift.engine.results",
    "GraphQuery": "codesift.engine.results",
    "GraphResult": "codesift.engine.results",
    "IndexStatus": "codesift.engine.results",
    "RerankStatus": "codesift.engine.results",
    "Symbol": "codesift.engine.results",
    "SymbolMatches": "codesift.engine.results",
    "VectorStatus": "codesift.engine.results",
    "FolderPage": "codesift.engine.search",
    "MergedPage": "codesift.engine.search",
    "merge_pages": "codesift.engine.search",
    "Engine": "codesift.engine.session",
    "embed": "codesift.engine.session",
    "reindex": "codesift.engine.session",
    "database_bytes": "codesift.engine.status",
    "index_status": "codesift.engine.status",
    "read_status": "codesift.engine.status",
    "find_symbols": "codesift.engine.symbols",
    "Workspace": "codesift.engine.workspace",
    "db_path_for": "codesift.engine.workspace",
    "find_root": "codesift.engine.workspace",
    "indexed_root": "codesift.engine.workspace",
}

__getattr__, __dir__ = lazy_names(__name__, _HOME, globals())
