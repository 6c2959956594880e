"""A deadline on a server's exit, shared by the language server and the MCP server.

The interpreter joins every non-daemon thread before it exits (pools' idle
workers included, which is quick); one stuck in work that cannot be interrupted
(a statement inside SQLite, a model run) would keep the process alive, but a
client that said exit, or closed the pipe, must see the server go.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time

__all__ = ["EXIT_GRACE_SECONDS", "end_without_stuck_threads"]

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
