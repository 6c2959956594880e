"""The codesift language server object and its protocol.

`CodesiftServer` holds the workspace folders (the engine's live `FolderIndex`,
codesift/engine/live.py, one writer each), the reader threads and the engine's
`LiveReader` over them, the options, the shared embedding models and, when the
settings name one, the shared PostgreSQL index (engine/shared_overlay.py). Folder
events reach the client through `_Listener`: $/progress, codesift/indexStatus
and window/showMessage. The handlers
live in one module per LSP area and are plain functions `(server, params) ->
result`, registered by `create_server`. Read handlers run in reader threads
(`CodesiftServer.read`), so the event loop keeps reading messages and a
$/cancelRequest reaches a running search, which is then interrupted.

The protocol (`CodesiftProtocol`, pygls's adjusted) is in lsp/protocol.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote, urlparse

import apsw
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcRequestCancelled
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path

from codesift import __version__
from codesift.config import EmbeddingSettings, Settings, merge_settings_leniently
from codesift.embedding import Embedder
from codesift.engine.collections import Collection
from codesift.engine.listener import EngineListener
from codesift.engine.live import (
    Cancellation,
    Embedders,
    FolderIndex,
    FolderListener,
    LiveReader,
    ReaderPool,
)
from codesift.engine.live_collections import LiveCollections, Mounted
from codesift.engine.shared_overlay import SharedIndex, folder_repo_key, shared_dsn
from codesift.errors import CodesiftError
from codesift.local_socket_server import CliSocketStarter, LocalSocketServer
from codesift.lsp.errors import rpc_error
from codesift.lsp.options import ServerOptions, folder_settings
from codesift.lsp.params import invalid
from codesift.lsp.progress import ProgressTokens
from codesift.lsp.protocol import PARSE_ERROR, CodesiftProtocol

__all__ = ["CodesiftProtocol", "CodesiftServer"]

log = logging.getLogger(__name__)

T = TypeVar("T")

INDEX_STATUS = "codesift/indexStatus"
# Seconds each read request waits before it starts (tests of cancellation only).
_TEST_READ_DELAY = float(os.environ.get("CODESIFT_TEST_READ_DELAY", "0") or 0)
# On shutdown, the folders' writers get this long (in all) to stop.
STOP_SECONDS = 5.0
# Progress and status notifications are sent at most this often per folder.
REPORT_INTERVAL = 0.25


def _linked_file(root: Path, rel: str) -> str:
    """`rel`, or the path of the file it links to when it is a symlink to a file in
    the same folder: the index holds such a file once, under its own path
    (workspace/discovery.py), so a document opened through the link is that file."""
    path = root / rel
    if not path.is_symlink():
        return rel
    try:
        target = Path(os.path.realpath(path, strict=True))
        return target.relative_to(os.path.realpath(root)).as_posix()
    except (OSError, ValueError):
        return rel


class _Listener(FolderListener):
    """Turns folder events into $/progress and codesift/indexStatus notifications."""

    def __init__(self, server: CodesiftServer) -> None:
        self.server = server
        self._last: dict[str, float] = {}
        self._tokens: dict[str, str] = {}
        self._lock = threading.Lock()

    def progress(self, folder: FolderIndex, phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        # The last file of a phase is always reported, however soon after the one
        # before: a quick index still says it parsed its files.
        final = phase in (
            "indexed",
            "embedded",
            "scanning",
            "waiting",
            "calls resolving",
            "history done",
        ) or (
            phase
            in (
                "parsing",
                "embedding",
                "static vectors",
                "calls files",
                "history walking",
                "history timing",
            )
            and total > 0
            and done >= total
        )
        with self._lock:
            if not final and now - self._last.get(folder.uri, 0.0) < REPORT_INTERVAL:
                return
            self._last[folder.uri] = now
        if phase == "scanning":
            message = f"{folder.name}: scanning"
        elif phase == "parsing":
            message = f"{folder.name}: parsing {done}/{total} files"
        elif phase == "embedding":
            message = f"{folder.name}: embedding {done}/{total} chunks"
        elif phase == "indexed":
            message = f"{folder.name}: indexed {total} files"
        elif phase == "static vectors":
            message = f"{folder.name}: static vectors {done}/{total} chunks"
        elif phase == "calls files":
            message = f"{folder.name}: call graph {done}/{total} files"
        elif phase == "calls resolving":
            message = f"{folder.name}: call graph: resolving calls across files"
        elif phase == "history walking":
            message = f"{folder.name}: git history {done}/{total} commits"
        elif phase == "history timing":
            message = f"{folder.name}: git times {done}/{total} files"
        elif phase == "history done":
            message = f"{folder.name}: git history complete"
        elif phase == "waiting":
            holder = folder.progress.waiting_for or "another process"
            message = f"{folder.name}: waiting for the index ({holder})"
        else:
            message = f"{folder.name}: embedded {done} chunks"
        percent = int(100 * done / total) if total else None
        if phase in ("indexed", "embedded", "history done"):
            self.server.end_progress(folder, message)
        else:
            self.server.report_progress(folder, message, percent, final=final)
        self.server.send_index_status(folder)

    def state_changed(self, folder: FolderIndex) -> None:
        self.server.send_index_status(folder)
        if folder.progress.state == "ready":
            self.server.end_progress(folder, f"{folder.name}: ready")

    def problem(self, folder: FolderIndex, message: str) -> None:
        self.server.show_message(message, types.MessageType.Warning)

    def index_replaced(self, folder: FolderIndex) -> None:
        self.server.readers.forget(folder.db_path)


class _CollectionListener(FolderListener):
    """A collection's live index reports problems only: its progress is not a
    workspace folder's (no $/progress, no codesift/indexStatus)."""

    def __init__(self, server: CodesiftServer) -> None:
        self.server = server

    def problem(self, folder: FolderIndex, message: str) -> None:
        self.server.show_message(f"collection {folder.name}: {message}")

    def index_replaced(self, folder: FolderIndex) -> None:
        self.server.readers.forget(folder.db_path)


