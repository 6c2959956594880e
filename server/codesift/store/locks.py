"""Advisory locks between processes (and threads) that write one index.

Four locks per index database, each a small file beside it:

write  held by whoever writes rows: an index run for its whole length, an
       embedder for one batch of vectors at a time. Writers queue on it, so two
       `codesift index` runs, or a CLI and a language server, never meet inside
       SQLite's own lock (where the loser gets `database is locked`).
embed  held for the whole of a vector fill: one embedder per index, always. A
       second would-be embedder sees it taken and leaves the vectors to the first.
history
       held for the whole of a git history pass (history/update.py): one per
       index; it writes each step under the write lock, like an embedder.
calls  held for the whole of a call pass (call_pass.py: the targets of the calls
       a large index run left), one per index, each batch under the write lock.

Readers take neither: SQLite's WAL lets them read the last committed state
while a writer works.

The locks are `flock` locks, so they are released when the holding process dies
(even by SIGKILL): a stale lock file never blocks anyone. The holder writes its
pid and what it is doing into the file, so a waiter can say whom it waits for.
`flock` locks belong to an open file description, so two threads of one process
that each open the lock exclude each other too.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType

from codesift.errors import ReadOnlyIndexError

__all__ = ["LOCK_ROLES", "IndexLock", "lock_path", "taken", "writer_lock"]

LOCK_ROLES = ("write", "embed", "history", "calls")

# How often a waiting process tries the lock again.
POLL_SECONDS = 0.1


def lock_path(db_path: Path, role: str) -> Path:
    """The lock file of `role` for the index at `db_path` (`index.db.write-lock`)."""
    if role not in LOCK_ROLES:
        raise ValueError(f"unknown lock role {role!r}")
    return db_path.with_name(f"{db_path.name}.{role}-lock")


class IndexLock:
    """One of an index's locks (`write` or `embed`), for one holder at a time.

    `try_acquire` never waits; `acquire` waits (polling, so that a stop event or a
    deadline is honoured) and tells `on_wait` once whom it is waiting for.
    Raises ReadOnlyIndexError when the lock file cannot be created because the
    index's folder is not writable: such an index can be read, not written.
    """

    def __init__(self, db_path: Path, role: str, *, purpose: str = "") -> None:
        self.path = lock_path(db_path, role)
        self.role = role
        self.purpose = purpose or role
        self._fd: int | None = None
        self._guard = threading.Lock()

    @property
    def held(self) -> bool:
        return self._fd is not None

    def _open(self) -> int:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            return os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except PermissionError as exc:
            raise ReadOnlyIndexError(
                f"cannot write the index beside {self.path.parent}: {exc.strerror}"
            ) from exc
        except OSError as exc:
            if exc.errno in (errno.EROFS, errno.EACCES):
                raise ReadOnlyIndexError(
                    f"cannot write the index beside {self.path.parent}: {exc.strerror}"
                ) from exc
            raise

    def try_acquire(self) -> bool:
        """Take the lock if nobody holds it; True when this object now holds it."""
        with self._guard:
            if self._fd is not None:
                return True
            fd = self._open()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    return False
                raise
            self._fd = fd
            self._write_holder(fd)
            return True

    def acquire(
        self,
        *,
        on_wait: Callable[[str], None] | None = None,
        stop: threading.Event | None = None,
        timeout: float | None = None,
        on_poll: Callable[[], None] | None = None,
        poll: float = 0.0,
    ) -> bool:
        """Wait for the lock. False when `stop` was set or `timeout` seconds passed
        first; `on_wait(holder)` is called once, when the lock is found taken, and
        `on_poll()` at each look while it stays taken (every `poll` seconds, when
        given, else POLL_SECONDS)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        told = False
        while not self.try_acquire():
            if not told and on_wait is not None:
                on_wait(self.holder())
                told = True
            if on_poll is not None:
                on_poll()
            if stop is not None and stop.is_set():
                return False
            if deadline is not None and time.monotonic() >= deadline:
                return False
            if stop is not None:
                stop.wait(poll or POLL_SECONDS)
            else:
                time.sleep(poll or POLL_SECONDS)
        return True

    def release(self) -> None:
        with self._guard:
            fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

    def holder(self) -> str:
        """Who holds the lock, as its holder wrote it (`pid 123: indexing`), or ''."""
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return ""
        return text[:200]

    def _write_holder(self, fd: int) -> None:
        text = f"pid {os.getpid()}: {self.purpose}\n".encode()
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.pwrite(fd, text, 0)

    def __enter__(self) -> IndexLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def taken(db_path: Path, role: str, purpose: str) -> IndexLock | None:
    """The index's `role` lock, taken now; None when another process holds it, or
    this user cannot write the index."""
    lock = IndexLock(db_path, role, purpose=purpose)
    try:
        return lock if lock.try_acquire() else None
    except ReadOnlyIndexError:
        return None


@contextlib.contextmanager
def writer_lock(
    db_path: Path,
    purpose: str,
    *,
    on_wait: Callable[[str], None] | None = None,
    stop: threading.Event | None = None,
) -> Iterator[bool]:
    """Hold the index's write lock for a block; yields False (and holds nothing)
    when `stop` was set while waiting."""
    lock = IndexLock(db_path, "write", purpose=purpose)
    acquired = lock.acquire(on_wait=on_wait, stop=stop)
    try:
        yield acquired
    finally:
        if acquired:
            lock.release()
