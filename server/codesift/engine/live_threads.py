"""The reading side's threads of a live index: `ReaderPool` (reader threads, each
with its own connection per index) and `Cancellation` (one request's flag, which
interrupts the statements of the connections it uses)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import apsw

from codesift.store.database import open_database

__all__ = ["Cancellation", "ReaderPool"]

T = TypeVar("T")


class Cancellation:
    """Cancels one request: sets a flag and interrupts the SQLite statements of the
    reader connections the request is using."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self._conns: list[apsw.Connection] = []
        self._lock = threading.Lock()

    def attach(self, conn: apsw.Connection) -> None:
        with self._lock:
            self._conns.append(conn)
            cancelled = self.event.is_set()
        if cancelled:
            conn.interrupt()

    def detach(self, conn: apsw.Connection) -> None:
        with self._lock:
            if conn in self._conns:
                self._conns.remove(conn)

    def cancel(self) -> None:
        with self._lock:
            self.event.set()
            conns = list(self._conns)
        for conn in conns:
            conn.interrupt()

    @property
    def cancelled(self) -> bool:
        return self.event.is_set()


class ReaderPool:
    """Threads that answer read requests, each with its own connection per database."""

    def __init__(self, workers: int = 3) -> None:
        self._executor = ThreadPoolExecutor(workers, thread_name_prefix="codesift-reader")
        self._local = threading.local()
        self._lock = threading.Lock()
        self._generation: dict[str, int] = {}
        self._open: list[apsw.Connection] = []

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        return self._executor.submit(fn, *args)

    def connection(self, db_path: Path) -> apsw.Connection:
        """This thread's connection to `db_path` (opened on first use)."""
        key = str(db_path)
        conns: dict[str, tuple[int, apsw.Connection]] = getattr(self._local, "conns", None) or {}
        self._local.conns = conns
        with self._lock:
            generation = self._generation.get(key, 0)
        held = conns.get(key)
        if held is not None and held[0] == generation:
            return held[1]
        if held is not None:
            with self._lock:
                if held[1] in self._open:
                    self._open.remove(held[1])
            held[1].close()
        conn = open_database(db_path, create=False)
        conns[key] = (generation, conn)
        with self._lock:
            self._open.append(conn)
        return conn

    def forget(self, db_path: Path) -> None:
        """Connections to `db_path` are reopened (or never used again) from now on."""
        with self._lock:
            key = str(db_path)
            self._generation[key] = self._generation.get(key, 0) + 1

    def close(self, *, wait: bool = True) -> None:
        """Stop the reader threads (queued requests are dropped) and close their
        connections; without `wait`, running requests are interrupted, not awaited."""
        self._executor.shutdown(wait=wait, cancel_futures=True)
        with self._lock:
            conns, self._open = self._open, []
        for conn in conns:
            with contextlib.suppress(apsw.Error):
                if not wait:
                    conn.interrupt()
                conn.close()
