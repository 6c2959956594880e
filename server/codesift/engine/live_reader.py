"""Reading a live folder's index (`LiveReader`): wait until the folder's index is
open (and, when asked, until the changes seen so far are indexed, up to a
deadline), take the reader thread's connection, attach it to the request's
`Cancellation`, and run the engine's search, symbol lookup, graph walk or status
on it. `Embedders` shares one query embedder per model among the folders."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

import apsw

from codesift.config import EmbeddingSettings
from codesift.embedding import Embedder
from codesift.engine.graph import start_nodes, walk_graph
from codesift.engine.live_folder import FolderIndex
from codesift.engine.live_threads import Cancellation, ReaderPool
from codesift.engine.models import embedder_key, make_embedder
from codesift.engine.results import GraphQuery, GraphResult, IndexStatus, SymbolMatches
from codesift.engine.status import read_status
from codesift.engine.symbols import find_symbols
from codesift.retrieval import SearchRequest, SearchResponse
from codesift.store.reader import NodeRow, has_vectors
from codesift.timespec import TimeFilter

__all__ = ["Embedders", "LiveReader"]


class Embedders:
    """The embedding models of the folders a process serves: folders with the same
    model settings share one (it is the largest thing in memory). Each model's
    query encoder is built in the background when the model is first asked for,
    so that the first search with vectors does not wait for it."""

    def __init__(self) -> None:
        self._models: dict[tuple[str, int, int, bool, str], Embedder] = {}
        self._lock = threading.Lock()

    def get(self, settings: EmbeddingSettings) -> Embedder:
        key = embedder_key(settings)
        with self._lock:
            embedder = self._models.get(key)
            if embedder is None:
                embedder = make_embedder(settings)
                self._models[key] = embedder
                threading.Thread(
                    target=embedder.query_encoder, name="codesift-query-model", daemon=True
                ).start()
            return embedder


class LiveReader:
    """Reads on live folders, for a front end's reader threads (`readers`).

    Each method runs on the calling thread (a `ReaderPool` thread): it waits until
    the folder's index is open (at most `open_timeout` seconds; NotIndexedError or
    the error that keeps it from opening), takes this thread's connection to it,
    attaches the connection to `cancel` (a cancelled request interrupts its SQLite
    statements) and asks the engine. `wait_fresh` is the optional wait before a
    read: until the changes seen so far are indexed, up to a deadline.
    """

    def __init__(self, readers: ReaderPool, embedders: Embedders | None = None) -> None:
        self.readers = readers
        self.embedders = embedders or Embedders()

    def wait_fresh(
        self,
        folder: FolderIndex,
        cancel: Cancellation | None = None,
        *,
        open_timeout: float = 30.0,
        fresh_timeout: float = 10.0,
    ) -> bool:
        """Wait until the index is open, then until every change seen so far is
        indexed (at most `fresh_timeout` seconds); whether it is."""
        folder.wait_open(open_timeout)
        return folder.wait_settled(fresh_timeout, cancel)

    def open(self, folder: FolderIndex, open_timeout: float | None = 30.0) -> apsw.Connection:
        """This thread's connection to the folder's index, once it is open (not
        waited for when `open_timeout` is None)."""
        if open_timeout is not None:
            folder.wait_open(open_timeout)
        return self.readers.connection(folder.db_path)

    @contextlib.contextmanager
    def connection(
        self, folder: FolderIndex, cancel: Cancellation, open_timeout: float | None = 30.0
    ) -> Iterator[apsw.Connection]:
        """`open`, with the connection attached to `cancel` while in use."""
        conn = self.open(folder, open_timeout)
        cancel.attach(conn)
        try:
            yield conn
        finally:
            cancel.detach(conn)

    def embedder(self, folder: FolderIndex) -> Embedder:
        return self.embedders.get(folder.settings.embedding)

    def search(
        self,
        folder: FolderIndex,
        request: SearchRequest,
        cancel: Cancellation,
        open_timeout: float | None = 30.0,
    ) -> SearchResponse:
        """The folder's search for a validated `request` (times resolved in the
        folder); vectors are used when the folder has them and embeddings are on."""
        with self.connection(folder, cancel, open_timeout) as conn:
            embedder: Embedder | None = None
            if folder.settings.embedding.enabled and has_vectors(conn):
                embedder = self.embedder(folder)
            response = folder.searcher(conn, embedder).search(request, cancel=cancel.event)
        timed = request.as_of is not None or request.since is not None
        if timed or request.until is not None:
            warning = folder.history_warning()
            if warning is not None:
                response.warnings.append(warning)
        return response

    def symbols(
        self,
        folder: FolderIndex,
        name: str,
        limit: int,
        cancel: Cancellation,
        *,
        times: TimeFilter | None = None,
        history: bool = True,
        open_timeout: float | None = 30.0,
    ) -> SymbolMatches:
        """The engine's symbol lookup (exact, then similar names, then signatures)."""
        with self.connection(folder, cancel, open_timeout) as conn:
            return find_symbols(
                conn,
                name,
                limit,
                times,
                searcher=folder.searcher(conn, None),
                history=history,
            )

    def graph(
        self,
        folder: FolderIndex,
        start: str | Callable[[apsw.Connection], list[NodeRow]],
        query: GraphQuery,
        cancel: Cancellation,
        *,
        history: bool = True,
        open_timeout: float | None = 30.0,
    ) -> GraphResult:
        """The engine's graph walk from the definitions named `start` (one more than
        the walk may show, so that it says when it stopped: `truncated`), or from
        the nodes `start(conn)` finds."""
        with self.connection(folder, cancel, open_timeout) as conn:
            if isinstance(start, str):
                nodes = start_nodes(conn, start, query.times, query.max_nodes + 1)
            else:
                nodes = start(conn)
            return walk_graph(conn, nodes, query, history=history)

    def status(
        self,
        folder: FolderIndex,
        cancel: Cancellation,
        *,
        details: bool = True,
        rerank: bool = True,
        open_timeout: float | None = 30.0,
    ) -> IndexStatus:
        """The index's status (counts, size; with `details`, vectors and history)."""
        with self.connection(folder, cancel, open_timeout) as conn:
            return read_status(folder.workspace, conn, rerank=rerank, details=details)

    def close(self, *, wait: bool = True) -> None:
        self.readers.close(wait=wait)
