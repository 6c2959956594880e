"""A live index: one workspace folder's writer thread, watcher and reader connections.

The engine's long-running side, shared by every server front end (the language
server, lsp/, and the MCP server, mcp/): a front end creates one `FolderIndex`
per folder it serves, passes a `FolderListener` to hear about progress, state
changes and problems (and reports them its own way), and reads through a
`LiveReader` (below) on `ReaderPool` threads.

One writer per folder: a thread that owns the folder's write connection and does
all indexing and embedding, in this order of priority: a rescan, changed paths,
then missing vectors (in small batches, so a save never waits long behind them).
Readers never block on it: each reader thread has its own apsw connection per
database (`ReaderPool`), and SQLite's WAL lets them read the last committed
state while the writer works.

Changes reach the writer from the watcher (coalesced), from didSave and
didChangeWatchedFiles (at once), and from codesift/reindex. They all land in
one pending set; a path whose size and mtime already match the index is dropped
before parsing, so a save reported by both the editor and the watcher is
indexed once.

Other processes (`codesift index`, `codesift embed`, another server) may write
the same index. Writers take turns on the index's write lock (store/locks.py):
the writer thread holds it for each indexing work item and for each batch of
vectors, and waits for it in state `waiting`. One process computes vectors at
a time (the embed lock); when another one is at it, this folder loads the
vectors it writes instead. A work item that fails is retried with backoff, and
an index file that is deleted or replaced is reopened and rebuilt.

Reading (`LiveReader`): wait until the folder's index is open (and, when asked,
until the changes seen so far are indexed, up to a deadline), take the reader
thread's connection, attach it to the request's `Cancellation`, and run the
engine's search, symbol lookup, graph walk or status on it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

import apsw

from codesift.config import EmbeddingSettings, SearchSettings, Settings
from codesift.embedding import Embedder, VectorCoverage, fill_vectors, vector_coverage
from codesift.embedding.model import cache_dir_from, model_id_of
from codesift.engine.graph import walk_graph
from codesift.engine.models import embedder_key, load_rerank, make_embedder
from codesift.engine.results import GraphQuery, GraphResult, IndexStatus, SymbolMatches
from codesift.engine.status import read_status
from codesift.engine.symbols import find_symbols
from codesift.engine.workspace import Workspace, db_path_for
from codesift.errors import CodesiftError, EmbeddingError, NotIndexedError
from codesift.history.update import (
    HistoryPending,
    HistoryProgress,
    history_pending,
    update_history,
)
from codesift.indexer import Indexer, IndexPlan, IndexProgress
from codesift.retrieval import Searcher, SearchRequest, SearchResponse
from codesift.retrieval.request import SearchWarning
from codesift.retrieval.rerank import Reranker, RerankerLoad
from codesift.retrieval.vector_index import VectorIndex
from codesift.store.database import open_database
from codesift.store.locks import IndexLock
from codesift.store.reader import (
    NodeRow,
    file_stamps,
    has_vectors,
    indexed_paths_under,
    nodes_named,
)
from codesift.timespec import TimeFilter
from codesift.watcher import ChangeBatch, FolderWatcher, PathFilter

__all__ = [
    "Cancellation",
    "Embedders",
    "FolderIndex",
    "FolderListener",
    "FolderProgress",
    "LiveReader",
    "ReaderPool",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

# Vectors are computed this many chunks at a time; new changes wait at most one batch.
EMBED_BATCH = 16
# A failed work item is retried after 1 s, 2 s, 4 s ... at most this long.
RETRY_FIRST_SECONDS = 1.0
RETRY_MAX_SECONDS = 30.0
# While idle the writer looks this often whether its index file still exists.
IDLE_CHECK_SECONDS = 2.0
# While another process computes the vectors, look this often whether it is done.
EMBED_RECHECK_SECONDS = 5.0
# How often a read waiting for freshness looks at the watcher's queue (no notification).
FRESH_POLL_SECONDS = 0.05
# The writer connection's SQLite busy timeout (tests shorten it; default: the store's).
_BUSY_TIMEOUT_MS: int | None = (
    int(os.environ["CODESIFT_TEST_BUSY_TIMEOUT_MS"])
    if os.environ.get("CODESIFT_TEST_BUSY_TIMEOUT_MS")
    else None
)

# A unit of the writer's work: ("rescan", {}), ("paths", {changed paths}) or ("vectors", {}).
_WorkItem = tuple[str, set[str]]


class _Stopping(Exception):
    """The folder stopped while its writer waited or worked: end quietly."""


def _retry_delay(failures: int) -> float:
    return float(min(RETRY_MAX_SECONDS, RETRY_FIRST_SECONDS * 2 ** min(failures - 1, 16)))


class Cancellation:
    """Cancels one request: sets a flag and interrupts the SQLite statements of the
    reader connections the request is using."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self._conns: list[apsw.Connection] = []
        self._lock = threading.Lock()

    def attach(self, conn: apsw.Connection) -> None:
        with self._lock:
            self._conns.append(conn)
            cancelled = self.event.is_set()
        if cancelled:
            conn.interrupt()

    def detach(self, conn: apsw.Connection) -> None:
        with self._lock:
            if conn in self._conns:
                self._conns.remove(conn)

    def cancel(self) -> None:
        with self._lock:
            self.event.set()
            conns = list(self._conns)
        for conn in conns:
            conn.interrupt()

    @property
    def cancelled(self) -> bool:
        return self.event.is_set()


