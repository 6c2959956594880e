"""The workspace the MCP server answers for, its index kept fresh while it runs.

Freshness is the language server's machinery, used as it is: a `FolderIndex`
(codesift/lsp/folders.py) owns the index's writer thread and a watchdog watcher
(changes coalesced, then indexed; vectors computed in the background, one
embedder per index; writers queue on the index's write lock, so a `codesift
index` or a language server on the same workspace takes turns with it). Reads
run on `ReaderPool` threads, each with its own connection, and never block the
writer (SQLite WAL).

Before a read, the server waits (at most `FRESH_WAIT_SECONDS`) until the changes
seen so far are indexed (vectors excluded): an agent that edits a file and then
searches finds its edit. An answer given before that says so (`index.complete`).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import anyio.to_thread
import apsw

from codesift.embedding import Embedder
from codesift.engine import Engine, Workspace, make_embedder
from codesift.lsp.folders import Cancellation, FolderIndex, FolderListener, ReaderPool

__all__ = ["FIRST_INDEX_WAIT_SECONDS", "FRESH_WAIT_SECONDS", "LiveWorkspace"]

log = logging.getLogger(__name__)

T = TypeVar("T")

# A read waits this long for changes already seen to be indexed ...
FRESH_WAIT_SECONDS = 10.0
# ... and this long for the first index of the workspace (built when the server starts).
FIRST_INDEX_WAIT_SECONDS = 60.0
# How often a waiting read looks at the watcher's queue (it has no notification).
_POLL_SECONDS = 0.05
# When the server ends, the writer gets this long to stop.
STOP_SECONDS = 10.0
# Folder states in which the index is being written (not counting vectors).
_WRITING = ("starting", "scanning", "indexing", "waiting")


class LiveWorkspace(FolderListener):
    """One workspace: its FolderIndex (writer + watcher), reader threads, the
    embedding model (shared by the writer and query embedding), and an Engine
    for building requests with the workspace's defaults."""

    def __init__(self, workspace: Workspace, *, watch: bool = True, readers: int = 2) -> None:
        self.workspace = workspace
        # Never opened: requests and time windows are built by it (engine defaults).
        self.engine = Engine(workspace, update=False, quiet=True, command="codesift mcp")
        self.readers = ReaderPool(readers)
        self._embedder: Embedder | None = None
        self._embedder_lock = threading.Lock()
        self._changed = threading.Condition()
        self.folder = FolderIndex(
            workspace.root.name or str(workspace.root),
            workspace.root.as_uri(),
            workspace.root,
            workspace.settings,
            self,
            self.embedder,
            watch=watch,
        )

    @property
    def db_path(self) -> Any:
        return self.folder.db_path

    def start(self) -> None:
        self.folder.start()
        log.info("codesift mcp: indexing %s into %s", self.workspace.root, self.folder.db_path)

    def stop(self, timeout: float = STOP_SECONDS) -> bool:
        """Stop the writer and the watcher, close the readers; whether the writer ended."""
        self.folder.request_stop()
        with self._changed:
            self._changed.notify_all()
        ended = self.folder.join(timeout)
        self.readers.close(wait=False)
        if not ended:
            log.warning("the index writer did not stop within %.0f s", timeout)
        return ended

    # -- the embedding model --------------------------------------------------------

    def embedder(self) -> Embedder:
        """The embedding model (loaded lazily); the query encoder is built alongside,
        so that the first search with vectors does not wait for it."""
        with self._embedder_lock:
            if self._embedder is None:
                self._embedder = make_embedder(self.workspace.settings.embedding)
                threading.Thread(
                    target=self._embedder.query_encoder, name="codesift-query-model", daemon=True
                ).start()
            return self._embedder

    # -- FolderListener ---------------------------------------------------------------

    def progress(self, folder: FolderIndex, phase: str, done: int, total: int) -> None:
        self._notify()

    def state_changed(self, folder: FolderIndex) -> None:
        self._notify()

    def problem(self, folder: FolderIndex, message: str) -> None:
        log.warning("%s", message)
        self._notify()

    def index_replaced(self, folder: FolderIndex) -> None:
        self.readers.forget(folder.db_path)

    def _notify(self) -> None:
        with self._changed:
            self._changed.notify_all()

    # -- freshness ------------------------------------------------------------------------

    def settled(self) -> bool:
        """Whether every change seen so far is indexed (vectors may still be computed)."""
        progress = self.folder.progress
        if progress.state in ("error", "stopped"):
            return True  # nothing to wait for: the answer says why
        if not progress.first_index_done:
            return False
        work = self.folder.pending_work()
        if work["paths"] or work["rescan"] or work["watcher_paths"]:
            return False
        return not work["busy"] or progress.state not in _WRITING

    def wait_settled(self, timeout: float, cancel: Cancellation | None = None) -> bool:
        """Wait at most `timeout` seconds until `settled()`; whether it is."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not self.settled():
                left = deadline - time.monotonic()
                if left <= 0 or (cancel is not None and cancel.cancelled):
                    return False
                self._changed.wait(min(left, _POLL_SECONDS))
        return True

    def index_state(self) -> dict[str, Any]:
        """How complete the index is: `fresh` (every change seen so far is indexed),
        then the language server's completeness record (`complete` also waits for
        vectors) and the writer's warnings."""
        state: dict[str, Any] = {"fresh": self.settled()}
        state.update(self.folder.completeness())
        state.pop("uri", None)
        state.pop("folder", None)
        state["warnings"] = list(self.folder.progress.warnings)
        return state

    # -- reading ---------------------------------------------------------------------------

    def _wait_ready(self, fresh: bool, cancel: Cancellation) -> None:
        """Wait until the index is open and, when `fresh`, until the changes seen so
        far are indexed (bounded: the answer then says it is not fresh)."""
        first = not self.folder.progress.first_index_done
        wait = FIRST_INDEX_WAIT_SECONDS if first else FRESH_WAIT_SECONDS
        self.folder.wait_open(wait)
        if fresh:
            self.wait_settled(wait, cancel)

    async def read(
        self, fn: Callable[[apsw.Connection, Cancellation], T], *, fresh: bool = True
    ) -> T:
        """Run `fn(conn, cancel)` on a reader thread, once the index is fresh (or the
        wait is over) unless `fresh` is False; a cancelled call interrupts its queries.
        The wait happens on a thread of its own: reader threads stay free for calls
        that do not wait (status)."""
        cancel = Cancellation()

        def run(cancel: Cancellation) -> T:
            conn = self.readers.connection(self.folder.db_path)
            cancel.attach(conn)
            try:
                return fn(conn, cancel)
            finally:
                cancel.detach(conn)

        try:
            await anyio.to_thread.run_sync(self._wait_ready, fresh, cancel, abandon_on_cancel=True)
            return await asyncio.wrap_future(self.readers.submit(run, cancel))
        except asyncio.CancelledError:
            cancel.cancel()
            raise

    async def run(self, fn: Callable[[], T]) -> T:
        """Run `fn()` on a worker thread (blocking work that needs no connection: a
        git call resolving a revision, a wait)."""
        return await anyio.to_thread.run_sync(fn, abandon_on_cancel=True)
