"""The server's side of the local socket (codesift/local_socket.py): listen beside
an index, answer each CLI request on a thread of its own.

Used by the language server and the MCP server for every index they keep live
(the CLI hands them its `serve_cli_socket`, a `CliSocketStarter`, as a parameter of
their `serve()`: no server imports the CLI); see local_socket.py for the protocol.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import select
import socket
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from codesift.local_socket import (
    ACCEPT_TIMEOUT_SECONDS,
    ANSWER_TIMEOUT_SECONDS,
    PROTOCOL,
    lock_path_for,
    read_line,
    socket_address,
    socket_path_for,
    try_lock,
)

if TYPE_CHECKING:
    from codesift.engine.live import FolderIndex, LiveReader

__all__ = [
    "LOCK_RETRY_SECONDS",
    "MAX_REQUEST_BYTES",
    "CliSocketStarter",
    "Handler",
    "Hangup",
    "LocalSocketServer",
]

log = logging.getLogger(__name__)

# A request line larger than this is refused (an argv is a few hundred bytes).
MAX_REQUEST_BYTES = 1 << 20
# A server without the lock looks again this often whether the owner ended.
LOCK_RETRY_SECONDS = 1.0

# How often a request's connection is looked at for a client that hung up.
HANGUP_POLL_MS = 200


class CliSocketStarter(Protocol):
    """What a server is given to answer the CLI's reading commands for a folder it
    keeps live: start a LocalSocketServer beside the folder's index (the server
    stops it when the folder goes). `label` names the server to the CLI's `-vv`."""

    def __call__(
        self, folder: FolderIndex, reader: LiveReader, label: str
    ) -> LocalSocketServer: ...


