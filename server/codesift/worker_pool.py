"""Running a function over many files in worker processes, results in order.

A bulk of files is CPU work (parsing) while the one writer only inserts rows:
workers get the jobs in batches, and at most a few batches per worker are
queued or waiting to be written, so that results the writer has not written yet
do not pile up in its memory. Fewer jobs than PARALLEL_MIN_FILES, one worker, or
no processes at all: everything runs in this process.
"""

from __future__ import annotations

import logging
import os
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import TypeVar

from codesift.index_workers import code_changed_on_disk, code_stamp, start_worker, worker_context

__all__ = ["PARALLEL_MIN_FILES", "in_workers"]

log = logging.getLogger(__name__)

# Jobs run in worker processes when there are at least this many.
PARALLEL_MIN_FILES = 100
# Workers get jobs in batches of this many, at most this many batches per worker
# queued or waiting to be written, and (beyond one batch per worker) at most this
# many bytes of source in them. The results are handed over in order, and new
# batches go out as the caller takes results: with 3 batches per worker the
# workers ran dry while the writer committed (0.5-0.8 more idle core-seconds per
# cold index of the stdlib copy than with 8: docs/notes/index-speed.md).
WORKER_BATCH_FILES = 8
BATCHES_IN_FLIGHT_PER_WORKER = 8
SOURCE_BYTES_IN_FLIGHT = 16 << 20
# The size asked for the pipe the results come through (_widen_results_pipe).
RESULTS_PIPE_BYTES = 1 << 20

J = TypeVar("J")
R = TypeVar("R")


@contextmanager
def in_workers(
    jobs: list[J],
    one: Callable[[J], R],
    batch: Callable[[list[J]], list[R]],
    workers: int,
    what: str = "files",
    size: Callable[[J], int] | None = None,
) -> Iterator[Iterator[R]]:
    """`one(job)` for each job, in order: in `workers` processes (`batch`, a
    module-level function, runs a batch there) for a bulk, else here. `size`: a
    job's source bytes, which bound the results waiting to be taken."""
    if workers <= 1 or len(jobs) < PARALLEL_MIN_FILES:
        yield (one(job) for job in jobs)
        return
    count = min(workers, len(jobs))
    if code_changed_on_disk():
        # Workers would import the new code and refuse to start: no pool at all.
        _warn_once(
            "codesift changed on disk since this process started: files are prepared "
            "in this process (one core) until it is restarted"
        )
        yield (one(job) for job in jobs)
        return
    try:
        pool = ProcessPoolExecutor(
            max_workers=count,
            mp_context=worker_context(),
            initializer=start_worker,
            initargs=(os.getpid(), code_stamp()),
        )
    except (OSError, ValueError) as exc:  # no processes here: run in-process
        log.warning("cannot start index workers (%s); working in one process", exc)
        yield (one(job) for job in jobs)
        return
    _widen_results_pipe(pool)
    log.info("%d %s in %d worker processes", len(jobs), what, count)
    try:
        yield _pooled(pool, jobs, one, batch, count, size)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _widen_results_pipe(pool: ProcessPoolExecutor) -> None:
    """Make the pipe that carries the workers' results hold a whole batch's results
    (Linux: F_SETPIPE_SZ, up to fs.pipe-max-size, 1 MiB by default). With the
    default 64 KiB a worker's send of a batch (~300 KiB pickled for 8 files of the
    stdlib copy) waits for this process to read it piecemeal, and this process
    reads when its writer thread lets go of the GIL. Elsewhere a no-op."""
    try:
        import fcntl

        reader = pool._result_queue._reader  # type: ignore[attr-defined]
        size = min(RESULTS_PIPE_BYTES, pipe_max_size())
        fcntl.fcntl(reader.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), size)
    except (ImportError, AttributeError, OSError, ValueError) as exc:
        log.debug("results pipe left at its size: %s", exc)


def pipe_max_size() -> int:
    """The largest pipe an unprivileged process may ask for (Linux's
    fs.pipe-max-size); OSError elsewhere."""
    with open("/proc/sys/fs/pipe-max-size", encoding="ascii") as found:
        return int(found.read())


_warned: set[str] = set()


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        log.warning("%s", message)


def _pooled(
    pool: ProcessPoolExecutor,
    jobs: list[J],
    one: Callable[[J], R],
    batch: Callable[[list[J]], list[R]],
    workers: int,
    size: Callable[[J], int] | None,
) -> Iterator[R]:
    """The results in order. The first batches are submitted now, not at the first
    result asked for: the workers start while the caller gets ready to write."""
    starts = iter(range(0, len(jobs), WORKER_BATCH_FILES))
    pending: deque[tuple[int, int, Future[list[R]]]] = deque()
    weights = [
        0 if size is None else sum(map(size, jobs[i : i + WORKER_BATCH_FILES]))
        for i in range(0, len(jobs), WORKER_BATCH_FILES)
    ]
    out = 0  # source bytes submitted and not taken yet

    def submit_more() -> None:
        nonlocal out
        while len(pending) < workers * BATCHES_IN_FLIGHT_PER_WORKER:
            if len(pending) >= workers and out >= SOURCE_BYTES_IN_FLIGHT:
                return
            start = next(starts, None)
            if start is None:
                return
            weight = weights[start // WORKER_BATCH_FILES]
            try:
                future = pool.submit(batch, jobs[start : start + WORKER_BATCH_FILES])
            except BrokenProcessPool as exc:  # a worker died already: handled below
                future = Future()
                future.set_exception(exc)
            pending.append((start, weight, future))
            out += weight

    def taken(weight: int) -> None:
        nonlocal out
        out -= weight
        submit_more()

    submit_more()
    return _in_order(pending, taken, jobs, one)


def _in_order(
    pending: deque[tuple[int, int, Future[list[R]]]],
    taken: Callable[[int], None],
    jobs: list[J],
    one: Callable[[J], R],
) -> Iterator[R]:
    while pending:
        start, weight, future = pending.popleft()
        try:
            results = future.result()
        except BrokenProcessPool as exc:
            # A worker died (out of memory, a crashing grammar): finish in this process.
            log.warning("an index worker died (%s); continuing in one process", exc)
            for job in jobs[start:]:
                yield one(job)
            return
        taken(weight)
        yield from results