class CodesiftServer(LanguageServer):
    def __init__(self, cli_socket: CliSocketStarter | None = None) -> None:
        super().__init__(
            "codesift",
            __version__,
            protocol_cls=CodesiftProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Full,
        )
        self.options = ServerOptions()
        self.folders: dict[str, FolderIndex] = {}
        # Each folder's local socket, on which `codesift search` & co. ask this server,
        # started by `cli_socket` (the CLI's, given to `serve`).
        self.cli_socket = cli_socket
        self.sockets: dict[str, LocalSocketServer] = {}
        self.readers = ReaderPool()
        self.embedders = Embedders()
        # Reads on a folder (open, this thread's connection, the engine's call).
        self.live = LiveReader(self.readers, self.embedders)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.listener = _Listener(self)
        # The document collections the folders list: a live index per collection
        # folder (engine/live_collections.py), shared by the folders that list it.
        self.collections = LiveCollections(self._collection_index)
        self._collection_listener = _CollectionListener(self)
        self._folders_lock = threading.Lock()
        self.progress_tokens = ProgressTokens(lambda: self.work_done_progress)
        self.client_progress = False
        self.stopped = False
        # The shared PostgreSQL index the settings name (index.backend =
        # "postgres"), read besides the folders' local indexes.
        self._shared: SharedIndex | None = None

    # -- the shared index ------------------------------------------------------------

    def shared_index(self) -> SharedIndex | None:
        """The shared index named by the client's `index` section, else by the first
        folder whose settings name one (None: the folders' local indexes only)."""
        dsn = shared_dsn(self.options.overrides.get("index"))
        if dsn is None:
            dsn = next((d for d in (shared_dsn(f.settings) for f in self.folder_list()) if d), None)
        with self._folders_lock:
            current = self._shared
            if current is not None and (dsn is None or current.dsn != dsn):
                self._shared = None
            elif current is not None:
                return current
            if dsn is not None:
                folders = list(self.folders.values())
                search = folders[0].settings.search if folders else None
                self._shared = SharedIndex(dsn, settings=search, embedder=self.shared_embedder)
            fresh = self._shared
        if current is not None and current is not fresh:
            current.close()
        return fresh

    def shared_embedder(self) -> Embedder | None:
        """The query embedder of the shared search: the first folder's, which its
        local searches use (one model in memory, the query embedded once per
        request), else the client's settings'; None when embeddings are off."""
        folders = self.folder_list()
        if folders:
            embedding = folders[0].settings.embedding
        else:
            settings, _ = merge_settings_leniently(Settings(), self.options.overrides)
            embedding = settings.embedding
        if not (embedding.enabled and self.options.embeddings):
            return None
        return self.embedder(embedding)

    def open_repo_keys(self) -> dict[str, str]:
        """Each open folder's repository key in the shared index, by folder name
        (its local index overlays the shared one)."""
        keys: dict[str, str] = {}
        for folder in self.folder_list():
            try:
                keys[folder.name] = folder_repo_key(folder.root, folder.settings)
            except Exception as exc:  # an unreadable repository: its folder name
                log.info("no repository key for %s: %s", folder.root, exc)
                keys[folder.name] = folder.root.name
        return keys

    # -- reading ---------------------------------------------------------------------

    async def read(self, fn: Callable[[Cancellation], T]) -> T:
        """Run `fn` in a reader thread; a cancelled request interrupts its queries."""
        cancel = Cancellation()
        delay = _TEST_READ_DELAY
        if delay > 0:  # tests of $/cancelRequest need a request that is still running

            def slow(cancel: Cancellation) -> T:
                cancel.event.wait(delay)
                if cancel.cancelled:
                    raise JsonRpcRequestCancelled(message="the request was cancelled")
                return fn(cancel)

            future = self.readers.submit(slow, cancel)
        else:
            future = self.readers.submit(fn, cancel)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            cancel.cancel()
            raise

    # -- folders ---------------------------------------------------------------------

    def embedder(self, settings: EmbeddingSettings) -> Embedder:
        """The embedding model for these settings; folders with the same model
        settings share one (it is the largest thing in memory)."""
        return self.embedders.get(settings)

    def _collection_index(self, collection: Collection) -> FolderIndex:
        settings = collection.workspace.settings
        if not self.options.embeddings:
            settings = replace(settings, embedding=replace(settings.embedding, enabled=False))
        return FolderIndex(
            collection.name,
            path_to_uri(collection.root),
            collection.root,
            settings,
            self._collection_listener,
            lambda: self.embedder(settings.embedding),
            watch=self.options.watch,
            quiet=self.options.quiet_ms / 1000,
            max_wait=self.options.max_wait_ms / 1000,
        )

    def _mount_collections(self, folder: FolderIndex) -> None:
        """Start (or share) the live indexes of the collections `folder` lists."""
        stopped_before = self.collections.indexes()
        self.collections.mount(folder.uri, folder.workspace, _Warnings(self))
        still = set(map(id, self.collections.indexes()))
        for index in stopped_before:
            if id(index) not in still:
                self.readers.forget(index.db_path)

    def _unmount_collections(self, uri: str) -> None:
        for index in self.collections.unmount(uri):
            self.readers.forget(index.db_path)

    def mounted(self, folders: Sequence[FolderIndex]) -> list[Mounted]:
        """The collections `folders` list, each collection folder once."""
        return self.collections.distinct([f.uri for f in folders])

    def folder_list(self) -> list[FolderIndex]:
        with self._folders_lock:
            return list(self.folders.values())

    def add_folder(self, uri: str, name: str) -> FolderIndex | None:
        root = uri_to_path(uri)
        if root is None or not root.is_dir():
            self.show_message(f"codesift: workspace folder {uri} is not a local folder; skipped")
            return None
        with self._folders_lock:
            if uri in self.folders:
                return self.folders[uri]
        settings, problems = folder_settings(root, self.options)
        for problem in problems:
            self.show_message(f"codesift: {problem}")
        folder = FolderIndex(
            name or root.name,
            uri,
            root,
            settings,
            self.listener,
            lambda: self.embedder(settings.embedding),
            watch=self.options.watch,
            quiet=self.options.quiet_ms / 1000,
            max_wait=self.options.max_wait_ms / 1000,
        )
        with self._folders_lock:
            self.folders[uri] = folder
        folder.start()
        self._mount_collections(folder)
        self._serve_cli(uri, folder)
        log.info("indexing %s into %s", root, folder.db_path)
        return folder

    def _serve_cli(self, uri: str, folder: FolderIndex) -> None:
        """Answer the CLI's reading commands for `folder` on its local socket."""
        if self.cli_socket is None:
            return
        socket = self.cli_socket(folder, self.live, "codesift serve")
        with self._folders_lock:
            old = self.sockets.pop(uri, None)
            self.sockets[uri] = socket
        if old is not None:
            old.stop()

    def _stop_cli(self, uri: str) -> None:
        with self._folders_lock:
            socket = self.sockets.pop(uri, None)
        if socket is not None:
            socket.stop()

    def remove_folder(self, uri: str) -> None:
        with self._folders_lock:
            folder = self.folders.pop(uri, None)
        self._stop_cli(uri)
        self._unmount_collections(uri)
        if folder is not None:
            folder.stop()
            self.readers.forget(folder.db_path)
            self.end_progress(folder, f"{folder.name}: removed")

    def folder_for_uri(self, uri: str) -> tuple[FolderIndex, str]:
        """The folder containing `uri` (the innermost one) and the path relative to it."""
        path = uri_to_path(uri)
        if path is None:
            raise invalid(f"{uri!r} is not a file URI")
        path = Path(os.path.normpath(path))  # `..` must not lead out of a folder
        best: tuple[FolderIndex, str] | None = None
        for folder in self.folder_list():
            for root in (folder.root, Path(str(folder.root))):
                try:
                    rel = path.relative_to(root).as_posix()
                except ValueError:
                    try:
                        rel = path.resolve().relative_to(root).as_posix()
                    except (ValueError, OSError):
                        continue
                if best is None or len(str(folder.root)) > len(str(best[0].root)):
                    best = (folder, "" if rel == "." else _linked_file(root, rel))
                break
        if best is None:
            raise invalid(f"{uri} is outside every workspace folder")
        return best

    def select_folders(self, wanted: tuple[str, ...]) -> list[FolderIndex]:
        """Folders chosen by name, URI or path; all when `wanted` is empty."""
        folders = self.folder_list()
        if not wanted:
            return folders
        chosen: list[FolderIndex] = []
        for item in wanted:
            match = [
                f
                for f in folders
                if item in (f.name, f.uri, str(f.root)) or uri_to_path(item) == f.root
            ]
            if not match:
                names = ", ".join(f.name for f in folders) or "none"
                raise invalid(f"no workspace folder {item!r} (folders: {names})")
            chosen.extend(m for m in match if m not in chosen)
        return chosen

    def apply_options(self, options: ServerOptions) -> None:
        """New options: folders whose index, embedding or rerank settings changed are
        restarted (and rescanned); new search settings apply to the next search."""
        old = self.options
        self.options = options
        for folder in self.folder_list():
            settings, _ = folder_settings(folder.root, options)
            restart = replace(settings, search=folder.settings.search) != folder.settings or (
                (old.watch, old.quiet_ms, old.max_wait_ms)
                != (options.watch, options.quiet_ms, options.max_wait_ms)
            )
            if not restart and settings.search != folder.settings.search:
                folder.use_search_settings(settings.search)
            elif restart:
                self.remove_folder(folder.uri)
                self.add_folder(folder.uri, folder.name)

    def shutdown_folders(self, timeout: float = STOP_SECONDS) -> bool:
        """Stop every folder: all are told at once, then waited for `timeout` seconds
        in all. Whether every writer ended (one stuck in work that cannot be
        interrupted is left behind; `serve` ends the process regardless)."""
        self.stopped = True
        with self._folders_lock:
            folders, self.folders = list(self.folders.values()), {}
            sockets, self.sockets = list(self.sockets.values()), {}
        for socket in sockets:
            socket.stop(timeout=0)
        folders.extend(self.collections.stop_all())
        for folder in folders:
            folder.request_stop()
        deadline = time.monotonic() + timeout
        ended = all([folder.join(deadline - time.monotonic()) for folder in folders])
        self.readers.close(wait=False)
        with self._folders_lock:
            shared, self._shared = self._shared, None
        if shared is not None:
            shared.close()
        if not ended:
            stuck = ", ".join(f.name for f in folders if not f.join(0))
            log.warning("the writers of %s did not stop within %.0f s", stuck, timeout)
        return ended

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Errors outside any request: a message that is not JSON gets a ParseError
        reply; anything else is logged (one line), never shown as a popup."""
        if isinstance(error, ValueError) and not isinstance(error, JsonRpcException):
            # json.loads failed: the body of a message is not JSON
            protocol = self.protocol
            if isinstance(protocol, CodesiftProtocol):
                protocol.reply_error(None, PARSE_ERROR, f"parse error: {error}")
                return
        log.warning("error outside a request (%s): %s", getattr(source, "__name__", source), error)

    # -- talking to the client from any thread -----------------------------------------

    def call_soon(self, fn: Callable[[], Any]) -> None:
        loop = self.loop
        if loop is None or loop.is_closed() or self.stopped:
            return
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(fn)

    def show_message(
        self, message: str, kind: types.MessageType = types.MessageType.Warning
    ) -> None:
        log.warning("%s", message)
        self.call_soon(
            lambda: self.window_show_message(types.ShowMessageParams(type=kind, message=message))
        )

    def send_index_status(self, folder: FolderIndex) -> None:
        status = folder.completeness()
        pending = folder.pending_work()
        status["pending"] = pending
        status["chunks_done"] = folder.progress.chunks_done
        status["chunks_total"] = folder.progress.chunks_total
        self.call_soon(lambda: self.protocol.notify(INDEX_STATUS, status))

    def report_progress(
        self, folder: FolderIndex, message: str, percent: int | None, *, final: bool = False
    ) -> None:
        """$/progress for a folder's work (lsp/progress.py). `final`: the last report
        of a phase (its N/N), which is never dropped."""
        if self.client_progress:
            self.call_soon(
                lambda: self.progress_tokens.report(folder.uri, message, percent, final=final)
            )

    def end_progress(self, folder: FolderIndex, message: str) -> None:
        self.call_soon(lambda: self.progress_tokens.end(folder.uri, message))


class _Warnings(EngineListener):
    """Engine warnings (a collection folder that is missing) as messages to the user."""

    def __init__(self, server: CodesiftServer) -> None:
        self.server = server

    def warning(self, message: str) -> None:
        self.server.show_message(f"codesift: {message}")


def uri_to_path(uri: str) -> Path | None:
    if uri.startswith("/"):
        return Path(uri)
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


def path_to_uri(path: Path) -> str:
    return from_fs_path(str(path)) or path.as_uri()


def bind(
    server: CodesiftServer, handler: Callable[[CodesiftServer, Any], Awaitable[T]]
) -> Callable[[Any], Awaitable[T]]:
    """An async handler `(server, params)` as pygls wants it: `(params)`."""

    async def handle(params: Any) -> T:
        try:
            return await handler(server, params)
        except (CodesiftError, apsw.Error) as exc:
            raise rpc_error(exc) from exc

    handle.__name__ = getattr(handler, "__name__", "handler")
    return handle
