"""The call pass: the calls edges that a large index run left for later.

Finding and resolving calls (which definition a call reaches: receiver types,
imports, scopes) is about a third of a cold index's CPU. A large run with
`Indexer(defer_calls=True)` leaves them (`files.calls_pending`), so that search
works as soon as the files are written: a new index without the call sites at
all, one that keeps vectors with the calls edges' names but no targets
(parsing/model.py CallSites). This pass then parses those files again (in worker
processes for a bulk), resolves their calls exactly as an index run does, writes
each file's calls edges whole a batch at a time, and resolves every edge across
files at the end. The summary chunks name the calls: one written without them
gets its new text hash and, when the static model made its vector, its new static
vector in the same transaction (embedding/row_vectors.py); a MiniLM vector is
left to the MiniLM fill, which runs after the pass. After the pass the rows are
those of an ordinary run. A pass that stops (killed, cancelled, a
batch guard that says no) leaves the files not yet done marked: the next pass
continues with them. The engine decides when it runs (engine/call_phase.py).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path

import apsw

from codesift.config import Settings
from codesift.indexer import Indexer
from codesift.parsing.languages import detect_language
from codesift.preparation import CallJob, FileCalls, resolve_file_calls, resolve_files_calls
from codesift.store.call_targets import (
    PendingCalls,
    calls_pending_count,
    finish_calls,
    leave_to_next_index,
    pending_call_files,
    targets_pending_count,
    write_file_calls,
)
from codesift.store.writer import IndexWriter
from codesift.worker_pool import in_workers
from codesift.workspace import SourceFile

__all__ = ["CallPassProgress", "CallPassStats", "calls_pending_count", "resolve_pending_calls"]

log = logging.getLogger(__name__)

# The targets are written in transactions of at most this many files or seconds.
BATCH_FILES = 200
BATCH_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class CallPassProgress:
    phase: str  # "files" (done / total files), "resolving" (across files)
    done: int
    total: int


@dataclass(slots=True)
class CallPassStats:
    files: int = 0  # files whose targets were written
    changed: int = 0  # files left to the next index run: they changed on disk
    summaries: int = 0  # summary chunks that now name their calls
    vectors: int = 0  # ... and whose static vectors were computed again
    complete: bool = False  # nothing left marked, and edges resolved across files
    seconds: float = 0.0


BatchGuard = Callable[[], AbstractContextManager[bool]]


def resolve_pending_calls(
    root: Path,
    settings: Settings,
    conn: apsw.Connection,
    *,
    progress: Callable[[CallPassProgress], None] | None = None,
    cancel: threading.Event | None = None,
    batch_guard: BatchGuard | None = None,
) -> CallPassStats:
    """Run the call pass over every marked file of the index on `conn`. Each
    batch is written inside `batch_guard()` (e.g. the index's write lock); a
    guard that yields False, or `cancel`, stops the pass there."""
    started = time.perf_counter()
    stats = CallPassStats()
    pending = pending_call_files(conn)
    guard = batch_guard or (lambda: nullcontext(True))
    stopped = pending and not _write_targets(
        root, settings, conn, pending, stats, progress, cancel, guard
    )
    if stopped:
        stats.seconds = time.perf_counter() - started
        return stats
    if progress:
        progress(CallPassProgress("resolving", len(pending), len(pending)))
    with guard() as go:
        if not go:
            stats.seconds = time.perf_counter() - started
            return stats
        with conn:
            if targets_pending_count(conn) == 0:
                IndexWriter(conn).resolve_edges(None)
                finish_calls(conn)
                stats.complete = True
    stats.seconds = time.perf_counter() - started
    return stats


def _write_targets(
    root: Path,
    settings: Settings,
    conn: apsw.Connection,
    pending: list[PendingCalls],
    stats: CallPassStats,
    progress: Callable[[CallPassProgress], None] | None,
    cancel: threading.Event | None,
    guard: BatchGuard,
) -> bool:
    """Resolve and write the targets of `pending`'s files; False when stopped."""
    jobs = _jobs(root, settings, conn, pending)
    total = len(pending)
    done = 0
    with in_workers(
        jobs,
        resolve_file_calls,
        resolve_files_calls,
        settings.index.workers,
        "files' calls",
        size=_job_size,
    ) as results:
        items: Iterator[tuple[PendingCalls, FileCalls | None]] = zip(pending, results, strict=True)
        exhausted = False
        while not exhausted:
            if cancel is not None and cancel.is_set():
                return False
            with guard() as go:
                if not go:
                    return False
                batch_started = time.perf_counter()
                with conn:
                    for count, (item, result) in enumerate(items, start=1):
                        _write_one(conn, item, result, stats, settings.embedding.max_tokens)
                        done += 1
                        if progress:
                            progress(CallPassProgress("files", done, total))
                        elapsed = time.perf_counter() - batch_started
                        if count >= BATCH_FILES or elapsed > BATCH_SECONDS:
                            break
                    else:
                        exhausted = True
    return True


def _write_one(
    conn: apsw.Connection,
    item: PendingCalls,
    result: FileCalls | None,
    stats: CallPassStats,
    max_tokens: int,
) -> None:
    changed = (
        None
        if result is None
        else write_file_calls(conn, item.file_id, result.nodes, result.calls, result.summaries)
    )
    if changed is not None:
        stats.files += 1
        if changed:
            from codesift.embedding.row_vectors import summary_vectors  # numpy: only then

            stats.summaries += len(changed)
            stats.vectors += summary_vectors(conn, changed, max_tokens)
        return
    # Changed on disk since it was indexed (the next index run parses it whole), or
    # parsed otherwise: its calls keep no targets until then.
    log.info("%s changed since it was indexed; its calls resolve at its next index", item.path)
    leave_to_next_index(conn, item.file_id)
    stats.changed += 1


def _job_size(job: CallJob) -> int:
    return job.file.size


def _jobs(
    root: Path, settings: Settings, conn: apsw.Connection, pending: list[PendingCalls]
) -> list[CallJob]:
    """What the workers need for each file: the same job an index run makes."""
    indexer = Indexer(root, settings, conn)
    jobs: list[CallJob] = []
    for item in pending:
        # The language as discovery names it: the job refines it as an index run does.
        source = SourceFile(item.path, root / item.path, 0, 0, detect_language(item.path))
        jobs.append(CallJob(indexer.job_for(source), item.content_hash))
    return jobs
