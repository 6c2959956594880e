"""Work-done progress ($/progress) for the folders' background work.

One token per folder and run of work: created when its first report comes, begun
once the client has accepted it (`window/workDoneProgress/create`), ended by
`end`. Nothing is sent on a token the client has not accepted yet; what is
reported meanwhile waits (each phase's last report and the latest one) and is sent
after the `begin`, followed by the end when the work finished in between.

Every method runs on the server's event loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from lsprotocol import types
from pygls.progress import Progress

__all__ = ["ProgressTokens"]

log = logging.getLogger(__name__)

# Seconds the client has to accept a token.
ACCEPT_SECONDS = 10

# (message, percentage, the last report of its phase)
_Report = tuple[str, int | None, bool]


@dataclass(slots=True)
class _Token:
    name: str
    accepted: bool = False
    # Reports made while the client was accepting the token: each phase's last
    # (final) report, and the latest one.
    unsent: list[_Report] = field(default_factory=list)
    # The end message, when the work ended before the client accepted the token.
    ended: str | None = None


class ProgressTokens:
    """The folders' progress tokens (keyed by folder URI)."""

    def __init__(self, progress: Callable[[], Progress]) -> None:
        self._progress = progress
        self._current: dict[str, _Token] = {}
        self._count = 0
        self._tasks: set[asyncio.Future[None]] = set()

    def report(self, key: str, message: str, percent: int | None, *, final: bool) -> None:
        """Report on `key`'s token, creating it on the first report. `final`: the
        last report of a phase (its N/N), never dropped while the token waits."""
        token = self._current.get(key)
        if token is None:
            self._count += 1
            token = self._current[key] = _Token(f"codesift-index-{self._count}")
            task = asyncio.ensure_future(self._begin(key, token, message, percent))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif token.accepted:
            self._progress().report(
                token.name, types.WorkDoneProgressReport(message=message, percentage=percent)
            )
        else:  # the client has not accepted the token yet: the report waits
            if token.unsent and not token.unsent[-1][2]:  # of the rest, the latest only
                token.unsent.pop()
            token.unsent.append((message, percent, final))

    def end(self, key: str, message: str) -> None:
        """End `key`'s token (at once, or once the client has accepted it)."""
        token = self._current.pop(key, None)
        if token is None:
            return
        if token.accepted:
            self._progress().end(token.name, types.WorkDoneProgressEnd(message=message))
        else:
            token.ended = message

    async def _begin(self, key: str, token: _Token, message: str, percent: int | None) -> None:
        progress = self._progress()
        try:
            await asyncio.wait_for(progress.create_async(token.name), ACCEPT_SECONDS)
        except Exception as exc:  # the client refused or never answered
            log.info("no progress token from the client: %s", exc)
            if self._current.get(key) is token:
                del self._current[key]
            return
        progress.begin(
            token.name,
            types.WorkDoneProgressBegin(
                title="codesift", message=message, percentage=percent, cancellable=False
            ),
        )
        for unsent, unsent_percent, _ in token.unsent:
            progress.report(
                token.name, types.WorkDoneProgressReport(message=unsent, percentage=unsent_percent)
            )
        token.unsent.clear()
        if self._current.get(key) is token:
            token.accepted = True
        else:  # ended while the client accepted it
            progress.end(token.name, types.WorkDoneProgressEnd(message=token.ended or "done"))