class ReaderPool:
    """Threads that answer read requests, each with its own connection per database."""

    def __init__(self, workers: int = 3) -> None:
        self._executor = ThreadPoolExecutor(workers, thread_name_prefix="codesift-reader")
        self._local = threading.local()
        self._lock = threading.Lock()
        self._generation: dict[str, int] = {}
        self._open: list[apsw.Connection] = []

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        return self._executor.submit(fn, *args)

    def connection(self, db_path: Path) -> apsw.Connection:
        """This thread's connection to `db_path` (opened on first use)."""
        key = str(db_path)
        conns: dict[str, tuple[int, apsw.Connection]] = getattr(self._local, "conns", None) or {}
        self._local.conns = conns
        with self._lock:
            generation = self._generation.get(key, 0)
        held = conns.get(key)
        if held is not None and held[0] == generation:
            return held[1]
        if held is not None:
            with self._lock:
                if held[1] in self._open:
                    self._open.remove(held[1])
            held[1].close()
        conn = open_database(db_path, create=False)
        conns[key] = (generation, conn)
        with self._lock:
            self._open.append(conn)
        return conn

    def forget(self, db_path: Path) -> None:
        """Connections to `db_path` are reopened (or never used again) from now on."""
        with self._lock:
            key = str(db_path)
            self._generation[key] = self._generation.get(key, 0) + 1

    def close(self, *, wait: bool = True) -> None:
        """Stop the reader threads (queued requests are dropped) and close their
        connections; without `wait`, running requests are interrupted, not awaited."""
        self._executor.shutdown(wait=wait, cancel_futures=True)
        with self._lock:
            conns, self._open = self._open, []
        for conn in conns:
            with contextlib.suppress(apsw.Error):
                if not wait:
                    conn.interrupt()
                conn.close()


class FolderListener:
    """What a folder tells the server: progress and state changes (any thread)."""

    def progress(self, folder: FolderIndex, phase: str, done: int, total: int) -> None:
        pass

    def state_changed(self, folder: FolderIndex) -> None:
        pass

    def problem(self, folder: FolderIndex, message: str) -> None:
        pass

    def index_replaced(self, folder: FolderIndex) -> None:
        """The folder's index file was deleted or replaced: drop connections to it."""


@dataclass(slots=True)
class FolderProgress:
    # starting, waiting, scanning, indexing, embedding, ready, error, stopped
    state: str = "starting"
    files_done: int = 0
    files_total: int = 0
    chunks_done: int = 0
    chunks_total: int = 0
    first_index_done: bool = False
    # Chunks with a vector of the configured model (`embedded`), with one of any
    # model (`usable`: the first tier's count too, what the vector stream searches).
    vectors_embedded: int = 0
    vectors_embeddable: int = 0
    vectors_usable: int = 0
    last_update: float | None = None
    warnings: list[str] = field(default_factory=list)
    error: str | None = None  # why the last work item failed (state `error`)
    waiting_for: str | None = None  # who holds the write lock (state `waiting`)
    embedding_elsewhere: str | None = None  # the other process computing the vectors
    # The git history pass (engine/history.py): what is left of it, how far the walk
    # is, and who runs it when another process does.
    history: HistoryPending = field(default_factory=HistoryPending)
    history_phase: str | None = None  # "walking" or "timing" while it runs here
    history_elsewhere: str | None = None