class Hangup:
    """Tells a running request that its client hung up (Ctrl-C, a timeout of its
    own): what was registered with `on_hangup` is called once, then."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], object]] = []
        self.happened = False

    def on_hangup(self, callback: Callable[[], object]) -> None:
        with self._lock:
            if not self.happened:
                self._callbacks.append(callback)
                return
        callback()

    def fire(self) -> None:
        with self._lock:
            if self.happened:
                return
            self.happened = True
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()


Handler = Callable[[dict[str, Any], Hangup], dict[str, Any]]


class LocalSocketServer:
    """Listens on the socket of `db_path` and answers each request with `handler`
    (on a thread per connection). `start` returns at once: when another server
    owns the socket, a background thread takes it over once that one ends.

    `handler(request, hangup)` returns the answer (`{"exit", "notes", "error",
    "shown"}` or `{"fallback": reason}`); an exception becomes a fallback; `hangup`
    calls back when the client goes away before its answer. `requests` counts the
    requests answered (not declined)."""

    def __init__(self, db_path: Path, handler: Handler, *, label: str = "codesift") -> None:
        self.db_path = db_path
        self.path = Path(socket_path_for(db_path))
        self.lock_path = lock_path_for(db_path)
        self.handler = handler
        self.label = label
        self.requests = 0
        self.declined = 0
        self._stop = threading.Event()
        self._lock_fd: int | None = None
        self._sock: socket.socket | None = None
        self._inode: tuple[int, int] | None = None
        self._thread: threading.Thread | None = None
        self._state_lock = threading.Lock()

    @property
    def listening(self) -> bool:
        return self._sock is not None

    def status(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "listening": self.listening,
            "requests": self.requests,
            "declined": self.declined,
        }

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self._run, name=f"codesift-socket-{self.db_path.parent.name}", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """Stop listening, remove the socket file (when it is still ours) and release
        the lock, now (a server may end its process right after); then wait at most
        `timeout` seconds for the listening thread."""
        self._stop.set()
        self._close()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    # -- owning the socket ---------------------------------------------------------------

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                fd = try_lock(self.lock_path) if self.db_path.parent.is_dir() else None
                if fd is not None:
                    with self._state_lock:
                        self._lock_fd = fd
                    break
                self._stop.wait(LOCK_RETRY_SECONDS)
            if self._stop.is_set():
                return
            try:
                self._listen()
            except OSError as exc:
                log.warning("cannot listen on %s: %s", self.path, exc)
                return
            log.info("%s: answering the CLI on %s", self.label, self.path)
            self._accept_loop()
        finally:
            self._close()

    def _listen(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()  # a stale socket: its owner released the lock
        # Bound under a temporary name, made 0600, then renamed into place: the
        # socket is never reachable with a wider mode (the umask is process-wide
        # and other threads create files, so it is not touched).
        temporary = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        try:
            address, fd = socket_address(str(temporary))
            try:
                sock.bind(address)
            finally:
                if fd is not None:
                    os.close(fd)
            os.chmod(temporary, 0o600)
            sock.listen(16)
            os.replace(temporary, self.path)
        except OSError:
            sock.close()
            with contextlib.suppress(OSError):
                temporary.unlink()
            raise
        st = self.path.stat()
        self._inode = (st.st_dev, st.st_ino)
        sock.settimeout(0.5)  # to notice stop()
        self._sock = sock

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            sock = self._sock
            if sock is None:
                return
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                if not self._still_ours():
                    log.info("%s: the socket %s was removed; not listening", self.label, self.path)
                    return
                continue
            except OSError as exc:
                if self._stop.is_set():
                    return  # closed by stop()
                if exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    self._stop.wait(0.1)
                    continue
                raise
            threading.Thread(
                target=self._serve, args=(conn,), name="codesift-socket-request", daemon=True
            ).start()

    def _still_ours(self) -> bool:
        try:
            st = self.path.stat()
        except OSError:
            return False
        return (st.st_dev, st.st_ino) == self._inode

    def _close(self) -> None:
        with self._state_lock:  # stop() and the listening thread may both get here
            sock, self._sock = self._sock, None
            if sock is not None:
                sock.close()
                if self._still_ours():
                    with contextlib.suppress(OSError):
                        self.path.unlink()
            fd, self._lock_fd = self._lock_fd, None
            if fd is not None:
                os.close(fd)

    # -- one request ------------------------------------------------------------------------

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                self._answer(conn)
            except OSError as exc:  # the client went away
                log.debug("%s: a CLI request ended early: %s", self.label, exc)

    def _answer(self, conn: socket.socket) -> None:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        pid, uid, _ = struct.unpack("3i", creds)
        if uid != os.geteuid():
            log.warning("%s: refused a connection of uid %d (pid %d)", self.label, uid, pid)
            return
        conn.settimeout(ACCEPT_TIMEOUT_SECONDS)
        buffer = bytearray()
        try:
            line = read_line(conn, buffer, time.monotonic() + ACCEPT_TIMEOUT_SECONDS)
        except TimeoutError:
            return
        if line is None or len(line) > MAX_REQUEST_BYTES:
            return
        try:
            request = json.loads(line)
        except ValueError:
            request = None
        if not isinstance(request, dict) or request.get("protocol") != PROTOCOL:
            self._send(conn, {"fallback": f"this server speaks protocol {PROTOCOL}"})
            return
        self._send(conn, {"accepted": True})
        started = time.perf_counter()
        hangup, answered = Hangup(), threading.Event()
        threading.Thread(
            target=_watch_hangup,
            args=(conn, hangup, answered),
            name="codesift-socket-hangup",
            daemon=True,
        ).start()
        try:
            answer = self.handler(request, hangup)
        except Exception as exc:  # a bug: the CLI answers itself; the details in the log
            log.exception("%s: a CLI request failed", self.label)
            answer = {"fallback": f"the server failed: {type(exc).__name__}: {exc}"}
        finally:
            answered.set()
        if hangup.happened:
            log.info("%s: the client of `codesift %s` hung up", self.label, request.get("command"))
            return
        if "fallback" in answer:
            with self._state_lock:
                self.declined += 1
            log.info("%s: declined a CLI request: %s", self.label, answer["fallback"])
        else:
            with self._state_lock:
                self.requests += 1
            answer["server"] = {"pid": os.getpid(), "label": self.label}
            log.info(
                "%s: answered `codesift %s` over the local socket in %.1f ms",
                self.label,
                request.get("command", "?"),
                (time.perf_counter() - started) * 1000,
            )
        conn.settimeout(ANSWER_TIMEOUT_SECONDS)
        self._send(conn, answer)

    @staticmethod
    def _send(conn: socket.socket, message: dict[str, Any]) -> None:
        conn.sendall(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n")


def _watch_hangup(conn: socket.socket, hangup: Hangup, answered: threading.Event) -> None:
    """Fire `hangup` when the client closes its end before `answered` (it sends
    nothing after its request, so any event on the socket means it is gone)."""
    poller = select.poll()
    poller.register(conn.fileno(), select.POLLIN | select.POLLHUP | select.POLLERR | _POLLRDHUP)
    while not answered.is_set():
        try:
            events = poller.poll(HANGUP_POLL_MS)
        except OSError:
            return
        if events and not answered.is_set():
            hangup.fire()
            return


_POLLRDHUP: int = getattr(select, "POLLRDHUP", 0)
