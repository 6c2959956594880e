"""Work that goes on after the command that started it: a detached `codesift`
process (the MiniLM vectors' `codesift embed`, the git history's `codesift
history`), its output in a log beside the index."""

from __future__ import annotations

import logging
import subprocess
import sys
import time

from codesift.engine.workspace import Workspace
from codesift.store.locks import taken

__all__ = ["start_detached", "start_detached_pass"]

log = logging.getLogger(__name__)


def start_detached(ws: Workspace, command: str, options: list[str], log_name: str) -> bool:
    """`codesift COMMAND --root ROOT OPTIONS` (and the workspace's `--config`) in a
    new session, detached from this process, its output appended to `log_name`
    beside the index after a line that says when it started; True when it
    started."""
    log_path = ws.db_path.with_name(log_name)
    if ws.config_file is not None:  # the same settings (an index placed by it, say)
        options = [*options, "--config", str(ws.config_file)]
    try:
        with log_path.open("ab") as log_file:
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
            line = " ".join(["codesift", command, "--root", str(ws.root), *options])
            log_file.write(f"{stamp} {line}\n".encode())
            log_file.flush()
            subprocess.Popen(
                [sys.executable, "-m", "codesift.cli", command, "--root", str(ws.root), *options],
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=log_file,
                start_new_session=True,
                cwd=ws.root,
            )
    except OSError as exc:
        log.warning("cannot start codesift %s in the background: %s", command, exc)
        return False
    return True


def start_detached_pass(ws: Workspace, role: str, command: str, log_name: str) -> bool:
    """A pass that holds the index's `role` lock for its whole length (`codesift
    history`, `codesift resolve`) in a detached `codesift COMMAND --background`,
    unless another process holds that lock already; True when one was started."""
    probe = taken(ws.db_path, role, f"codesift: starting the background {command}")
    if probe is None:
        return False
    probe.release()  # the child takes it; a second starter's child just waits and finds nothing
    return start_detached(ws, command, ["--background"], log_name)
