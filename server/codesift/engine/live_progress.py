"""What a live folder reports: its progress and state (`FolderProgress`), and what
its writer tells the server it serves (`Listener`; engine/live_folder.py's
`FolderListener` is the base class front ends extend)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from codesift.history.update import HistoryPending

__all__ = ["FolderProgress", "Listener"]


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
    # Files whose calls a large index run left to the call pass (call_pass.py),
    # which the writer runs right after that run.
    calls_pending: int = 0


class Listener(Protocol):
    """What the writer tells its server (engine/live_folder.py: FolderListener)."""

    def progress(self, folder: Any, phase: str, done: int, total: int) -> None: ...

    def state_changed(self, folder: Any) -> None: ...

    def problem(self, folder: Any, message: str) -> None: ...

    def index_replaced(self, folder: Any) -> None: ...
