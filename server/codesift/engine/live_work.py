"""The work a live folder's writer thread does, and the state it reports.

`FolderWork` is the writer's side of `FolderIndex` (engine/live_folder.py): opening
and reopening the index file, failures and recovery, the write and step locks, and
the work items themselves (indexing changed paths, the git history pass, vectors),
with the state and warnings that readers see (`FolderProgress`, `completeness`).
`FolderIndex` owns the queue, the thread and the life cycle, and derives from it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import apsw

from codesift.call_pass import CallPassProgress
from codesift.config import Settings
from codesift.embedding import Embedder, VectorCoverage, fill_vectors, vector_coverage
from codesift.embedding.model import cache_dir_from, model_id_of
from codesift.engine.call_phase import resolve_here
from codesift.engine.live_progress import FolderProgress, Listener
from codesift.errors import CodesiftError, EmbeddingError
from codesift.history.update import (
    HistoryPending,
    HistoryProgress,
    history_pending,
    update_history,
)
from codesift.indexer import Indexer, IndexProgress
from codesift.retrieval.request import SearchWarning
from codesift.retrieval.vector_index import VectorIndex
from codesift.store.call_targets import calls_owed, calls_pending_count
from codesift.store.database import open_database
from codesift.store.locks import IndexLock

__all__ = ["FolderStopping", "FolderWork"]

log = logging.getLogger("codesift.engine.live")

# Vectors are computed this many chunks at a time; new changes wait at most one batch.
EMBED_BATCH = 16
# While another process computes the vectors, look this often whether it is done.
EMBED_RECHECK_SECONDS = 5.0
# The writer connection's SQLite busy timeout (tests shorten it; default: the store's).
_BUSY_TIMEOUT_MS: int | None = (
    int(os.environ["CODESIFT_TEST_BUSY_TIMEOUT_MS"])
    if os.environ.get("CODESIFT_TEST_BUSY_TIMEOUT_MS")
    else None
)


class FolderStopping(Exception):
    """The folder stopped while its writer waited or worked: end quietly."""


class FolderWork:
    """The writer thread's work for one folder (FolderIndex's base: the attributes
    below are set by FolderIndex.__init__)."""

    name: str
    uri: str
    root: Path
    settings: Settings
    db_path: Path
    listener: Listener
    progress: FolderProgress
    _embedder: Callable[[], Embedder | None]
    _cond: threading.Condition
    _pending: set[str]
    _rescan: bool
    _busy: bool
    _doing: str | None
    _stopping: bool
    _stop_event: threading.Event
    _embed_cancel: threading.Event
    _needs_vectors: bool
    _needs_history: bool
    _history_cancel: threading.Event
    _recheck_history_at: float | None
    _recheck_vectors_at: float | None
    _ready: threading.Event
    _vectors: VectorIndex | None
    _open_error: str | None
    _open_error_type: type[CodesiftError]
    _conn: apsw.Connection | None
    _indexer: Indexer | None
    _db_id: tuple[int, int] | None
    _rebuild_warning: str | None

    def _drop_searchers(self) -> None:
        """Close the readers' Searchers (FolderIndex's)."""
        raise NotImplementedError

    # -- the database file -------------------------------------------------------------

    def _open_if_needed(self) -> None:
        """Open the index (again, when it was deleted or replaced since)."""
        if self._conn is not None and not self._index_gone():
            return
        if self._db_id is not None and self._index_gone():
            gone = not self.db_path.exists()
            what = "deleted" if gone else "replaced"
            message = f"the index {self.db_path} was {what}; rebuilding it"
            log.warning("%s: %s", self.name, message)
            self._close_conn()
            self._drop_searchers()
            self.listener.index_replaced(self)
            with self._cond:
                self._rescan = True  # the new file is filled by a rescan
                self.progress.first_index_done = False
            self._rebuild_warning = message
            self._warn(message)
            self._set_state("scanning")
        try:
            conn = open_database(self.db_path)
        except Exception as exc:
            self._open_error = str(exc)
            self._open_error_type = type(exc) if isinstance(exc, CodesiftError) else CodesiftError
            self._ready.set()  # readers get the error at once
            raise
        try:
            if _BUSY_TIMEOUT_MS is not None:
                conn.set_busy_timeout(_BUSY_TIMEOUT_MS)
            stat = os.stat(self.db_path)
            self._refresh_coverage(conn)
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        # A large run answers searches first and resolves its calls after (_calls).
        # Its static vectors come with the rows (the fill after the run finds them).
        self._indexer = Indexer(
            self.root,
            self.settings,
            conn,
            defer_calls=True,
            static_vectors=self.settings.embedding.static_tier,
        )
        with self._cond:
            self._db_id = (stat.st_dev, stat.st_ino)
            self._open_error = None
            self._cond.notify_all()
        self._ready.set()

    def _close_conn(self) -> None:
        conn, self._conn, self._indexer = self._conn, None, None
        if conn is not None:
            with contextlib.suppress(apsw.Error):
                conn.close()

    def _index_gone(self) -> bool:
        """Whether the index file this writer opened was deleted or replaced."""
        try:
            stat = os.stat(self.db_path)
        except OSError:
            return True
        return self._db_id != (stat.st_dev, stat.st_ino)

    def _request_rebuild(self) -> None:
        with self._cond:
            self._rescan = True
            self._embed_cancel.set()
            self._cond.notify_all()

    # -- failures ----------------------------------------------------------------------

    def _failed(self, exc: BaseException, delay: float, *, first: bool) -> None:
        detail = str(exc) or type(exc).__name__
        message = f"indexing {self.root} failed: {detail}; retrying in {delay:g} s"
        if isinstance(exc, apsw.Error | CodesiftError | OSError):
            log.warning("%s: %s", self.name, message)
        else:  # a bug: keep the traceback in the log
            log.exception("%s: %s", self.name, message)
        with self._cond:
            self.progress.error = message
            self.progress.waiting_for = None
            self._drop_failure_warnings()
            self.progress.warnings.append(message)
        self._set_state("error")
        if first:  # one message per streak of failures, not one per retry
            self.listener.problem(self, message)
        else:
            self.listener.state_changed(self)

    def _drop_failure_warnings(self) -> None:
        prefix = f"indexing {self.root} failed"
        self.progress.warnings = [w for w in self.progress.warnings if not w.startswith(prefix)]

    def _recovered(self) -> None:
        log.info("%s: the index works again", self.name)
        with self._cond:
            self.progress.error = None
            self._drop_failure_warnings()
            if self.progress.state == "error":
                self.progress.state = "scanning"

    # -- locks ----------------------------------------------------------------------------

    def _write_lock(self, doing: str) -> IndexLock:
        """The index's write lock, waited for (state `waiting`, naming the holder)
        while another process writes; raises FolderStopping when the folder stops first."""
        lock = IndexLock(self.db_path, "write", purpose=f"codesift serve: {doing}")
        if lock.try_acquire():
            return lock
        before = self.progress.state

        def waiting(holder: str) -> None:
            who = holder or "another process"
            log.info("%s: waiting for the index's write lock (held by %s)", self.name, who)
            self.progress.waiting_for = who
            self._set_state("waiting")
            self.listener.progress(self, "waiting", 0, 0)

        try:
            got = lock.acquire(on_wait=waiting, stop=self._stop_event)
        finally:
            self.progress.waiting_for = None
        if not got:
            raise FolderStopping
        self._set_state(before if before != "ready" else "indexing")
        return lock

    @contextlib.contextmanager
    def _vector_batch_lock(self) -> Iterator[bool]:
        """fill_vectors' batch guard: each batch of vectors is written under the
        write lock, so an index run of another process and this fill take turns.
        Yields False (the fill then stops) when the folder stops while waiting."""
        with self._step_lock(f"writing vectors of {self.root}") as ok:
            yield ok

    @contextlib.contextmanager
    def _history_step_lock(self) -> Iterator[bool]:
        """update_history's batch guard: each step of the history pass under the
        write lock, into the index file this writer opened."""
        if self._index_gone():
            yield False
            return
        with self._step_lock(f"writing git times of {self.root}") as ok:
            yield ok

    @contextlib.contextmanager
    def _step_lock(self, doing: str) -> Iterator[bool]:
        try:
            lock = self._write_lock(doing)
        except FolderStopping:
            yield False
            return
        try:
            yield True
        finally:
            lock.release()

    # -- indexing ------------------------------------------------------------------------

    def _index(self, indexer: Indexer, paths: set[str] | None) -> None:
        started = time.perf_counter()
        cancel = threading.Event()
        if paths is None:
            self._set_state("scanning")
            self.listener.progress(self, "scanning", 0, 0)
            plan = indexer.plan()
        else:
            plan = indexer.plan_changes(paths)
        work = len(plan.to_index) + len(plan.deleted)
        if work or paths is None:
            self.progress.files_done, self.progress.files_total = 0, work
            self._set_state("indexing")

        def report(event: IndexProgress) -> None:
            if event.phase == "parsing":
                self.progress.files_done = event.done
                self.listener.progress(self, "parsing", event.done, event.total)
            if self._stopping:
                cancel.set()

        summary = indexer.apply(plan, report, cancel, started=started)
        if self._stopping:
            raise FolderStopping
        if paths is None or summary.indexed or summary.deleted:
            with self._cond:  # new rows, or (a rescan) maybe a new HEAD: time them
                self._needs_history = True
        self.progress.files_done = self.progress.files_total
        self.progress.last_update = time.time()
        if paths is None:
            self.progress.first_index_done = True
            if self._rebuild_warning is not None:
                self._unwarn(self._rebuild_warning)
                self._rebuild_warning = None
        if summary.indexed or summary.deleted:
            log.info(
                "%s: indexed %d, removed %d file(s) in %.0f ms",
                self.name,
                summary.indexed,
                summary.deleted,
                (time.perf_counter() - started) * 1000,
            )
            with self._cond:
                self._needs_vectors = self.settings.embedding.enabled
            if paths is None and self.settings.embedding.enabled and self._conn is not None:
                # After a full run, what the fill will have to do shows at once (0 / 0
                # until the fill counts it; a count takes ~0.2 s on 300k chunks, too
                # much for every save).
                self._refresh_coverage(self._conn)
        self.listener.progress(self, "indexed", work, work)
        if self._conn is not None:
            self._calls(self._conn, held=True)

    def _calls(self, conn: apsw.Connection, *, held: bool) -> None:
        """Resolve the calls a large index run left (engine/call_phase.py): under
        the write lock the index run holds (`held`), else a batch at a time; when
        another process is at it, look again with the history's rechecks."""
        if not calls_owed(conn):
            self.progress.calls_pending = 0
            return
        self.progress.calls_pending = calls_pending_count(conn)

        def report(event: CallPassProgress) -> None:
            if event.phase == "files":
                self.progress.calls_pending = event.total - event.done
            self.listener.progress(self, f"calls {event.phase}", event.done, event.total)

        stats = resolve_here(
            self.root,
            self.settings,
            conn,
            self.db_path,
            report=report,
            stop=self._stop_event,
            batch_guard=self._held_step if held else self._history_step_lock,
        )
        if self._stopping:
            raise FolderStopping
        self.progress.calls_pending = calls_pending_count(conn)
        if stats is None or not stats.complete:
            with self._cond:  # elsewhere, or stopped for changes: the history item retries
                self._recheck_history_at = time.monotonic() + EMBED_RECHECK_SECONDS

    @contextlib.contextmanager
    def _held_step(self) -> Iterator[bool]:
        yield not self._index_gone()

    # -- git history ---------------------------------------------------------------------

    def _history(self, conn: apsw.Connection) -> None:
        """Run the history pass (engine/history.py) in steps, unless another process
        is at it: then look again every EMBED_RECHECK_SECONDS. New changes stop it
        at its next step; it goes on after them from where it stopped."""
        pending = history_pending(conn, self.root)
        self.progress.history = pending
        if not pending.pending:
            self.progress.history_elsewhere = None
            return
        lock = IndexLock(
            self.db_path, "history", purpose=f"codesift serve: git history of {self.root}"
        )
        if not lock.try_acquire():
            holder = lock.holder() or "another process"
            if self.progress.history_elsewhere != holder:
                log.info("%s: the git history is computed by %s; not here", self.name, holder)
            self.progress.history_elsewhere = holder
            with self._cond:
                self._recheck_history_at = time.monotonic() + EMBED_RECHECK_SECONDS
            return
        self.progress.history_elsewhere = None
        started = time.perf_counter()

        def report(event: HistoryProgress) -> None:
            self.progress.history_phase = event.phase
            if event.phase == "walking":
                files = self.progress.history.files
                self.progress.history = HistoryPending(event.done, event.total, files)
            else:
                self.progress.history = HistoryPending(files=event.total - event.done)
            self.listener.progress(self, f"history {event.phase}", event.done, event.total)

        try:
            stats = update_history(
                conn,
                self.root,
                progress=report,
                cancel=self._history_cancel,
                batch_guard=self._history_step_lock,
            )
        finally:
            lock.release()
            self.progress.history_phase = None
        if self._stopping:
            raise FolderStopping
        self.progress.history = history_pending(conn, self.root)
        if not stats.complete:
            with self._cond:  # stopped for changes: finish after them
                self._needs_history = True
            return
        log.info(
            "%s: git history: %d commit(s) walked, %d file(s) timed in %.0f ms",
            self.name,
            stats.commits,
            stats.files_timed,
            (time.perf_counter() - started) * 1000,
        )
        self.listener.progress(self, "history done", stats.files_timed, stats.files_timed)

    # -- vectors ---------------------------------------------------------------------------

    def _embed(self, conn: apsw.Connection) -> None:
        """Compute missing vectors, unless another process is computing them: then
        look again every EMBED_RECHECK_SECONDS (the vectors it writes are loaded
        from the file meanwhile)."""
        if not self.settings.embedding.enabled:
            return
        embedder = self._embedder()
        if embedder is None:
            return
        layers = self.settings.embedding.layers
        coverage = vector_coverage(conn, layers, embedder.model_id)
        missing = coverage.embeddable - coverage.embedded
        self._set_coverage(coverage)
        if missing <= 0:
            self.progress.embedding_elsewhere = None
            return
        embed_lock = IndexLock(
            self.db_path, "embed", purpose=f"codesift serve: computing vectors of {self.root}"
        )
        if not embed_lock.try_acquire():
            holder = embed_lock.holder() or "another process"
            if self.progress.embedding_elsewhere != holder:
                log.info("%s: vectors are computed by %s; not here", self.name, holder)
            self.progress.embedding_elsewhere = holder
            with self._cond:
                self._recheck_vectors_at = time.monotonic() + EMBED_RECHECK_SECONDS
            return
        self.progress.embedding_elsewhere = None
        try:
            self._fill(conn, embedder, coverage.embedded, missing)
        finally:
            embed_lock.release()

    def _fill(self, conn: apsw.Connection, embedder: Embedder, embedded: int, missing: int) -> None:
        self.progress.chunks_done, self.progress.chunks_total = 0, missing
        self._set_state("embedding")

        def report(done: int, total: int) -> None:
            self.progress.chunks_done = done
            self.progress.vectors_embedded = embedded + done
            self.listener.progress(self, "embedding", done, total)

        def first_tier_report(done: int, total: int) -> None:
            self.listener.progress(self, "static vectors", done, total)

        def first_tier_done() -> None:
            self._refresh_coverage(conn, embedder)
            self.listener.progress(self, "embedding", 0, missing)

        try:
            fill_vectors(
                conn,
                embedder,
                layers=self.settings.embedding.layers,
                batch_size=EMBED_BATCH,
                progress=report,
                cancel=self._embed_cancel,
                batch_guard=self._vector_batch_lock,
                first_tier_done=first_tier_done,
                first_tier_progress=first_tier_report,
            )
        except EmbeddingError as exc:  # the model cannot run: nothing to retry
            self._warn(f"vectors are not computed: {exc}")
            return
        if self._stopping:
            raise FolderStopping
        if self._embed_cancel.is_set():
            with self._cond:  # interrupted by new changes: finish after them
                self._needs_vectors = True
        self._refresh_coverage(conn, embedder)
        self.listener.progress(self, "embedded", self.progress.chunks_done, missing)

    def _load_vectors(self) -> None:
        """Bring the in-memory vectors up to date (load them the first time)."""
        if self._vectors is None or not self.progress.vectors_usable:
            return
        try:
            self._vectors.sync_file(self.db_path)
        except (apsw.Error, OSError) as exc:  # searches fall back to sqlite-vec
            log.warning("cannot load the vectors of %s into memory: %s", self.root, exc)

    def _refresh_coverage(self, conn: apsw.Connection, embedder: Embedder | None = None) -> None:
        """Read the coverage of the configured model (`embedder`'s, when given; no
        model is loaded for it) and of any model."""
        embedding = self.settings.embedding
        model = (
            embedder.model_id
            if embedder is not None
            else model_id_of(
                embedding.model, cache_dir_from(embedding.cache_dir), embedding.max_tokens
            )
        )
        self._set_coverage(vector_coverage(conn, embedding.layers, model))

    def _set_coverage(self, coverage: VectorCoverage) -> None:
        self.progress.vectors_embedded = coverage.embedded
        self.progress.vectors_embeddable = coverage.embeddable
        self.progress.vectors_usable = coverage.usable

    def _set_state(self, state: str) -> None:
        if self.progress.state != state:
            self.progress.state = state
            self.listener.state_changed(self)

    def _warn(self, message: str) -> None:
        if message not in self.progress.warnings:
            self.progress.warnings.append(message)
        self.listener.problem(self, message)

    def _unwarn(self, message: str) -> None:
        with self._cond:
            self.progress.warnings = [w for w in self.progress.warnings if w != message]

    # -- what readers see ----------------------------------------------------------------

    def history_pending_now(self) -> bool:
        """Whether the git history pass is to come or under way (here or in
        another process), or the first index is not done yet."""
        with self._cond:
            scheduled = self._needs_history or self._doing == "history" or self._rescan
        p = self.progress
        return scheduled or p.history.pending or not p.first_index_done

    def history_warning(self) -> SearchWarning | None:
        """`history_pending` while the git history pass is to come or under way
        (here or in another process): a time filter then only sees the files
        already timed. The answer does not wait for it."""
        if not self.history_pending_now():
            return None
        p = self.progress
        h = p.history
        if h.commits_done < h.commits_total:
            left = f"{h.commits_done:,}/{h.commits_total:,} commits walked"
        elif h.files:
            left = f"{h.files:,} files to time"
        else:
            left = "starting"
        where = f" by {p.history_elsewhere}" if p.history_elsewhere else ""
        return SearchWarning(
            "history_pending",
            f"the git history of {self.name} is still being computed{where} ({left}); the"
            " time filter leaves out what is not timed yet: ask again when"
            " codesift/status shows it complete",
            self.name,
        )

    def completeness(self) -> dict[str, Any]:
        """How complete the index is, for search responses and status."""
        p = self.progress
        with self._cond:
            pending = len(self._pending) + (1 if self._rescan else 0)
            busy = self._busy
        coverage = 1.0 if p.vectors_embeddable == 0 else p.vectors_embedded / p.vectors_embeddable
        usable = 1.0 if p.vectors_embeddable == 0 else p.vectors_usable / p.vectors_embeddable
        vectors = self._vectors
        held = (len(vectors), vectors.nbytes) if vectors is not None and vectors.loaded else (0, 0)
        files_ratio = 1.0 if p.files_total == 0 else p.files_done / p.files_total
        return {
            "folder": self.name,
            "uri": self.uri,
            "state": p.state,
            "error": p.error,
            "waiting_for": p.waiting_for,
            "complete": p.first_index_done and not pending and not busy,
            "history": {
                **p.history.as_json(),
                "pending": self.history_pending_now(),
                "phase": p.history_phase,
                "elsewhere": p.history_elsewhere,
            },
            "calls_pending": p.calls_pending,
            "files_done": p.files_done,
            "files_total": p.files_total,
            "files_ratio": round(files_ratio, 4) if not p.first_index_done or busy else 1.0,
            "vectors": {
                "enabled": self.settings.embedding.enabled,
                "embedded": p.vectors_embedded,
                "embeddable": p.vectors_embeddable,
                "coverage": round(coverage, 4),
                # Chunks with a vector of any model: the first tier's (static) too.
                "usable": p.vectors_usable,
                "usable_coverage": round(usable, 4),
                "in_memory": held[0],
                "memory_mib": round(held[1] / 2**20, 2),
                "elsewhere": p.embedding_elsewhere,
            },
        }
