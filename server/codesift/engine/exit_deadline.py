"""A deadline on a server's exit, shared by the language server and the MCP server.

The interpreter joins every non-daemon thread before it exits (pools' idle
workers included, which is quick); one stuck in work that cannot be interrupted
(a statement inside SQLite, a model run) would keep the process alive, but a
client that said exit, or closed the pipe, must see the server go.

A server told to stop by a signal (SIGTERM from a process manager, SIGINT from a
terminal) stops its folders, which removes their local sockets, and then ends:
`stop_on_signals`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from types import FrameType

__all__ = ["EXIT_GRACE_SECONDS", "end_without_stuck_threads", "stop_on_signals"]

log = logging.getLogger(__name__)

EXIT_GRACE_SECONDS = 5.0


def end_without_stuck_threads(grace: float = EXIT_GRACE_SECONDS) -> None:
    """Start a daemon thread that ends the process `grace` seconds from now unless
    it has ended by then, naming the threads that were still running."""

    def deadline() -> None:
        time.sleep(grace)
        current = threading.current_thread()
        stuck = [t.name for t in threading.enumerate() if t is not current and not t.daemon]
        with contextlib.suppress(Exception):
            log.warning("exiting with background work still running (%s)", ", ".join(stuck))
            for handler in logging.getLogger().handlers:
                handler.flush()
        os._exit(0)

    threading.Thread(target=deadline, name="codesift-exit-deadline", daemon=True).start()


def _flush_logs() -> None:
    with contextlib.suppress(Exception):
        for handler in logging.getLogger().handlers:
            handler.flush()


def stop_on_signals(stop: Callable[[], object], grace: float = EXIT_GRACE_SECONDS) -> None:
    """On SIGTERM or SIGINT, run `stop` (the server's own shutdown: its folders'
    writers and local sockets) on a thread of its own, then end the process with
    status 0. Not in the signal handler itself: the main thread may be blocked in
    a read of stdin that no exception reaches, or hold a lock `stop` needs. A stop
    that does not end is cut short by `end_without_stuck_threads`. Call it from
    the main thread (only that thread may set signal handlers)."""
    started = threading.Event()

    def shut_down(name: str) -> None:
        try:
            log.info("%s received: stopping", name)
            end_without_stuck_threads(grace + 10.0)
            stop()
        except Exception:
            log.exception("stopping after %s failed", name)
        finally:
            _flush_logs()
            os._exit(0)

    def handler(signum: int, frame: FrameType | None) -> None:
        if started.is_set():
            return  # already stopping (a second Ctrl-C, say)
        started.set()
        name = signal.Signals(signum).name
        threading.Thread(target=shut_down, args=(name,), name="codesift-signal-stop").start()

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, handler)
