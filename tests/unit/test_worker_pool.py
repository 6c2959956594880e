"""The worker pool's fallback: a pool that is broken before its first batch (a
worker that died at start) leaves the files to this process, in order. And a
worker's garbage collector, tuned for short-lived objects."""

from __future__ import annotations

import gc
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from codesift import worker_pool
from codesift.index_workers import WORKER_GC_THRESHOLD, tune_worker_gc


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
    results = worker_pool._pooled(BrokenAtStart(), jobs, double, double_all, 2)  # type: ignore[arg-type]
    assert list(results) == [job * 2 for job in jobs]


def test_a_worker_collects_its_young_objects_less_often() -> None:
    before = gc.get_threshold()
    try:
        tune_worker_gc()
        assert gc.get_threshold()[0] == WORKER_GC_THRESHOLD > before[0]
        assert gc.get_freeze_count() > 0  # what it imported is never collected again
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
