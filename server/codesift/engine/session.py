"""`Engine`: one workspace opened for a front end that answers one caller at a time
(the CLI, an MCP server), and the index operations that need no open connection.

    engine = Engine(Workspace.resolve(root), listener)
    response = engine.search(engine.request("retry failed charge"))
    symbols = engine.symbols("RetryPolicy", limit=20)
    callers = engine.graph("charge", GraphQuery(direction="callers"))
    engine.close()

Requests are checked before the index is touched (a bad option never starts
an index run); the index is opened on first use, brought up to date first
unless `update=False`, under the policy of engine/access.py.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import apsw

from codesift.engine.access import (
    IndexReport,
    after_index_phases,
    embed_lock,
    fill_first_tier,
    fill_missing_vectors,
    open_for_reading,
    start_background_embedding,
    update_index,
)
from codesift.engine.graph import check_graph_query, start_nodes, walk_graph
from codesift.engine.listener import EngineListener
from codesift.engine.results import MAX_SYMBOLS, EmbedReport
from codesift.engine.workspace import Workspace
from codesift.errors import EmbeddingError, QueryError, ReadOnlyIndexError
from codesift.store.database import index_writable, open_database
from codesift.store.locks import IndexLock
from codesift.store.reader import NodeRow
from codesift.timespec import TimeFilter, TimeValue, time_filter

# Imported where used, so that a search of an up-to-date index without vectors
# loads neither the indexer nor the embedding models, git nor the collections.
if TYPE_CHECKING:
    from codesift.embedding import Embedder
    from codesift.engine.results import GraphQuery, GraphResult, IndexStatus, SymbolMatches
    from codesift.indexer import IndexSummary
    from codesift.retrieval import Searcher, SearchRequest, SearchResponse

__all__ = ["FOREGROUND_EMBED_LIMIT", "Engine", "embed", "open_collection", "reindex"]

log = logging.getLogger(__name__)

# A search computes this many missing vectors itself before answering; more are
# left to a background `codesift embed` so the answer is not delayed.
FOREGROUND_EMBED_LIMIT = 256


class Engine:
    """A workspace opened for reading: search, symbols, graph (see the module doc).

    update: bring the index up to date before the first read (building it when it
    does not exist); vectors: use (and compute a few missing) vectors for searches;
    quiet: no progress reports (notes and warnings still go to the listener).
    """

    def __init__(
        self,
        workspace: Workspace,
        listener: EngineListener | None = None,
        *,
        update: bool = True,
        vectors: bool = True,
        quiet: bool = False,
        command: str = "codesift",
    ) -> None:
        self.workspace = workspace
        self.listener = listener or EngineListener()
        self.update = update
        self.vectors = vectors
        self.quiet = quiet
        self.command = command
        self.built: IndexSummary | None = None  # the run that built a new index
        self._conn: apsw.Connection | None = None
        self._searcher: Searcher | None = None
        self._history_checked = False  # history_for_times ran on this connection
        self._calls_checked = False  # calls_for_graph ran on this connection

    @property
    def root(self) -> Path:
        return self.workspace.root

    # -- requests -----------------------------------------------------------------

    def times(
        self,
        as_of: TimeValue | None = None,
        since: TimeValue | None = None,
        until: TimeValue | None = None,
    ) -> TimeFilter:
        """A git-time window in Unix seconds (revisions resolved in the workspace);
        QueryError for a malformed one."""
        return time_filter(as_of, since, until, root=self.root)

    def request(self, query: str, **options: Any) -> SearchRequest:
        """A search request with the workspace's defaults (`search.top_k`,
        `search.snippet_chars`) for the options not given (or given as None)."""
        from codesift.engine.search import search_request

        return search_request(self.workspace.settings.search, query, **options)

    # -- the index ------------------------------------------------------------------

    def connection(self) -> apsw.Connection:
        """The connection reads use, opened (and the index updated) on first use."""
        if self._conn is None:
            self._conn, self.built = open_for_reading(
                self.workspace,
                self.listener,
                update=self.update,
                quiet=self.quiet,
                purpose=f"{self.command}: updating the index",
                # A search without vectors answers when the rows are written.
                static_vectors=None if self.vectors else False,
            )
        return self._conn

    def history_for_times(self) -> None:
        """Before a git-time filter: finish the history pass in this process (or
        wait for the one another process runs, with its progress), so that no
        file is filtered out for want of times. An index this user cannot write,
        or one opened without updating, is filtered as it is."""
        if self._history_checked or not self.update:
            return
        self._history_checked = True
        conn = self.connection()
        if not index_writable(self.workspace.db_path):
            return
        from codesift.engine.history import complete_history
        from codesift.history.update import history_pending

        pending = history_pending(conn, self.root)
        if not pending.pending:
            return
        holder = IndexLock(self.workspace.db_path, "history").holder()
        who = f" (another codesift process is at it: {holder})" if holder else ""
        # Said even with --json (on stderr): the answer is delayed, and why.
        self.listener.note(
            "the time filter waits for the git history pass"
            f" ({pending.commits_total - pending.commits_done:,} commits,"
            f" {pending.files:,} files left){who}"
        )
        complete_history(
            self.workspace,
            conn,
            self.listener,
            quiet=self.quiet,
            purpose=f"{self.command}: git history for a time filter",
        )

    def calls_for_graph(self) -> None:
        """Before a graph walk: finish the call pass in this process (or wait for
        the one another process runs, with its progress), so that no caller is
        silently missing. An index this user cannot write, or one opened without
        updating, is walked as it is (its answer says `calls_pending`)."""
        if self._calls_checked or not self.update:
            return
        self._calls_checked = True
        conn = self.connection()
        if not index_writable(self.workspace.db_path):
            return
        from codesift.store.call_targets import calls_owed, calls_pending_count

        if not calls_owed(conn):
            return
        from codesift.engine.call_phase import complete_calls

        holder = IndexLock(self.workspace.db_path, "calls").holder()
        who = f" (another codesift process is at it: {holder})" if holder else ""
        self.listener.note(
            f"the graph waits for the call pass ({calls_pending_count(conn):,} files left){who}"
        )
        complete_calls(
            self.workspace,
            conn,
            self.listener,
            quiet=self.quiet,
            purpose=f"{self.command}: resolving calls for the graph",
        )

    def refresh(self) -> None:
        """Let the next read bring the index up to date again (a long-running front
        end calls this when files changed); the connection is reopened."""
        self.close()

    def close(self) -> None:
        searcher, self._searcher = self._searcher, None
        if searcher is not None:
            searcher.close()
        conn, self._conn = self._conn, None
        self._history_checked = False
        self._calls_checked = False
        if conn is not None:
            conn.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- operations -------------------------------------------------------------------

    def search(
        self,
        request: SearchRequest,
        cancel: threading.Event | None = None,
        *,
        tests: bool = True,
    ) -> SearchResponse:
        """This folder's page for `request` (checked first): retrieval/search.py's
        Searcher over the index. `tests` False: the test filter (engine/search.py,
        `without_tests`). The document collections' resources are the conductor's
        step (engine/conductor.py; `folder_search.search_folder` for one folder)."""
        # The search's modules (numpy, the streams) load here: callers and
        # symbols, one-shot, never need them.
        from codesift.engine.search import wide_request, without_tests

        request = request.validated(root=self.root)
        conn = self.connection()
        if request.as_of is not None or request.since is not None or request.until is not None:
            self.history_for_times()
        if self._searcher is None:
            self._searcher = self._make_searcher(conn)
        response = self._searcher.search(wide_request(request, tests), cancel=cancel)
        if not tests:
            response = without_tests(response, request.top_k)
        return response

    def symbols(self, name: str, limit: int = 20, times: TimeFilter | None = None) -> SymbolMatches:
        """Definitions named `name` (exact, then similar names), at most `limit`."""
        if not name.strip():
            raise QueryError("the name is empty")
        if not 1 <= limit <= MAX_SYMBOLS:
            raise QueryError(f"limit must be between 1 and {MAX_SYMBOLS}, got {limit}")
        conn = self.connection()
        if times:
            self.history_for_times()
        from codesift.engine.symbols import find_symbols
        from codesift.retrieval.search import Searcher

        with Searcher(conn, self.workspace.settings.search, parallel=False) as words:
            return find_symbols(conn, name, limit, times, searcher=words)

    def graph(self, target: str | int, query: GraphQuery) -> GraphResult:
        """Walk from the definitions named `target` (a name or qualified name, at
        most 20 of them) or from the node with id `target`."""
        check_graph_query(query)
        if isinstance(target, str) and not target.strip():
            raise QueryError("the name is empty")
        conn = self.connection()
        if query.times:
            self.history_for_times()
        self.calls_for_graph()
        # One more than the walk may show: it then says it stopped (truncated).
        return walk_graph(conn, self.start_nodes(target, query.times, query.max_nodes + 1), query)

    def status(self) -> IndexStatus:
        """The index's status (see `index_status`); needs no open connection."""
        from codesift.engine.status import index_status

        return index_status(self.workspace)

    def reindex(self, *, rebuild: bool = False, vectors: bool = True) -> IndexReport:
        """Update (or, with `rebuild`, rebuild) the index now, waiting for the write
        lock, then compute missing vectors; the next read reopens the index."""
        self.close()
        report, _, conn = reindex(
            self.workspace, self.listener, rebuild=rebuild, vectors=vectors, quiet=self.quiet
        )
        conn.close()
        return report

    def embed(self) -> EmbedReport:
        """Compute the missing vectors (see `embed`)."""
        return embed(self.workspace, self.listener, quiet=self.quiet)

    def start_nodes(
        self, target: str | int, times: TimeFilter | None = None, limit: int = 20
    ) -> list[NodeRow]:
        """The definitions named `target` (at most `limit`), or the node with id `target`."""
        return start_nodes(self.connection(), target, times, limit)

    # -- vectors for a one-shot search ----------------------------------------------------

    def _make_searcher(self, conn: apsw.Connection) -> Searcher:
        """A searcher with the vector stream when embeddings are on and vectors exist
        (missing vectors are computed now (a few) or in the background (many)), and
        the rerank stage when it is on and its model loads."""
        from codesift.engine.models import load_rerank, make_embedder
        from codesift.retrieval.search import Searcher

        settings = self.workspace.settings
        rerank = load_rerank(settings)
        if rerank.warning:
            self.listener.warning(rerank.warning)

        def searcher(embedder: Embedder | None) -> Searcher:
            # One caller at a time, most often one search per process (the CLI): the
            # streams run one after the other on this connection. Worker threads, each
            # opening its own connection, cost more than they overlap here (stdlib
            # copy, 10 queries: median 17.8 -> 9.9 ms per search, the first one more).
            return Searcher(
                conn,
                settings.search,
                embedder,
                reranker=rerank.reranker,
                rerank_settings=settings.rerank,
                parallel=False,
            )

        if not settings.embedding.enabled or not self.vectors:
            return searcher(None)
        embedder = make_embedder(settings.embedding)
        return searcher(embedder if self._vectors_for_search(conn, embedder) else None)

    def _vectors_for_search(self, conn: apsw.Connection, embedder: Embedder) -> bool:
        """Compute a few missing vectors now, or start the background embedding of
        many; whether the index has vectors to compare a query with."""
        from codesift.embedding import vector_coverage

        ws = self.workspace
        layers = ws.settings.embedding.layers
        coverage = vector_coverage(conn, layers, embedder.model_id)
        writable = index_writable(ws.db_path)
        if writable and coverage.embedded < coverage.embeddable:
            holder = _writing_elsewhere(ws)
            if holder is not None:
                # Vectors are written under the write lock: a fill now would wait
                # for the other writer (a first index: the whole of it) in silence.
                # (Opening the index said already that it is searched as it is.)
                log.info("%s is writing the index: no vectors computed now", holder)
                return coverage.usable > 0
        if embedder.first_tier is not None and coverage.usable < coverage.embeddable and writable:
            # The static first tier, now: seconds for a whole index.
            lock = embed_lock(ws, f"{self.command}: computing static vectors")
            if lock is not None:
                try:
                    fill_first_tier(ws, conn, embedder, self.listener, quiet=self.quiet)
                except EmbeddingError as exc:
                    self.listener.warning(f"{exc}; no static vectors")
                finally:
                    lock.release()
                coverage = vector_coverage(conn, layers, embedder.model_id)
        missing = coverage.embeddable - coverage.embedded
        # The static model computes even a large index's vectors in seconds: now.
        foreground = embedder.fast or missing <= FOREGROUND_EMBED_LIMIT
        if missing > 0 and foreground and writable:
            lock = embed_lock(ws, f"{self.command}: computing a few vectors")
            if lock is not None:  # else another process is computing them: use what exists
                # The query encoder is built once per model folder (~3 s, in a child
                # process): alongside the fill rather than after it. Joined before the
                # search, so that no thread is inside onnxruntime when the process exits.
                encoder = threading.Thread(target=embedder.query_encoder, name="query-encoder")
                encoder.start()
                try:
                    quiet = self.quiet or missing <= FOREGROUND_EMBED_LIMIT
                    fill_missing_vectors(ws, conn, embedder, self.listener, quiet=quiet)
                except EmbeddingError as exc:
                    self.listener.warning(f"{exc}; searching without vectors")
                    return False
                finally:
                    lock.release()
                    encoder.join()
                coverage = vector_coverage(conn, layers, embedder.model_id)
        elif missing > 0 and not foreground and self.update and writable:
            started = start_background_embedding(ws)
            if not self.quiet:
                where = "in the background" if started else "by another codesift process"
                self.listener.note(
                    f"vectors: {coverage.ratio:.0%} of {coverage.embeddable} chunks by"
                    f" {embedder.model}; the rest are being computed {where} (codesift"
                    " status shows how far)"
                )
        # The query is embedded only when there are vectors to compare it with (the
        # query encoder then loads on this thread, during the search).
        return coverage.usable > 0


