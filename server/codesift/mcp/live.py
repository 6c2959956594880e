"""The workspace the MCP server answers for, its index kept fresh while it runs.

Freshness is the engine's live index (codesift/engine/live.py), as the language
server uses it: a `FolderIndex` owns the index's writer thread and a watchdog
watcher (changes coalesced, then indexed; vectors computed in the background,
one embedder per index; writers queue on the index's write lock, so a `codesift
index` or a language server on the same workspace takes turns with it). Reads
run on `ReaderPool` threads through the engine's `LiveReader`, each thread with
its own connection, and never block the writer (SQLite WAL).

With `index.backend = "postgres"` in the workspace's settings, the shared
PostgreSQL index is searched and routed over besides the local index
(engine/shared_overlay.py), this workspace's own repository left out of it.

Before a read, the server waits (at most `FRESH_WAIT_SECONDS`) until the changes
seen so far are indexed (vectors excluded): an agent that edits a file and then
searches finds its edit. An answer given before that says so (`index.complete`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio.to_thread

from codesift.embedding import Embedder
from codesift.engine import Engine, Workspace
from codesift.engine.collections import Collection
from codesift.engine.live import (
    Cancellation,
    FolderIndex,
    FolderListener,
    LiveReader,
    ReaderPool,
)
from codesift.engine.live_collections import LiveCollections, Mounted
from codesift.engine.shared_overlay import SharedIndex, SharedStatus, folder_repo_key, shared_dsn
from codesift.local_socket_server import CliSocketStarter, LocalSocketServer

__all__ = ["FIRST_INDEX_WAIT_SECONDS", "FRESH_WAIT_SECONDS", "LiveWorkspace"]

log = logging.getLogger(__name__)

T = TypeVar("T")

# A read waits this long for changes already seen to be indexed ...
FRESH_WAIT_SECONDS = 10.0
# ... and this long for the first index of the workspace (built when the server starts).
FIRST_INDEX_WAIT_SECONDS = 60.0
# When the server ends, the writer gets this long to stop.
STOP_SECONDS = 10.0


class LiveWorkspace(FolderListener):
    """One workspace: its FolderIndex (writer + watcher), the engine's LiveReader
    (reader threads, the embedding model shared by the writer and query
    embedding), and an Engine for building requests with the workspace's defaults."""

    def __init__(
        self,
        workspace: Workspace,
        *,
        watch: bool = True,
        readers: int = 2,
        cli_socket: CliSocketStarter | None = None,
        command: str = "codesift mcp",
    ) -> None:
        self.workspace = workspace
        # Never opened: requests and time windows are built by it (engine defaults).
        # `command`: the server's name in what it says (`codesift search -vv`
        # names the server that answered it).
        self.command = command
        self.engine = Engine(workspace, update=False, quiet=True, command=command)
        self.reader = LiveReader(ReaderPool(readers))
        self.folder = FolderIndex(
            workspace.root.name or str(workspace.root),
            workspace.root.as_uri(),
            workspace.root,
            workspace.settings,
            self,
            self.embedder,
            watch=watch,
        )
        self._watch = watch
        # Starts the local socket on which `codesift search` & co. ask this server.
        self._cli_socket = cli_socket
        self.socket: LocalSocketServer | None = None
        # The shared PostgreSQL index the settings name (index.backend = "postgres"),
        # searched besides this workspace's local index.
        # Its query vectors are the local search's (the same embedder, the query
        # embedded once per request), none with embeddings off.
        dsn = shared_dsn(workspace.settings)
        self.shared = (
            SharedIndex(dsn, settings=workspace.settings.search, embedder=self.query_embedder)
            if dsn is not None
            else None
        )
        # The document collections the workspace lists, each with a live index too.
        self.collections = LiveCollections(self._collection_index)

    def _collection_index(self, collection: Collection) -> FolderIndex:
        ws = collection.workspace
        return FolderIndex(
            collection.name,
            ws.root.as_uri(),
            ws.root,
            ws.settings,
            self,
            lambda: self.reader.embedders.get(ws.settings.embedding),
            watch=self._watch,
        )

    def mounted(self) -> list[Mounted]:
        """The workspace's collections and their live indexes."""
        return self.collections.of(self.folder.uri)

    @property
    def db_path(self) -> Path:
        return self.folder.db_path

    def start(self) -> None:
        self.folder.start()
        self.collections.mount(self.folder.uri, self.workspace)
        if self._cli_socket is not None:
            self.socket = self._cli_socket(self.folder, self.reader, self.command)
        log.info("%s: indexing %s into %s", self.command, self.workspace.root, self.folder.db_path)

    def stop(self, timeout: float = STOP_SECONDS) -> bool:
        """Stop the writer and the watcher, close the readers; whether the writer ended."""
        if self.socket is not None:
            self.socket.stop(timeout=0)
        self.folder.request_stop()
        collections = self.collections.stop_all()
        ended = self.folder.join(timeout)
        for index in collections:
            index.join(timeout)
        self.reader.close(wait=False)
        if self.shared is not None:
            self.shared.close()
        if not ended:
            log.warning("the index writer did not stop within %.0f s", timeout)
        return ended

    def embedder(self) -> Embedder:
        """The embedding model (loaded lazily; its query encoder built alongside)."""
        return self.reader.embedder(self.folder)

    def query_embedder(self) -> Embedder | None:
        """The embedding model for query vectors, None when embeddings are off."""
        return self.embedder() if self.workspace.settings.embedding.enabled else None

    def repo_key(self) -> str:
        """This workspace's repository key in the shared index (left out of it: the
        local index answers for it)."""
        try:
            return folder_repo_key(self.workspace.root, self.workspace.settings)
        except Exception as exc:  # an unreadable repository: the folder's name
            log.info("no repository key for %s: %s", self.workspace.root, exc)
            return self.workspace.root.name

    def shared_status(self) -> SharedStatus | None:
        """The shared index's status (None without one)."""
        if self.shared is None:
            return None
        return self.shared.status({self.repo_key()})

    # -- FolderListener ---------------------------------------------------------------

    def problem(self, folder: FolderIndex, message: str) -> None:
        log.warning("%s", message)

    def index_replaced(self, folder: FolderIndex) -> None:
        self.reader.readers.forget(folder.db_path)

    # -- freshness ------------------------------------------------------------------------

    def settled(self) -> bool:
        """Whether every change seen so far is indexed (vectors may still be computed)."""
        return self.folder.settled()

    def wait_settled(self, timeout: float, cancel: Cancellation | None = None) -> bool:
        """Wait at most `timeout` seconds until `settled()`; whether it is."""
        return self.folder.wait_settled(timeout, cancel)

    def index_state(self) -> dict[str, Any]:
        """How complete the index is: `fresh` (every change seen so far is indexed),
        then the folder's completeness record (`complete` also waits for vectors)
        and the writer's warnings."""
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
        if fresh:
            self.reader.wait_fresh(self.folder, cancel, open_timeout=wait, fresh_timeout=wait)
        else:
            self.folder.wait_open(wait)

    async def read(self, fn: Callable[[Cancellation], T], *, fresh: bool = True) -> T:
        """Run `fn(cancel)` on a reader thread, once the index is fresh (or the wait
        is over) unless `fresh` is False; `fn` reads through `self.reader` with
        `open_timeout=None` (the index is open by then), and a cancelled call
        interrupts its queries. The wait happens on a thread of its own: reader
        threads stay free for calls that do not wait (status)."""
        cancel = Cancellation()
        try:
            await anyio.to_thread.run_sync(self._wait_ready, fresh, cancel, abandon_on_cancel=True)
            return await asyncio.wrap_future(self.reader.readers.submit(fn, cancel))
        except asyncio.CancelledError:
            cancel.cancel()
            raise

    async def run(self, fn: Callable[[], T]) -> T:
        """Run `fn()` on a worker thread (blocking work that needs no connection: a
        git call resolving a revision, a wait)."""
        return await anyio.to_thread.run_sync(fn, abandon_on_cancel=True)
