"""A live index: one workspace folder's writer thread, watcher and reader connections.

The engine's long-running side, shared by every server front end (the language
server, lsp/, and the MCP server, mcp/): a front end creates one `FolderIndex`
per folder it serves, passes a `FolderListener` to hear about progress, state
changes and problems (and reports them its own way), and reads through a
`LiveReader` (engine/live_reader.py) on `ReaderPool` threads.

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
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import apsw

from codesift.config import SearchSettings, Settings
from codesift.embedding import Embedder
from codesift.engine.live_progress import FolderProgress
from codesift.engine.live_threads import Cancellation
from codesift.engine.live_work import FolderStopping, FolderWork
from codesift.engine.models import load_rerank
from codesift.engine.workspace import Workspace, db_path_for
from codesift.errors import CodesiftError, NotIndexedError
from codesift.indexer import Indexer
from codesift.retrieval import Searcher
from codesift.retrieval.rerank import Reranker, RerankerLoad
from codesift.retrieval.vector_index import VectorIndex
from codesift.watcher import ChangeBatch, FolderWatcher, PathFilter

__all__ = ["FolderIndex", "FolderListener"]

log = logging.getLogger("codesift.engine.live")

# A failed work item is retried after 1 s, 2 s, 4 s ... at most this long.
RETRY_FIRST_SECONDS = 1.0
RETRY_MAX_SECONDS = 30.0
# While idle the writer looks this often whether its index file still exists.
IDLE_CHECK_SECONDS = 2.0
# How often a read waiting for freshness looks at the watcher's queue (no notification).
FRESH_POLL_SECONDS = 0.05
# A unit of the writer's work: ("rescan", {}), ("paths", {changed paths}) or ("vectors", {}).
_WorkItem = tuple[str, set[str]]


def _retry_delay(failures: int) -> float:
    return float(min(RETRY_MAX_SECONDS, RETRY_FIRST_SECONDS * 2 ** min(failures - 1, 16)))


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


class FolderIndex(FolderWork):
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

    def ready_now(self) -> bool:
        """Whether a read would wait for nothing now: the index is open (readers may
        open it) and every change seen so far is indexed. Never blocks."""
        return self._ready.is_set() and self._open_error is None and self.settled()

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
                except FolderStopping:
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
            self._calls(conn, held=False)  # what a large index run left, first
            self._history(conn)
            return
        lock = self._write_lock(f"indexing {self.root}")
        try:
            self._index(indexer, None if kind == "rescan" else paths)
        finally:
            lock.release()