def open_collection(ws: Workspace, listener: EngineListener | None) -> Engine:
    """A document collection's index, opened for one search (brought up to date
    first, quietly): how engine/collections.py's `search_collections` reads it."""
    return Engine(ws, listener, quiet=True)


def _writing_elsewhere(ws: Workspace) -> str | None:
    """Who holds the index's write lock now ("another process" when it does not
    say), or None when nobody does."""
    lock = IndexLock(ws.db_path, "write", purpose="codesift: looking whether the index is busy")
    try:
        if lock.try_acquire():
            lock.release()
            return None
    except ReadOnlyIndexError:
        return None
    return lock.holder() or "another process"


def embed(
    ws: Workspace,
    listener: EngineListener | None = None,
    *,
    conn: apsw.Connection | None = None,
    quiet: bool = False,
    purpose: str = "codesift embed",
) -> EmbedReport:
    """Compute the missing vectors; one embedder per index at a time (the embed
    lock): when another process is embedding, returns at once saying who.
    Raises EmbeddingError when the model cannot run."""
    from codesift.embedding import vector_coverage
    from codesift.engine.models import make_embedder

    listener = listener or EngineListener()
    own = conn is None
    if conn is None:
        conn = open_database(ws.db_path, create=False)
    try:
        lock = embed_lock(ws, purpose)
        if lock is None:
            holder = IndexLock(ws.db_path, "embed").holder()
            return EmbedReport(running_elsewhere=True, holder=holder or None)
        try:
            if ws.settings.embedding.model != "static":
                _calls_first(ws, conn, listener, quiet=quiet, purpose=purpose)
            embedded = fill_missing_vectors(
                ws, conn, make_embedder(ws.settings.embedding), listener, quiet=quiet
            )
        finally:
            lock.release()
        coverage = vector_coverage(conn, ws.settings.embedding.layers)
        return EmbedReport(embedded, False, None, coverage.embeddable, coverage.embedded)
    finally:
        if own:
            conn.close()


