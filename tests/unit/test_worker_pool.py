"""The worker pool's fallback: a pool that is broken before its first batch (a
worker that died at start) leaves the files to this process, in order. The window
of batches handed out ahead of the results taken, bounded in batches and in source
bytes. The pipe the results come through, widened to hold a batch's results. And
a worker's garbage collector, tuned for short-lived objects."""

from __future__ import annotations

import fcntl
import gc
import sys
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import pytest

from codesift import worker_pool
from codesift.index_workers import WORKER_GC_THRESHOLD, tune_worker_gc, worker_context

F_GETPIPE_SZ = getattr(fcntl, "F_GETPIPE_SZ", 1032)


class BrokenAtStart:
    """A process pool whose worker died before any batch was queued: the standard
    library's ProcessPoolExecutor raises from `submit` then."""

    def submit(self, fn: Any, *args: Any) -> Future[Any]:
        raise BrokenProcessPool("a child process terminated abruptly")


def double(job: int) -> int:
    return job * 2


def double_all(jobs: list[int]) -> list[int]:
    return [double(job) for job in jobs]


def test_a_pool_broken_before_its_first_batch_leaves_every_job_to_this_process() -> None:
    jobs = list(range(50))
    results = worker_pool._pooled(BrokenAtStart(), jobs, double, double_all, 2, None)  # type: ignore[arg-type]
    assert list(results) == [job * 2 for job in jobs]


class Recording:
    """A pool that runs each batch at once and records, at each submit, how many
    submitted batches were not handed over whole yet (`taken` is kept by the test)."""

    def __init__(self) -> None:
        self.submitted = 0
        self.taken = 0
        self.outstanding: list[int] = []

    def submit(self, fn: Any, *args: Any) -> Future[Any]:
        self.submitted += 1
        self.outstanding.append(self.submitted - self.taken)
        future: Future[Any] = Future()
        future.set_result(fn(*args))
        return future


def test_the_workers_get_batches_ahead_of_the_results_taken_up_to_the_window() -> None:
    pool = Recording()
    jobs = list(range(worker_pool.WORKER_BATCH_FILES * 40))
    results = worker_pool._pooled(pool, jobs, double, double_all, 2, lambda job: 1)  # type: ignore[arg-type]
    window = 2 * worker_pool.BATCHES_IN_FLIGHT_PER_WORKER
    # Handed out before the first result is asked for: the workers start at once.
    assert pool.submitted == window
    taken = []
    for index, value in enumerate(results):
        taken.append(value)
        pool.taken = (index + 1) // worker_pool.WORKER_BATCH_FILES  # batches handed over
    assert taken == [job * 2 for job in jobs]
    assert max(pool.outstanding) == window + 1  # the window and the batch being handed over
    assert pool.submitted == 40


def test_large_files_narrow_the_window_but_each_worker_keeps_a_batch() -> None:
    pool = Recording()
    jobs = list(range(worker_pool.WORKER_BATCH_FILES * 12))
    huge = worker_pool.SOURCE_BYTES_IN_FLIGHT  # one file fills the byte budget
    results = worker_pool._pooled(pool, jobs, double, double_all, 2, lambda job: huge)  # type: ignore[arg-type]
    assert pool.submitted == 2
    assert list(results) == [job * 2 for job in jobs]
    assert pool.submitted == 12


def test_a_worker_collects_its_young_objects_less_often() -> None:
    before = gc.get_threshold()
    try:
        tune_worker_gc()
        assert gc.get_threshold()[0] == WORKER_GC_THRESHOLD > before[0]
        assert gc.get_freeze_count() > 0  # what it imported is never collected again
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="F_SETPIPE_SZ is Linux's")
def test_the_results_pipe_holds_a_whole_batch() -> None:
    wanted = min(worker_pool.RESULTS_PIPE_BYTES, worker_pool.pipe_max_size())
    pool = ProcessPoolExecutor(max_workers=1, mp_context=worker_context())
    try:
        reader = pool._result_queue._reader  # type: ignore[attr-defined]
        before = fcntl.fcntl(reader.fileno(), F_GETPIPE_SZ)
        if wanted <= before:
            pytest.skip(f"fs.pipe-max-size ({wanted}) allows no larger pipe than {before}")
        worker_pool._widen_results_pipe(pool)
        after = fcntl.fcntl(reader.fileno(), F_GETPIPE_SZ)
    finally:
        pool.shutdown()
    assert after == wanted
