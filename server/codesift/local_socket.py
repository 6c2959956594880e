"""The local socket through which a one-shot `codesift search` asks a running server.

A server (`codesift serve`, `codesift mcp`) that keeps an index live listens on
a Unix socket beside the index file (`<index>.sock`, e.g.
`.codesift/index.db.sock`), created with mode 0600 and answering only
connections from its own user (SO_PEERCRED); the client, likewise, talks only
to a server of its own user (what it prints reaches the user's terminal). The
CLI's reading commands
(search, symbols, callers, callees, graph) ask it instead of loading the
engine, the index and the models themselves; without an answer they run
in-process as before. This module is the transport only and imports nothing
but a few standard modules, so that the CLI's fast path stays small (the
server's side is local_socket_server.py).

Protocol (one request per connection, JSON lines, UTF-8; see docs/protocol.md):

    client -> server   {"protocol": 3, "command": ..., "argv": [...], "cwd": ...,
                        "root": ..., "db_path": ...}
    server -> client   {"accepted": true}                          (at once)
    server -> client   {"exit": 0, "server": {...},
                        "notes": [{"level": "note", "message": "..."}],
                        "error": null,
                        "shown": {"view": "search", "json": false,
                                  "data": {...}, "params": {...}}}
                    or {"fallback": "why the CLI should answer in-process"}

`shown` is what the command shows, as its JSON (the document `--json` prints,
engine/results.py's vocabulary; null after an error): the CLI prints it as is
for `--json`, else draws its page with cli/render_json.py, as the in-process
command does. `notes` are the command's notes on stderr in order (`level`
note, or warning), `error` its error (`{"kind": ..., "message": ...}`, the
kind codesift/errors.py's word), or null: the CLI draws them with the same
module (the notes before the page, the error line last). The server draws
nothing for the client's terminal.

One server per index owns the socket: it holds an flock on `<index>.sock.lock`
while it listens. A second server on the same index waits for that lock and
takes the socket over when the first one ends. A socket file whose owner died
(the lock is free) is stale: the next server or client removes it.
"""

from __future__ import annotations

import _socket  # not `socket`: its enums cost the CLI's fast path a few ms
import fcntl
import json
import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:  # not imported at run time: the CLI's fast path stays small
    from typing import Any

__all__ = [
    "ACCEPT_TIMEOUT_SECONDS",
    "ANSWER_TIMEOUT_SECONDS",
    "PROTOCOL",
    "SOCKET_COMMANDS",
    "Asked",
    "ask",
    "lock_path_for",
    "read_line",
    "socket_address",
    "socket_path_for",
    "try_lock",
]

PROTOCOL = 3
# The CLI commands a server may answer (the CLI's fast path, codesift/cli/__init__.py,
# reads them before anything else is imported; the server checks them again).
SOCKET_COMMANDS = ("search", "symbols", "callers", "callees", "graph")
# A client waits this long for the server to accept its request (connect, then
# the server's first line); a server that does not answer in time is skipped.
ACCEPT_TIMEOUT_SECONDS = float(os.environ.get("CODESIFT_SOCKET_TIMEOUT", "") or 2.0)
# ... and this long for the answer once accepted (the server waits at most a
# minute for its first index, 10 s for fresh changes, then answers or declines).
ANSWER_TIMEOUT_SECONDS = 120.0
# Unix socket paths longer than this go through /proc/self/fd (sun_path is 108 bytes).
_MAX_SUN_PATH = 100


def socket_path_for(db_path: str | os.PathLike[str]) -> str:
    """The socket of the server that keeps the index `db_path` live."""
    return os.fspath(db_path) + ".sock"


def lock_path_for(db_path: str | os.PathLike[str]) -> str:
    """The lock its owner holds while it listens."""
    return os.fspath(db_path) + ".sock.lock"