def _calls_first(
    ws: Workspace, conn: apsw.Connection, listener: EngineListener, *, quiet: bool, purpose: str
) -> None:
    """Before MiniLM's vectors: the summaries they are computed from name the calls,
    which a large index run leaves to the call pass (call_pass.py); finish it (or
    wait for the process at it) so that no summary is embedded twice."""
    from codesift.engine.call_phase import complete_calls
    from codesift.store.call_targets import calls_owed

    if calls_owed(conn):
        complete_calls(ws, conn, listener, quiet=quiet, purpose=purpose)


def reindex(
    ws: Workspace,
    listener: EngineListener | None = None,
    *,
    rebuild: bool = False,
    vectors: bool = True,
    quiet: bool = False,
) -> tuple[IndexReport, EmbedReport | None, apsw.Connection]:
    """Build or update the index (writers queue on the write lock), then compute
    its missing vectors unless `vectors` is False or embeddings are off. An
    embedding failure is a warning (the index stays usable): `EmbedReport.failed`.
    Returns the open connection too (the caller closes it)."""
    listener = listener or EngineListener()
    settings = ws.settings.embedding
    # Static vectors (the first tier, or the static model) take seconds: they come
    # before the call and history passes, which would share the cores with them.
    static_now = vectors and settings.static_tier
    # The index workers compute those static vectors with the rows.
    conn, report = update_index(
        ws, listener, rebuild=rebuild, quiet=quiet, after=not static_now, static_vectors=static_now
    )
    if not (settings.enabled and vectors):
        return report, None, conn
    if settings.model != "static" and settings.static_first:
        first = _first_tier_then_background(ws, conn, listener, quiet)
        after_index_phases(ws, conn, listener, quiet=quiet, held=False)
        return report, first, conn
    try:
        embedded = embed(ws, listener, conn=conn, quiet=quiet, purpose="codesift index: embedding")
    except EmbeddingError as exc:
        listener.warning(f"{exc}; index has no vectors")
        embedded = EmbedReport(failed=str(exc))
    if static_now:
        after_index_phases(ws, conn, listener, quiet=quiet, held=False)
    return report, embedded, conn


