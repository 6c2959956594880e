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

A server may serve several folders (`codesift web --root A --root B`): each is a
`FolderIndex` of its own (`folders`, the first also `folder`), named as a search
over several folders names them (engine/workspace.py, `folder_names`); a search
reads them all through the engine's one conductor.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
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
from codesift.engine.workspace import folder_names
from codesift.errors import QueryError
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
    embedding), and an Engine for building requests with the workspace's defaults.
    `more`: further folders served beside it (each a FolderIndex of its own)."""

    def __init__(
        self,
        workspace: Workspace,
        *,
        more: Sequence[Workspace] = (),
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
        spaces = [workspace, *more]
        names = (
            folder_names([ws.root for ws in spaces])
            if more
            else [workspace.root.name or str(workspace.root)]
        )
        self.folder = FolderIndex(
            names[0],
            workspace.root.as_uri(),
            workspace.root,
            workspace.settings,
            self,
            self.embedder,
            watch=watch,
        )
        # Every folder served, the workspace's first; their workspaces by name.
        self.folders: list[FolderIndex] = [self.folder]
        self.workspaces: dict[str, Workspace] = {names[0]: workspace}
        for name, ws in zip(names[1:], more, strict=True):
            self.folders.append(self._folder_index(name, ws, watch))
            self.workspaces[name] = ws
        self._watch = watch
        # Starts the local socket on which `codesift search` & co. ask this server.
        self._cli_socket = cli_socket
        self.socket: LocalSocketServer | None = None
        self.sockets: list[LocalSocketServer] = []
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

    def _folder_index(self, name: str, ws: Workspace, watch: bool) -> FolderIndex:
        return FolderIndex(
            name,
            ws.root.as_uri(),
            ws.root,
            ws.settings,
            self,
            lambda: self.reader.embedders.get(ws.settings.embedding),
            watch=watch,
        )

    def _collection_index(self, collection: Collection) -> FolderIndex:
        return self._folder_index(collection.name, collection.workspace, self._watch)

    def mounted(self, folders: Sequence[FolderIndex] | None = None) -> list[Mounted]:
        """The collections of `folders` (default: every folder served) and their
        live indexes, each index once (as a search's resources count them)."""
        chosen = self.folders if folders is None else folders
        return self.collections.distinct([folder.uri for folder in chosen])

    def folder_named(self, name: str | None) -> FolderIndex:
        """The folder served under `name` (None: the first); QueryError naming the
        folders served for another."""
        if name is None:
            return self.folder
        for folder in self.folders:
            if folder.name == name:
                return folder
        served = ", ".join(folder.name for folder in self.folders)
        raise QueryError(f"no folder named {name!r} is served (folders: {served})")

    @property
    def db_path(self) -> Path:
        return self.folder.db_path

    def start(self) -> None:
        for folder in self.folders:
            folder.start()
            self.collections.mount(folder.uri, self.workspaces[folder.name])
            if self._cli_socket is not None:
                self.sockets.append(self._cli_socket(folder, self.reader, self.command))
            log.info("%s: indexing %s into %s", self.command, folder.root, folder.db_path)
        self.socket = self.sockets[0] if self.sockets else None

    def stop(self, timeout: float = STOP_SECONDS) -> bool:
        """Stop the writers and the watchers, close the readers; whether the writers ended."""
        for socket in self.sockets:
            socket.stop(timeout=0)
        for folder in self.folders:
            folder.request_stop()
        collections = self.collections.stop_all()
        ended = all([folder.join(timeout) for folder in self.folders])
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

    def repo_key(self, folder: FolderIndex | None = None) -> str:
        """A served folder's repository key in the shared index (default: the
        first's), left out of it: the local index answers for it."""
        ws = self.workspace if folder is None else self.workspaces[folder.name]
        try:
            return folder_repo_key(ws.root, ws.settings)
        except Exception as exc:  # an unreadable repository: the folder's name
            log.info("no repository key for %s: %s", ws.root, exc)
            return ws.root.name

    def repo_keys(self) -> dict[str, str]:
        """Every served folder's repository key, by folder name."""
        return {folder.name: self.repo_key(folder) for folder in self.folders}

    def shared_status(self) -> SharedStatus | None:
        """The shared index's status (None without one)."""
        if self.shared is None:
            return None
        return self.shared.status(set(self.repo_keys().values()))

    # -- FolderListener ---------------------------------------------------------------

    def problem(self, folder: FolderIndex, message: str) -> None:
        log.warning("%s", message)

    def index_replaced(self, folder: FolderIndex) -> None:
        self.reader.readers.forget(folder.db_path)

    # -- freshness ------------------------------------------------------------------------

    def settled(self) -> bool:
        """Whether every change seen so far is indexed (vectors may still be computed)."""
        return all(folder.settled() for folder in self.folders)

    def wait_settled(self, timeout: float, cancel: Cancellation | None = None) -> bool:
        """Wait at most `timeout` seconds until `settled()`; whether it is."""
        deadline = time.monotonic() + timeout
        return all(
            folder.wait_settled(max(0.0, deadline - time.monotonic()), cancel)
            for folder in self.folders
        )

    def _folder_state(self, folder: FolderIndex) -> dict[str, Any]:
        state: dict[str, Any] = {"fresh": folder.settled()}
        state.update(folder.completeness())
        state.pop("uri", None)
        state.pop("folder", None)
        state["warnings"] = list(folder.progress.warnings)
        return state

    def index_state(self) -> dict[str, Any]:
        """How complete the index is: `fresh` (every change seen so far is indexed),
        then the folder's completeness record (`complete` also waits for vectors)
        and the writer's warnings. Several folders: the first's record, `fresh` and
        `complete` over all of them, and each folder's record under `roots`."""
        state = self._folder_state(self.folder)
        if len(self.folders) == 1:
            return state
        roots = [{"root": f.name, **self._folder_state(f)} for f in self.folders]
        state["fresh"] = all(r["fresh"] for r in roots)
        state["complete"] = all(r.get("complete", True) for r in roots)
        state["warnings"] = [f"{r['root']}: {w}" for r in roots for w in r["warnings"]]
        state["roots"] = roots
        return state

    # -- reading ---------------------------------------------------------------------------

    def _wait_ready(self, fresh: bool, cancel: Cancellation) -> None:
        """Wait until the index is open and, when `fresh`, until the changes seen so
        far are indexed (bounded: the answer then says it is not fresh)."""
        for folder in self.folders:
            first = not folder.progress.first_index_done
            wait = FIRST_INDEX_WAIT_SECONDS if first else FRESH_WAIT_SECONDS
            if fresh:
                self.reader.wait_fresh(folder, cancel, open_timeout=wait, fresh_timeout=wait)
            else:
                folder.wait_open(wait)

    async def read(self, fn: Callable[[Cancellation], T], *, fresh: bool = True) -> T:
        """Run `fn(cancel)` on a reader thread, once the index is fresh (or the wait
        is over) unless `fresh` is False; `fn` reads through `self.reader` with
        `open_timeout=None` (the index is open by then), and a cancelled call
        interrupts its queries. A wait happens on a thread of its own: reader
        threads stay free for calls that do not wait (status); when nothing is to
        be waited for, the check runs on the reader thread (one hop fewer)."""
        cancel = Cancellation()
        try:
            if all(folder.ready_now() for folder in self.folders):
                # Nothing to wait for: the (then instant) check runs on the reader
                # thread, and the request takes one thread hop instead of two.
                def ready_then(cancel: Cancellation) -> T:
                    self._wait_ready(fresh, cancel)
                    return fn(cancel)

                return await asyncio.wrap_future(self.reader.readers.submit(ready_then, cancel))
            await anyio.to_thread.run_sync(self._wait_ready, fresh, cancel, abandon_on_cancel=True)
            return await asyncio.wrap_future(self.reader.readers.submit(fn, cancel))
        except asyncio.CancelledError:
            cancel.cancel()
            raise

    async def run(self, fn: Callable[[], T]) -> T:
        """Run `fn()` on a worker thread (blocking work that needs no connection: a
        git call resolving a revision, a wait)."""
        return await anyio.to_thread.run_sync(fn, abandon_on_cancel=True)
