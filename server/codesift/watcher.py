"""Watching a workspace folder: watchdog events -> coalesced batches -> the indexer.

One `FolderWatcher` per workspace folder runs a watchdog observer (inotify on
Linux). Events pass a cheap filter first (excluded folder names, the index's
own folder, `.git` internals), then wait in a `ChangeCoalescer`, which hands
over one `ChangeBatch` after a quiet period (default 0.2 s without events) or
after a maximum wait (default 2 s) while events keep coming. Whether a changed
path is indexable at all (.gitignore, .codesiftignore, size limits) is decided
later by the workspace discovery code the indexer uses (`Indexer.plan_paths`).

A batch is a rescan instead of a list of paths when:
- `.git/HEAD` changed (a checkout or a branch switch touches many files),
- a folder was created, deleted or moved (its files are not listed one by one),
- the kernel's event queue overflowed (events were lost), or
- more paths piled up than a batch should carry (`max_paths`).

Only close-after-write, create, delete and move events are asked for: an editor's
save is one close-after-write (or a move, for editors that write a temporary file
and rename it), and a read by the indexer itself produces nothing.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

__all__ = [
    "ChangeBatch",
    "ChangeCoalescer",
    "FolderWatcher",
    "PathFilter",
]

log = logging.getLogger(__name__)

DEFAULT_QUIET_SECONDS = 0.2
DEFAULT_MAX_WAIT_SECONDS = 2.0
DEFAULT_MAX_PATHS = 5000

_EVENT_FILTER: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    FileClosedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
]


@dataclass(slots=True)
class ChangeBatch:
    """Paths (relative, POSIX) that changed, or a request to rescan the folder."""

    paths: set[str] = field(default_factory=set)
    rescan: bool = False
    reasons: list[str] = field(default_factory=list)


class PathFilter:
    """Decides cheaply which relative paths may matter to the index.

    Drops paths inside excluded folder names (node_modules, .venv, ...), inside
    the index's own folder, and inside `.git` except `.git/HEAD`, which marks
    a rescan. Ignore files are not read here: the indexer's discovery does that.
    """

    def __init__(self, excluded_dirs: Iterable[str], private_dirs: Iterable[str] = ()) -> None:
        self.excluded = frozenset(excluded_dirs) - {".git"}
        # Relative folders whose events never matter (the index database's folder).
        self.private = tuple(p.rstrip("/") + "/" for p in private_dirs if p)

    def verdict(self, relpath: str) -> str | None:
        """None to drop the path, "rescan" for .git/HEAD, "path" to index it."""
        if not relpath or relpath.startswith("../"):
            return None
        if relpath == ".git/HEAD":
            return "rescan"
        if relpath == ".git" or relpath.startswith(".git/"):
            return None
        if any(relpath.startswith(p) or relpath + "/" == p for p in self.private):
            return None
        parts = relpath.split("/")
        if any(part in self.excluded for part in parts[:-1]):
            return None
        if parts[-1] in self.excluded:  # a folder event on an excluded folder itself
            return None
        return "path"


class ChangeCoalescer:
    """Collects changes and delivers them as batches after a quiet period.

    `add_path` / `request_rescan` may be called from any thread; `deliver` is
    called from the coalescer's own thread, never twice at the same time.
    """

    def __init__(
        self,
        deliver: Callable[[ChangeBatch], None],
        *,
        quiet: float = DEFAULT_QUIET_SECONDS,
        max_wait: float = DEFAULT_MAX_WAIT_SECONDS,
        max_paths: int = DEFAULT_MAX_PATHS,
        name: str = "codesift-coalescer",
    ) -> None:
        self._deliver = deliver
        self.quiet = quiet
        self.max_wait = max_wait
        self.max_paths = max_paths
        self._lock = threading.Condition()
        self._batch = ChangeBatch()
        self._first_at: float | None = None
        self._last_at = 0.0
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def add_path(self, relpath: str) -> None:
        with self._lock:
            if self._batch.rescan:
                self._touch()
                return
            self._batch.paths.add(relpath)
            if len(self._batch.paths) > self.max_paths:
                self._batch.rescan = True
                self._batch.paths.clear()
                self._batch.reasons.append(f"more than {self.max_paths} changed paths")
            self._touch()

    def request_rescan(self, reason: str) -> None:
        with self._lock:
            self._batch.rescan = True
            self._batch.paths.clear()
            self._batch.reasons.append(reason)
            self._touch()

    def pending(self) -> int:
        with self._lock:
            return len(self._batch.paths) + (1 if self._batch.rescan else 0)

    def _touch(self) -> None:
        now = time.monotonic()
        if self._first_at is None:
            self._first_at = now
        self._last_at = now
        self._lock.notify_all()

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            self._lock.notify_all()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._stopped and self._first_at is None:
                    self._lock.wait()
                if self._stopped:
                    return
                now = time.monotonic()
                assert self._first_at is not None
                due = min(self._last_at + self.quiet, self._first_at + self.max_wait)
                if now < due:
                    self._lock.wait(timeout=due - now)
                    continue
                batch, self._batch = self._batch, ChangeBatch()
                self._first_at = None
            try:
                self._deliver(batch)
            except Exception:  # a failing consumer must not stop the watcher
                log.exception("delivering a change batch failed")


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: FolderWatcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        self.watcher.on_event(event)


class _OverflowWatch(logging.Filter):
    """watchdog reports a kernel queue overflow only through its log: turn that
    record into a rescan of every watched folder."""

    def __init__(self) -> None:
        super().__init__()
        self.watchers: set[FolderWatcher] = set()
        self.lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        if "overflow" in record.getMessage().lower():
            with self.lock:
                watchers = list(self.watchers)
            for watcher in watchers:
                watcher.coalescer.request_rescan("the file event queue overflowed")
        return True


_overflow_watch = _OverflowWatch()
for _name in ("watchdog.observers.inotify_c", "watchdog.observers.inotify"):
    logging.getLogger(_name).addFilter(_overflow_watch)


class FolderWatcher:
    """A watchdog observer on one folder feeding a `ChangeCoalescer`."""

    def __init__(
        self,
        root: Path,
        deliver: Callable[[ChangeBatch], None],
        path_filter: PathFilter,
        *,
        quiet: float = DEFAULT_QUIET_SECONDS,
        max_wait: float = DEFAULT_MAX_WAIT_SECONDS,
        max_paths: int = DEFAULT_MAX_PATHS,
    ) -> None:
        self.root = root.resolve()
        self._roots = tuple(dict.fromkeys((str(root.absolute()), str(self.root))))
        self.filter = path_filter
        self.coalescer = ChangeCoalescer(
            deliver, quiet=quiet, max_wait=max_wait, max_paths=max_paths
        )
        self._observer: BaseObserver | None = None

    def start(self) -> None:
        observer = Observer()
        observer.schedule(
            _Handler(self), str(self.root), recursive=True, event_filter=_EVENT_FILTER
        )
        observer.daemon = True
        observer.start()
        self._observer = observer
        with _overflow_watch.lock:
            _overflow_watch.watchers.add(self)

    def stop(self) -> None:
        with _overflow_watch.lock:
            _overflow_watch.watchers.discard(self)
        observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
            observer.join(timeout=5)
        self.coalescer.stop()

    def _relative(self, path: str | bytes) -> str | None:
        text = path.decode("utf-8", "surrogateescape") if isinstance(path, bytes) else path
        for root in self._roots:
            if text == root:
                return ""
            if text.startswith(root + "/"):
                return text[len(root) + 1 :]
        return None

    def on_event(self, event: FileSystemEvent) -> None:
        paths = [event.src_path]
        if event.event_type == "moved" and event.dest_path:
            paths.append(event.dest_path)
        for raw in paths:
            relpath = self._relative(raw)
            if relpath is None:
                continue
            verdict = self.filter.verdict(relpath)
            if verdict is None:
                continue
            if verdict == "rescan":
                self.coalescer.request_rescan("git HEAD changed")
            elif event.is_directory:
                if event.event_type in ("created", "deleted", "moved"):
                    self.coalescer.request_rescan(f"folder {relpath} {event.event_type}")
            else:
                self.coalescer.add_path(relpath)