def _first_tier_then_background(
    ws: Workspace, conn: apsw.Connection, listener: EngineListener, quiet: bool
) -> EmbedReport:
    """`codesift index` with the static first tier: static vectors for the chunks
    without one now, then MiniLM's in a background `codesift embed`."""
    from codesift.embedding import vector_coverage
    from codesift.engine.models import make_embedder

    embedder = make_embedder(ws.settings.embedding)
    layers = ws.settings.embedding.layers
    lock = embed_lock(ws, "codesift index: computing static vectors")
    if lock is None:
        holder = IndexLock(ws.db_path, "embed").holder()
        return EmbedReport(running_elsewhere=True, holder=holder or None)
    try:
        embedded = fill_first_tier(ws, conn, embedder, listener, quiet=quiet)
    except EmbeddingError as exc:
        listener.warning(f"{exc}; index has no vectors")
        return EmbedReport(failed=str(exc))
    finally:
        lock.release()
    coverage = vector_coverage(conn, layers, embedder.model_id)
    if 0 < coverage.embeddable - coverage.embedded <= FOREGROUND_EMBED_LIMIT:
        # A few: MiniLM replaces them now, as a search would compute a few vectors.
        try:
            return embed(ws, listener, conn=conn, quiet=quiet, purpose="codesift index: embedding")
        except EmbeddingError as exc:
            listener.warning(f"{exc}; the index keeps its static vectors")
    elif coverage.embedded < coverage.embeddable and start_background_embedding(ws) and not quiet:
        listener.note(
            f"vectors: static for now; {embedder.model} replaces them in the background"
            " (codesift status shows how far)"
        )
    return EmbedReport(embedded, False, None, coverage.embeddable, coverage.usable)
