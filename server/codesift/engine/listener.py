"""What the engine tells its front end while it works: notes, warnings, progress.

The engine never prints. A front end passes an `EngineListener` (the CLI renders
notes on stderr and progress as a bar or periodic lines; a server may log them
or send them to its client); the base class ignores everything.
"""

from __future__ import annotations

__all__ = ["EngineListener"]


class EngineListener:
    """Callbacks from engine operations (any may be left as the no-op default)."""

    def note(self, message: str) -> None:
        """Something worth knowing that changes nothing (searching a busy index as it is)."""

    def warning(self, message: str) -> None:
        """Something did not work and the operation went on without it."""

    def waiting(self, holder: str, what: str) -> None:
        """This process waits for another one (`holder`, may be empty) to release
        the index's write lock; `what` says what waits (`this run starts after it`),
        or, for "the git history pass", that it waits for another's history pass."""

    def begin(self, task: str, total: int) -> None:
        """A task with `total` steps starts: `indexing` (files), `embedding` (chunks),
        `git history: commits` or `git history: files` (engine/history.py)."""

    def advance(self, done: int, detail: str = "") -> None:
        """`done` steps of the current task are finished (`detail`: the current file)."""

    def phase(self, description: str) -> None:
        """The current task moved to another phase (`resolving calls`)."""

    def end(self) -> None:
        """The current task finished (or failed)."""