def socket_address(path: str) -> tuple[str, int | None]:
    """An address for bind/connect and a descriptor to close after it: the path
    itself, or (too long for sun_path) the same file reached through an open
    descriptor of its folder."""
    text = str(path)
    if len(os.fsencode(text)) <= _MAX_SUN_PATH:
        return text, None
    folder, name = os.path.split(text)
    fd = os.open(folder or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    return f"/proc/self/fd/{fd}/{name}", fd


def try_lock(lock_path: str) -> int | None:
    """The lock file's descriptor, locked, or None when another process holds it
    (or it cannot be opened: then nobody here may own the socket)."""
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _remove_stale(path: str, lock_path: str) -> bool:
    """Remove a socket file whose server is gone (nobody holds the lock); whether
    it was removed. A file of another user is left alone."""
    try:
        if os.stat(path).st_uid != os.geteuid():
            return False
    except OSError:
        return False
    fd = try_lock(lock_path)
    if fd is None:
        return False
    try:
        os.unlink(path)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


# -- the client -----------------------------------------------------------------------


class Asked:
    """What came of asking: `answer` is the server's answer, or None with `reason`
    (no server, a stale socket, refused, too slow, or the server declined)."""

    __slots__ = ("answer", "path", "reason")

    def __init__(self, answer: dict[str, Any] | None, reason: str, path: str) -> None:
        self.answer = answer
        self.reason = reason
        self.path = path


def _peer_uid(sock: _socket.socket) -> int | None:
    """The uid of the process at the other end (SO_PEERCRED: pid, uid, gid)."""
    try:
        creds = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
    except OSError:
        return None
    return int.from_bytes(creds[4:8], sys.byteorder)


def read_line(sock: _socket.socket, buffer: bytearray, deadline: float) -> bytes | None:
    """The next line from `sock` before `deadline` (monotonic), or None at EOF."""
    while True:
        end = buffer.find(b"\n")
        if end >= 0:
            line = bytes(buffer[:end])
            del buffer[: end + 1]
            return line
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        sock.settimeout(left)
        chunk = sock.recv(65536)
        if not chunk:
            return None
        buffer.extend(chunk)


def ask(
    db_path: str | os.PathLike[str],
    request: dict[str, Any],
    *,
    accept_timeout: float = ACCEPT_TIMEOUT_SECONDS,
    answer_timeout: float = ANSWER_TIMEOUT_SECONDS,
) -> Asked:
    """Send `request` to the server of `db_path`, if one listens; never raises for a
    missing, stale, slow or failing server (the caller then answers itself)."""
    path = socket_path_for(db_path)
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM | _socket.SOCK_CLOEXEC)
    try:
        sock.settimeout(accept_timeout)
        try:
            address, fd = socket_address(path)
            try:
                sock.connect(address)
            finally:
                if fd is not None:
                    os.close(fd)
        except FileNotFoundError:
            return Asked(None, "no server", path)
        except ConnectionRefusedError:
            removed = _remove_stale(path, lock_path_for(db_path))
            return Asked(None, "a stale socket (removed)" if removed else "refused", path)
        except PermissionError:
            return Asked(None, "the socket belongs to another user", path)
        except OSError as exc:
            return Asked(None, f"cannot connect: {exc.strerror or exc}", path)
        if _peer_uid(sock) != os.geteuid():  # never show another user's output here
            return Asked(None, "the socket's server runs as another user", path)
        try:
            sock.sendall(json.dumps(request).encode("utf-8") + b"\n")
            buffer = bytearray()
            first = read_line(sock, buffer, time.monotonic() + accept_timeout)
            if first is None:
                return Asked(None, "the server closed the connection", path)
            accepted = json.loads(first)
            if not isinstance(accepted, dict) or not accepted.get("accepted"):
                reason = accepted.get("fallback") if isinstance(accepted, dict) else None
                return Asked(None, str(reason or "declined"), path)
            line = read_line(sock, buffer, time.monotonic() + answer_timeout)
        except TimeoutError:
            return Asked(None, "the server did not answer in time", path)
        except (OSError, ValueError) as exc:
            return Asked(None, f"the server failed: {exc}", path)
        if line is None:
            return Asked(None, "the server closed the connection", path)
        try:
            answer = json.loads(line)
        except ValueError as exc:
            return Asked(None, f"unreadable answer: {exc}", path)
        if not isinstance(answer, dict) or "fallback" in answer:
            reason = answer.get("fallback") if isinstance(answer, dict) else None
            return Asked(None, str(reason or "unreadable answer"), path)
        if not isinstance(answer.get("exit"), int):
            return Asked(None, "unreadable answer", path)
        return Asked(answer, "answered", path)
    finally:
        sock.close()
