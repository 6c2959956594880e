"""The watcher's path filter and change coalescing, on plain data (no observer)."""

from __future__ import annotations

import threading
import time

from codesift.config import DEFAULT_EXCLUDED_DIRS
from codesift.watcher import ChangeBatch, ChangeCoalescer, PathFilter


def test_path_filter() -> None:
    f = PathFilter(DEFAULT_EXCLUDED_DIRS, ["var/index"])
    assert f.verdict("src/app.py") == "path"
    assert f.verdict(".git/HEAD") == "rescan"
    assert f.verdict(".git/index") is None
    assert f.verdict(".git/refs/heads/main") is None
    assert f.verdict("node_modules/x/index.js") is None
    assert f.verdict("pkg/__pycache__/m.cpython-311.pyc") is None
    assert f.verdict(".codesift/index.db-wal") is None
    assert f.verdict("var/index/index.db") is None
    assert f.verdict("var/other.py") == "path"
    assert f.verdict("node_modules") is None  # the excluded folder itself
    assert f.verdict("") is None


def collect() -> tuple[list[ChangeBatch], threading.Event]:
    batches: list[ChangeBatch] = []
    arrived = threading.Event()

    def deliver(batch: ChangeBatch) -> None:
        batches.append(batch)
        arrived.set()

    return batches, arrived


def test_burst_is_one_batch_after_the_quiet_period() -> None:
    batches, arrived = collect()
    coalescer = ChangeCoalescer(lambda b: (batches.append(b), arrived.set()), quiet=0.1, max_wait=5)
    try:
        started = time.monotonic()
        for i in range(200):
            coalescer.add_path(f"f{i % 50}.py")
        assert arrived.wait(2)
        assert time.monotonic() - started >= 0.1
        assert len(batches) == 1 and len(batches[0].paths) == 50 and not batches[0].rescan
    finally:
        coalescer.stop()


def test_max_wait_flushes_a_steady_stream() -> None:
    batches, arrived = collect()
    coalescer = ChangeCoalescer(
        lambda b: (batches.append(b), arrived.set()), quiet=0.2, max_wait=0.4
    )
    try:
        started = time.monotonic()
        while not arrived.is_set() and time.monotonic() - started < 3:
            coalescer.add_path("busy.log")
            time.sleep(0.05)  # never quiet for 0.2 s
        assert arrived.is_set()
        assert 0.35 <= time.monotonic() - started < 1.5
    finally:
        coalescer.stop()


def test_rescan_and_overflow() -> None:
    batches, arrived = collect()
    coalescer = ChangeCoalescer(
        lambda b: (batches.append(b), arrived.set()), quiet=0.05, max_wait=1, max_paths=10
    )
    try:
        for i in range(11):
            coalescer.add_path(f"f{i}.py")
        assert arrived.wait(2)
        assert batches[0].rescan and not batches[0].paths
        assert "more than 10 changed paths" in batches[0].reasons[0]
        arrived.clear()
        coalescer.add_path("a.py")
        coalescer.request_rescan("git HEAD changed")
        coalescer.add_path("b.py")
        assert arrived.wait(2)
        assert batches[1].rescan and batches[1].reasons == ["git HEAD changed"]
    finally:
        coalescer.stop()
