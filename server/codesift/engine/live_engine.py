"""The engine a server answers the CLI's reading commands with (codesift/cli/served.py):
the CLI's operations on a live folder's index, without updating it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import apsw

from codesift.engine.listener import EngineListener
from codesift.engine.session import Engine
from codesift.engine.workspace import Workspace

if TYPE_CHECKING:
    from codesift.embedding import Embedder
    from codesift.engine.live import Cancellation, FolderIndex, LiveReader
    from codesift.retrieval import Searcher

__all__ = ["LiveEngine"]


class LiveEngine(Engine):
    """The engine a server runs the CLI's command with: the same operations as
    in-process (Engine.search, .symbols, .graph, with the CLI's workspace and
    settings), on this reader thread's connection to the live index and the
    folder's Searcher (its in-memory vectors, its loaded models). Never updates
    the index (the server's writer keeps it fresh) and closes nothing it shares."""

    def __init__(
        self,
        ws: Workspace,
        listener: EngineListener,
        folder: FolderIndex,
        reader: LiveReader,
        cancel: Cancellation,
        *,
        vectors: bool,
        quiet: bool,
        command: str,
    ) -> None:
        super().__init__(ws, listener, update=False, vectors=vectors, quiet=quiet, command=command)
        self.folder = folder
        self.reader = reader
        self.cancel = cancel
        self._live: apsw.Connection | None = None

    def connection(self) -> apsw.Connection:
        if self._live is None:
            self._live = self.reader.open(self.folder, None)
            self.cancel.attach(self._live)
        return self._live

    def _make_searcher(self, conn: apsw.Connection) -> Searcher:
        from codesift.store.reader import has_vectors

        warning = self.folder.rerank_status()["warning"]
        if warning:
            self.listener.warning(str(warning))
        embedder: Embedder | None = None
        if self.workspace.settings.embedding.enabled and self.vectors and has_vectors(conn):
            embedder = self.reader.embedder(self.folder)
        return self.folder.searcher(conn, embedder)

    def close(self) -> None:
        # The Searcher is the folder's and the connection the reader thread's.
        self._searcher = None
        live, self._live = self._live, None
        if live is not None:
            self.cancel.detach(live)