class FolderIndex:
    """A workspace folder, its index database and the thread that writes it."""

    def __init__(
        self,
        name: str,
        uri: str,
        root: Path,
        settings: Settings,
        listener: FolderListener,
        embedder: Callable[[], Embedder | None],
        *,
        watch: bool = True,
        quiet: float = 0.2,
        max_wait: float = 2.0,
    ) -> None:
        self.name = name
        self.uri = uri
        self.root = root.resolve()
        self.settings = settings
        self.db_path = db_path_for(self.root, settings)
        self.listener = listener
        self._embedder = embedder
        self.progress = FolderProgress()
        self._cond = threading.Condition()
        self._pending: set[str] = set()
        self._rescan = True  # the first run scans the whole folder
        self._busy = False
        self._doing: str | None = None  # the kind of the work item the writer is at
        self._stopping = False
        self._stop_event = threading.Event()
        self._retry_now = False  # set by request_rescan: cut short a pause before a retry
        self._work_done = 0  # bumped after each batch of work, for waiters
        self._embed_cancel = threading.Event()
        self._needs_vectors = settings.embedding.enabled
        # The history pass comes after changes and before vectors; changes stop it
        # at its next step (it goes on from there afterwards).
        self._needs_history = False
        self._history_cancel = threading.Event()
        self._recheck_history_at: float | None = None
        self._thread = threading.Thread(
            target=self._run, name=f"codesift-writer-{name}", daemon=False
        )
        self._watcher: FolderWatcher | None = None
        self._watch = watch
        self._quiet = quiet
        self._max_wait = max_wait
        self._ready = threading.Event()  # the database exists (readers may open it)
        # One Searcher per embedder (None until vectors exist): each keeps a read-only
        # connection per stream thread, opened once, closed when the folder stops.
        self._searchers: dict[int, Searcher] = {}
        self._searchers_lock = threading.Lock()
        # The vectors in memory, shared by the Searchers and loaded after each fill
        # (embedding.in_memory), so that searches never wait for them.
        self._vectors = VectorIndex() if settings.embedding.in_memory else None
        self._rerank_load: RerankerLoad | None = None
        self._open_error: str | None = None
        # The class of the error that kept the index from opening (JSON-RPC data.kind).
        self._open_error_type: type[CodesiftError] = CodesiftError
        # The writer's connection and the index file it opened ((st_dev, st_ino)).
        self._conn: apsw.Connection | None = None
        self._indexer: Indexer | None = None
        self._db_id: tuple[int, int] | None = None
        self._rebuild_warning: str | None = None
        self._recheck_vectors_at: float | None = None

    # -- life cycle ------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()
        if self._watch:
            private = []
            with contextlib.suppress(ValueError):
                private.append(self.db_path.parent.relative_to(self.root).as_posix())
            path_filter = PathFilter(self.settings.index.excluded_dirs, private)
            try:
                watcher = FolderWatcher(
                    self.root,
                    self._on_batch,
                    path_filter,
                    quiet=self._quiet,
                    max_wait=self._max_wait,
                )
                watcher.start()
                self._watcher = watcher
            except OSError as exc:  # inotify limits, a vanished folder
                self._warn(f"cannot watch {self.root} for changes ({exc}); save files to update")

    def searcher(self, conn: apsw.Connection, embedder: Embedder | None) -> Searcher:
        """The folder's Searcher (safe to call from several reader threads at once);
        `conn` is the caller's reader connection, used when streams cannot run side
        by side."""
        key = id(embedder)
        with self._searchers_lock:
            searcher = self._searchers.get(key)
            if searcher is None:
                searcher = Searcher(
                    conn,
                    self.settings.search,
                    embedder,
                    reranker=self._reranker(),
                    rerank_settings=self.settings.rerank,
                    vector_index=self._vectors,
                )
                self._searchers[key] = searcher
            return searcher

    def use_search_settings(self, search: SearchSettings) -> None:
        """New `search` settings (top_k, snippet_chars, weights...): the next search
        uses them; the index and the writer are untouched."""
        self.settings = replace(self.settings, search=search)
        with self._searchers_lock:
            # Searches running on the old ones finish on them (their connections
            # close when they are collected).
            self._searchers = {}

    @property
    def watching(self) -> bool:
        """Whether a watcher reports this folder's changes on disk (off by option,
        or when it could not start)."""
        return self._watcher is not None

    @property
    def workspace(self) -> Workspace:
        return Workspace(self.root, self.settings, self.db_path)

    def rerank_status(self) -> dict[str, Any]:
        """Whether the rerank stage runs for this folder (loads its model once)."""
        rerank = self.settings.rerank
        with self._searchers_lock:
            reranker = self._reranker()
        assert self._rerank_load is not None
        return {
            "enabled": rerank.enabled and rerank.provider != "none",
            "provider": rerank.provider,
            "active": reranker is not None,
            "warning": self._rerank_load.warning,
        }

    def _reranker(self) -> Reranker | None:
        """The folder's rerank model, loaded once (None when off or when it fails to
        load: that is reported as a warning in status, and search goes on without)."""
        if self._rerank_load is None:
            self._rerank_load = load_rerank(self.settings)
            if self._rerank_load.warning:
                self._warn(self._rerank_load.warning)
        return self._rerank_load.reranker

    def stop(self, timeout: float = 10.0) -> None:
        self.request_stop()
        self.join(timeout)

    def request_stop(self) -> None:
        """Tell the writer to stop (it leaves any wait at once) without waiting for it."""
        with self._cond:
            self._stopping = True
            self._stop_event.set()
            self._cond.notify_all()
        self._embed_cancel.set()
        self._history_cancel.set()  # a history pass stops at its next commit
        self._drop_searchers()
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.stop()

    def join(self, timeout: float) -> bool:
        """Wait at most `timeout` seconds for the writer to end; whether it did."""
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(max(timeout, 0.0))
        return not self._thread.is_alive()

    def resident_vectors(self) -> VectorIndex | None:
        """The folder's vectors held in memory, once loaded (None: not held, or not
        loaded yet)."""
        with self._searchers_lock:
            index = self._vectors
        return index if index is not None and index.loaded else None

    def _drop_searchers(self) -> None:
        with self._searchers_lock:
            searchers, self._searchers = list(self._searchers.values()), {}
            if self._vectors is not None:
                self._vectors = VectorIndex()  # of a file that may be gone
        for searcher in searchers:
            with contextlib.suppress(apsw.Error):
                searcher.close()

    def wait_open(self, timeout: float = 30.0) -> None:
        """Wait until the database exists; raise CodesiftError if it cannot be opened.

        An index file deleted (or replaced) under the server is noticed here too:
        the writer is asked to rebuild it, and this waits until it is open again."""
        deadline = time.monotonic() + timeout
        self._ready.wait(timeout)
        if self._open_error is not None:
            raise self._open_error_type(self._open_error)
        if not self._ready.is_set():
            raise NotIndexedError(f"the index of {self.root} is not open yet")
        if self._stopping or not self._index_gone():
            return
        self._request_rebuild()
        reopened = self._wait_until(
            lambda: not self._index_gone() or self._open_error is not None,
            deadline - time.monotonic(),
        )
        if self._open_error is not None:
            raise self._open_error_type(self._open_error)
        if not reopened:
            raise NotIndexedError(
                f"the index of {self.root} was deleted and is being rebuilt; try again shortly"
            )

    # -- changes -----------------------------------------------------------------------

    def _on_batch(self, batch: ChangeBatch) -> None:
        if batch.rescan:
            log.info("%s: rescan (%s)", self.name, "; ".join(batch.reasons))
            self.request_rescan()
        else:
            self.add_paths(batch.paths)

    def add_paths(self, paths: Iterable[str]) -> None:
        with self._cond:
            before = len(self._pending)
            self._pending.update(p for p in paths if p)
            if len(self._pending) != before:
                self._embed_cancel.set()  # changes go before vectors
                self._history_cancel.set()  # and before the history pass
                self._cond.notify_all()

    def request_rescan(self) -> None:
        with self._cond:
            self._retry_now = True  # a folder waiting to retry after a failure goes now
            self._rescan = True
            self._pending.clear()
            self._embed_cancel.set()
            self._history_cancel.set()
            self._cond.notify_all()

    def request_vectors(self) -> None:
        with self._cond:
            self._needs_vectors = self.settings.embedding.enabled
            self._cond.notify_all()

    def pending_work(self) -> dict[str, Any]:
        with self._cond:
            watcher = self._watcher
            return {
                "paths": len(self._pending),
                "rescan": self._rescan,
                "busy": self._busy,
                "watcher_paths": watcher.coalescer.pending() if watcher else 0,
            }

    def wait_idle(self, timeout: float) -> bool:
        """Wait until every change queued so far is indexed (vectors excluded)."""
        return self._wait_until(lambda: not (self._pending or self._rescan or self._busy), timeout)

    def wait_vectors(self, timeout: float) -> bool:
        """Wait until the index is idle and every vector is computed."""
        return self._wait_until(
            lambda: not (self._pending or self._rescan or self._busy or self._needs_vectors),
            timeout,
        )

    def settled(self) -> bool:
        """Whether every change seen so far (the watcher's queue included) is indexed;
        vectors may still be computed. True in states `error` and `stopped`: there is
        nothing to wait for then (the folder's state says why)."""
        with self._cond:
            progress = self.progress
            if progress.state in ("error", "stopped"):
                return True
            if not progress.first_index_done:
                return False
            work = self.pending_work()
            if work["paths"] or work["rescan"] or work["watcher_paths"]:
                return False
            # The writer may be at vectors; not at an item of changes it has taken
            # (its state changes only once that item's plan is made).
            return self._doing in (None, "vectors")

    def wait_settled(self, timeout: float, cancel: Cancellation | None = None) -> bool:
        """Wait at most `timeout` seconds until `settled()` (less when `cancel` is
        cancelled); whether it is."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self.settled():
                left = deadline - time.monotonic()
                if left <= 0 or (cancel is not None and cancel.cancelled):
                    return False
                self._cond.wait(min(left, FRESH_POLL_SECONDS))
        return True

    def _wait_until(self, done: Callable[[], bool], timeout: float) -> bool:
        """Wait (on the writer's condition) until `done()`; False on timeout or stop."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not done():
                if self._stopping:
                    return False
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    # -- the writer thread -------------------------------------------------------------------

    def _run(self) -> None:
        """Take work items one at a time until stopped. A work item that fails (the
        index is busy, damaged, unwritable, or a bug) is queued again and retried
        after a pause that doubles up to RETRY_MAX_SECONDS; the thread never ends
        because of one."""
        failures = 0
        try:
            while True:
                item = self._next_item()
                if item is None:
                    return
                delay: float | None = None
                try:
                    self._open_if_needed()
                    assert self._conn is not None and self._indexer is not None
                    self._do(item, self._conn, self._indexer)
                except _Stopping:
                    return
                except Exception as exc:  # keep the writer alive; say what happened
                    failures += 1
                    delay = _retry_delay(failures)
                    self._requeue(item)
                    self._close_conn()  # reopened for the retry: a fresh start
                    self._report(self._failed, exc, delay, first=failures == 1)
                finally:
                    self._item_done()
                if delay is not None:
                    if self._pause_before_retry(delay):
                        return
                    continue
                if failures:
                    failures = 0
                    self._report(self._recovered)
                self._report(self._settle_state)
        finally:
            self._close_conn()
            with self._cond:
                self._busy = False
                self.progress.state = "stopped"
                self._cond.notify_all()
            self._ready.set()  # nobody waits for an index that will not open now

    def _pause_before_retry(self, delay: float) -> bool:
        """Wait `delay` seconds before a retry, less when a rescan is asked for
        (codesift/reindex, a checkout); True when the folder is stopping."""
        deadline = time.monotonic() + delay
        with self._cond:
            self._retry_now = False
            while not self._stopping and not self._retry_now:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            return self._stopping

    def _report(self, fn: Callable[..., None], *args: Any, **kwargs: Any) -> None:
        """Tell the listener something; a failure there never ends the writer."""
        try:
            fn(*args, **kwargs)
        except Exception:
            log.exception("%s: reporting the folder's state failed", self.name)

    def _next_item(self) -> _WorkItem | None:
        """Wait for work: a rescan first, then changed paths, then vectors. While
        idle, look every IDLE_CHECK_SECONDS whether the index file is still there
        and whether another process's vector fill has finished. None when stopping."""
        with self._cond:
            while True:
                if self._stopping:
                    return None
                if self._rescan:
                    self._rescan = False
                    item: _WorkItem = ("rescan", set())
                elif self._pending:
                    item = ("paths", self._pending)
                    self._pending = set()
                elif self._needs_history:
                    self._needs_history = False
                    item = ("history", set())
                elif self._needs_vectors:
                    self._needs_vectors = False
                    item = ("vectors", set())
                else:
                    wait = IDLE_CHECK_SECONDS
                    if self._recheck_vectors_at is not None:
                        wait = min(wait, max(0.0, self._recheck_vectors_at - time.monotonic()))
                    if self._recheck_history_at is not None:
                        wait = min(wait, max(0.0, self._recheck_history_at - time.monotonic()))
                    self._cond.wait(wait)
                    if self._db_id is not None and self._index_gone():
                        self._rescan = True  # the index was deleted: rebuild it
                    if (
                        self._recheck_vectors_at is not None
                        and time.monotonic() >= self._recheck_vectors_at
                    ):
                        self._recheck_vectors_at = None
                        self._needs_vectors = self.settings.embedding.enabled
                    if (
                        self._recheck_history_at is not None
                        and time.monotonic() >= self._recheck_history_at
                    ):
                        self._recheck_history_at = None
                        self._needs_history = True
                    continue
                self._busy = True
                self._doing = item[0]
                self._embed_cancel.clear()
                self._history_cancel.clear()
                return item

    def _requeue(self, item: _WorkItem) -> None:
        kind, paths = item
        with self._cond:
            if kind == "rescan":
                self._rescan = True
            elif kind == "paths":
                self._pending |= paths
            elif kind == "history":
                self._needs_history = True
            else:
                self._needs_vectors = self.settings.embedding.enabled

    def _item_done(self) -> None:
        with self._cond:
            self._busy = False
            self._doing = None
            self._work_done += 1
            self._cond.notify_all()

    def _settle_state(self) -> None:
        with self._cond:
            # The git history pass is not waited for: the index is ready without it
            # (`history` in the completeness record says how far it is).
            idle = not (self._pending or self._rescan or self._needs_vectors)
            if idle and self.progress.state not in ("error", "stopped"):
                self.progress.state = "ready"
        self.listener.state_changed(self)

    def _do(self, item: _WorkItem, conn: apsw.Connection, indexer: Indexer) -> None:
        kind, paths = item
        if kind == "vectors":
            self._embed(conn)
            self._load_vectors()
            return
        if kind == "history":
            self._history(conn)
            return
        lock = self._write_lock(f"indexing {self.root}")
        try:
            self._index(indexer, None if kind == "rescan" else paths)
        finally:
            lock.release()

    # -- the database file -------------------------------------------------------------

    def _open_if_needed(self) -> None:
        """Open the index (again, when it was deleted or replaced since)."""
        if self._conn is not None and not self._index_gone():
            return
        if self._db_id is not None and self._index_gone():
            gone = not self.db_path.exists()
            what = "deleted" if gone else "replaced"
            message = f"the index {self.db_path} was {what}; rebuilding it"
            log.warning("%s: %s", self.name, message)
            self._close_conn()
            self._drop_searchers()
            self.listener.index_replaced(self)
            with self._cond:
                self._rescan = True  # the new file is filled by a rescan
                self.progress.first_index_done = False
            self._rebuild_warning = message
            self._warn(message)
            self._set_state("scanning")
        try:
            conn = open_database(self.db_path)
        except Exception as exc:
            self._open_error = str(exc)
            self._open_error_type = type(exc) if isinstance(exc, CodesiftError) else CodesiftError
            self._ready.set()  # readers get the error at once
            raise
        try:
            if _BUSY_TIMEOUT_MS is not None:
                conn.set_busy_timeout(_BUSY_TIMEOUT_MS)
            stat = os.stat(self.db_path)
            self._refresh_coverage(conn)
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        self._indexer = Indexer(self.root, self.settings, conn)
        with self._cond:
            self._db_id = (stat.st_dev, stat.st_ino)
            self._open_error = None
            self._cond.notify_all()
        self._ready.set()

    def _close_conn(self) -> None:
        conn, self._conn, self._indexer = self._conn, None, None
        if conn is not None:
            with contextlib.suppress(apsw.Error):
                conn.close()

    def _index_gone(self) -> bool:
        """Whether the index file this writer opened was deleted or replaced."""
        try:
            stat = os.stat(self.db_path)
        except OSError:
            return True
        return self._db_id != (stat.st_dev, stat.st_ino)

    def _request_rebuild(self) -> None:
        with self._cond:
            self._rescan = True
            self._embed_cancel.set()
            self._cond.notify_all()

    # -- failures ----------------------------------------------------------------------

    def _failed(self, exc: BaseException, delay: float, *, first: bool) -> None:
        detail = str(exc) or type(exc).__name__
        message = f"indexing {self.root} failed: {detail}; retrying in {delay:g} s"
        if isinstance(exc, apsw.Error | CodesiftError | OSError):
            log.warning("%s: %s", self.name, message)
        else:  # a bug: keep the traceback in the log
            log.exception("%s: %s", self.name, message)
        with self._cond:
            self.progress.error = message
            self.progress.waiting_for = None
            self._drop_failure_warnings()
            self.progress.warnings.append(message)
        self._set_state("error")
        if first:  # one message per streak of failures, not one per retry
            self.listener.problem(self, message)
        else:
            self.listener.state_changed(self)

    def _drop_failure_warnings(self) -> None:
        prefix = f"indexing {self.root} failed"
        self.progress.warnings = [w for w in self.progress.warnings if not w.startswith(prefix)]

    def _recovered(self) -> None:
        log.info("%s: the index works again", self.name)
        with self._cond:
            self.progress.error = None
            self._drop_failure_warnings()
            if self.progress.state == "error":
                self.progress.state = "scanning"

    # -- locks ----------------------------------------------------------------------------

    def _write_lock(self, doing: str) -> IndexLock:
        """The index's write lock, waited for (state `waiting`, naming the holder)
        while another process writes; raises _Stopping when the folder stops first."""
        lock = IndexLock(self.db_path, "write", purpose=f"codesift serve: {doing}")
        if lock.try_acquire():
            return lock
        before = self.progress.state

        def waiting(holder: str) -> None:
            who = holder or "another process"
            log.info("%s: waiting for the index's write lock (held by %s)", self.name, who)
            self.progress.waiting_for = who
            self._set_state("waiting")
            self.listener.progress(self, "waiting", 0, 0)

        try:
            got = lock.acquire(on_wait=waiting, stop=self._stop_event)
        finally:
            self.progress.waiting_for = None
        if not got:
            raise _Stopping
        self._set_state(before if before != "ready" else "indexing")
        return lock

    @contextlib.contextmanager
    def _vector_batch_lock(self) -> Iterator[bool]:
        """fill_vectors' batch guard: each batch of vectors is written under the
        write lock, so an index run of another process and this fill take turns.
        Yields False (the fill then stops) when the folder stops while waiting."""
        with self._step_lock(f"writing vectors of {self.root}") as ok:
            yield ok

    @contextlib.contextmanager
    def _history_step_lock(self) -> Iterator[bool]:
        """update_history's batch guard: each step of the history pass under the
        write lock, into the index file this writer opened."""
        if self._index_gone():
            yield False
            return
        with self._step_lock(f"writing git times of {self.root}") as ok:
            yield ok

    @contextlib.contextmanager
    def _step_lock(self, doing: str) -> Iterator[bool]:
        try:
            lock = self._write_lock(doing)
        except _Stopping:
            yield False
            return
        try:
            yield True
        finally:
            lock.release()

    # -- indexing ------------------------------------------------------------------------

    def _index(self, indexer: Indexer, paths: set[str] | None) -> None:
        started = time.perf_counter()
        cancel = threading.Event()
        if paths is None:
            self._set_state("scanning")
            self.listener.progress(self, "scanning", 0, 0)
            plan = indexer.plan()
        else:
            plan = _drop_unchanged(indexer, indexer.plan_paths(paths))
        work = len(plan.to_index) + len(plan.deleted)
        if work or paths is None:
            self.progress.files_done, self.progress.files_total = 0, work
            self._set_state("indexing")

        def report(event: IndexProgress) -> None:
            if event.phase == "parsing":
                self.progress.files_done = event.done
                self.listener.progress(self, "parsing", event.done, event.total)
            if self._stopping:
                cancel.set()

        summary = indexer.apply(plan, report, cancel, started=started)
        if self._stopping:
            raise _Stopping
        if paths is None or summary.indexed or summary.deleted:
            with self._cond:  # new rows, or (a rescan) maybe a new HEAD: time them
                self._needs_history = True
        self.progress.files_done = self.progress.files_total
        self.progress.last_update = time.time()
        if paths is None:
            self.progress.first_index_done = True
            if self._rebuild_warning is not None:
                self._unwarn(self._rebuild_warning)
                self._rebuild_warning = None
        if summary.indexed or summary.deleted:
            log.info(
                "%s: indexed %d, removed %d file(s) in %.0f ms",
                self.name,
                summary.indexed,
                summary.deleted,
                (time.perf_counter() - started) * 1000,
            )
            with self._cond:
                self._needs_vectors = self.settings.embedding.enabled
            if paths is None and self.settings.embedding.enabled and self._conn is not None:
                # After a full run, what the fill will have to do shows at once (0 / 0
                # until the fill counts it; a count takes ~0.2 s on 300k chunks, too
                # much for every save).
                self._refresh_coverage(self._conn)
        self.listener.progress(self, "indexed", work, work)

    # -- git history ---------------------------------------------------------------------

    def _history(self, conn: apsw.Connection) -> None:
        """Run the history pass (engine/history.py) in steps, unless another process
        is at it: then look again every EMBED_RECHECK_SECONDS. New changes stop it
        at its next step; it goes on after them from where it stopped."""
        pending = history_pending(conn, self.root)
        self.progress.history = pending
        if not pending.pending:
            self.progress.history_elsewhere = None
            return
        lock = IndexLock(
            self.db_path, "history", purpose=f"codesift serve: git history of {self.root}"
        )
        if not lock.try_acquire():
            holder = lock.holder() or "another process"
            if self.progress.history_elsewhere != holder:
                log.info("%s: the git history is computed by %s; not here", self.name, holder)
            self.progress.history_elsewhere = holder
            with self._cond:
                self._recheck_history_at = time.monotonic() + EMBED_RECHECK_SECONDS
            return
        self.progress.history_elsewhere = None
        started = time.perf_counter()

        def report(event: HistoryProgress) -> None:
            self.progress.history_phase = event.phase
            if event.phase == "walking":
                files = self.progress.history.files
                self.progress.history = HistoryPending(event.done, event.total, files)
            else:
                self.progress.history = HistoryPending(files=event.total - event.done)
            self.listener.progress(self, f"history {event.phase}", event.done, event.total)

        try:
            stats = update_history(
                conn,
                self.root,
                progress=report,
                cancel=self._history_cancel,
                batch_guard=self._history_step_lock,
            )
        finally:
            lock.release()
            self.progress.history_phase = None
        if self._stopping:
            raise _Stopping
        self.progress.history = history_pending(conn, self.root)
        if not stats.complete:
            with self._cond:  # stopped for changes: finish after them
                self._needs_history = True
            return
        log.info(
            "%s: git history: %d commit(s) walked, %d file(s) timed in %.0f ms",
            self.name,
            stats.commits,
            stats.files_timed,
            (time.perf_counter() - started) * 1000,
        )
        self.listener.progress(self, "history done", stats.files_timed, stats.files_timed)

    # -- vectors ---------------------------------------------------------------------------

    def _embed(self, conn: apsw.Connection) -> None:
        """Compute missing vectors, unless another process is computing them: then
        look again every EMBED_RECHECK_SECONDS (the vectors it writes are loaded
        from the file meanwhile)."""
        if not self.settings.embedding.enabled:
            return
        embedder = self._embedder()
        if embedder is None:
            return
        layers = self.settings.embedding.layers
        coverage = vector_coverage(conn, layers, embedder.model_id)
        missing = coverage.embeddable - coverage.embedded
        self._set_coverage(coverage)
        if missing <= 0:
            self.progress.embedding_elsewhere = None
            return
        embed_lock = IndexLock(
            self.db_path, "embed", purpose=f"codesift serve: computing vectors of {self.root}"
        )
        if not embed_lock.try_acquire():
            holder = embed_lock.holder() or "another process"
            if self.progress.embedding_elsewhere != holder:
                log.info("%s: vectors are computed by %s; not here", self.name, holder)
            self.progress.embedding_elsewhere = holder
            with self._cond:
                self._recheck_vectors_at = time.monotonic() + EMBED_RECHECK_SECONDS
            return
        self.progress.embedding_elsewhere = None
        try:
            self._fill(conn, embedder, coverage.embedded, missing)
        finally:
            embed_lock.release()

    def _fill(self, conn: apsw.Connection, embedder: Embedder, embedded: int, missing: int) -> None:
        self.progress.chunks_done, self.progress.chunks_total = 0, missing
        self._set_state("embedding")

        def report(done: int, total: int) -> None:
            self.progress.chunks_done = done
            self.progress.vectors_embedded = embedded + done
            self.listener.progress(self, "embedding", done, total)

        def first_tier_report(done: int, total: int) -> None:
            self.listener.progress(self, "static vectors", done, total)

        def first_tier_done() -> None:
            self._refresh_coverage(conn, embedder)
            self.listener.progress(self, "embedding", 0, missing)

        try:
            fill_vectors(
                conn,
                embedder,
                layers=self.settings.embedding.layers,
                batch_size=EMBED_BATCH,
                progress=report,
                cancel=self._embed_cancel,
                batch_guard=self._vector_batch_lock,
                first_tier_done=first_tier_done,
                first_tier_progress=first_tier_report,
            )
        except EmbeddingError as exc:  # the model cannot run: nothing to retry
            self._warn(f"vectors are not computed: {exc}")
            return
        if self._stopping:
            raise _Stopping
        if self._embed_cancel.is_set():
            with self._cond:  # interrupted by new changes: finish after them
                self._needs_vectors = True
        self._refresh_coverage(conn, embedder)
        self.listener.progress(self, "embedded", self.progress.chunks_done, missing)

    def _load_vectors(self) -> None:
        """Bring the in-memory vectors up to date (load them the first time)."""
        if self._vectors is None or not self.progress.vectors_usable:
            return
        try:
            self._vectors.sync_file(self.db_path)
        except (apsw.Error, OSError) as exc:  # searches fall back to sqlite-vec
            log.warning("cannot load the vectors of %s into memory: %s", self.root, exc)

    def _refresh_coverage(self, conn: apsw.Connection, embedder: Embedder | None = None) -> None:
        """Read the coverage of the configured model (`embedder`'s, when given; no
        model is loaded for it) and of any model."""
        embedding = self.settings.embedding
        model = (
            embedder.model_id
            if embedder is not None
            else model_id_of(
                embedding.model, cache_dir_from(embedding.cache_dir), embedding.max_tokens
            )
        )
        self._set_coverage(vector_coverage(conn, embedding.layers, model))

    def _set_coverage(self, coverage: VectorCoverage) -> None:
        self.progress.vectors_embedded = coverage.embedded
        self.progress.vectors_embeddable = coverage.embeddable
        self.progress.vectors_usable = coverage.usable

    def _set_state(self, state: str) -> None:
        if self.progress.state != state:
            self.progress.state = state
            self.listener.state_changed(self)

    def _warn(self, message: str) -> None:
        if message not in self.progress.warnings:
            self.progress.warnings.append(message)
        self.listener.problem(self, message)

    def _unwarn(self, message: str) -> None:
        with self._cond:
            self.progress.warnings = [w for w in self.progress.warnings if w != message]

    # -- what readers see ----------------------------------------------------------------

    def history_pending_now(self) -> bool:
        """Whether the git history pass is to come or under way (here or in
        another process), or the first index is not done yet."""
        with self._cond:
            scheduled = self._needs_history or self._doing == "history" or self._rescan
        p = self.progress
        return scheduled or p.history.pending or not p.first_index_done

    def history_warning(self) -> SearchWarning | None:
        """`history_pending` while the git history pass is to come or under way
        (here or in another process): a time filter then only sees the files
        already timed. The answer does not wait for it."""
        if not self.history_pending_now():
            return None
        p = self.progress
        h = p.history
        if h.commits_done < h.commits_total:
            left = f"{h.commits_done:,}/{h.commits_total:,} commits walked"
        elif h.files:
            left = f"{h.files:,} files to time"
        else:
            left = "starting"
        where = f" by {p.history_elsewhere}" if p.history_elsewhere else ""
        return SearchWarning(
            "history_pending",
            f"the git history of {self.name} is still being computed{where} ({left}); the"
            " time filter leaves out what is not timed yet: ask again when"
            " codesift/status shows it complete",
            self.name,
        )

    def completeness(self) -> dict[str, Any]:
        """How complete the index is, for search responses and status."""
        p = self.progress
        with self._cond:
            pending = len(self._pending) + (1 if self._rescan else 0)
            busy = self._busy
        coverage = 1.0 if p.vectors_embeddable == 0 else p.vectors_embedded / p.vectors_embeddable
        usable = 1.0 if p.vectors_embeddable == 0 else p.vectors_usable / p.vectors_embeddable
        vectors = self._vectors
        held = (len(vectors), vectors.nbytes) if vectors is not None and vectors.loaded else (0, 0)
        files_ratio = 1.0 if p.files_total == 0 else p.files_done / p.files_total
        return {
            "folder": self.name,
            "uri": self.uri,
            "state": p.state,
            "error": p.error,
            "waiting_for": p.waiting_for,
            "complete": p.first_index_done and not pending and not busy,
            "history": {
                **p.history.as_json(),
                "pending": self.history_pending_now(),
                "phase": p.history_phase,
                "elsewhere": p.history_elsewhere,
            },
            "files_done": p.files_done,
            "files_total": p.files_total,
            "files_ratio": round(files_ratio, 4) if not p.first_index_done or busy else 1.0,
            "vectors": {
                "enabled": self.settings.embedding.enabled,
                "embedded": p.vectors_embedded,
                "embeddable": p.vectors_embeddable,
                "coverage": round(coverage, 4),
                # Chunks with a vector of any model: the first tier's (static) too.
                "usable": p.vectors_usable,
                "usable_coverage": round(usable, 4),
                "in_memory": held[0],
                "memory_mib": round(held[1] / 2**20, 2),
                "elsewhere": p.embedding_elsewhere,
            },
        }


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
                nodes = nodes_named(
                    conn, start, limit=query.max_nodes + 1, times=query.times or None
                )
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


def _drop_unchanged(indexer: Indexer, plan: IndexPlan) -> IndexPlan:
    """Drop files whose size and mtime already match the index (indexed by an
    earlier batch: the editor and the watcher both report one save). A path that
    is gone and was a folder takes its indexed files with it."""
    for gone in list(plan.forgotten):
        under = indexed_paths_under(indexer.conn, gone)
        plan.deleted.extend(p for p in under if p not in plan.deleted)
    if not plan.to_index:
        return plan
    stamps = file_stamps(indexer.conn, [s.path for s in plan.to_index])
    kept = [s for s in plan.to_index if stamps.get(s.path) != (s.size, s.mtime_ns)]
    plan.unchanged += len(plan.to_index) - len(kept)
    plan.to_index = kept
    return plan
