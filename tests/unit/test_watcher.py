"""The watcher's path filter and change coalescing, on plain data (no observer), with
a fake clock: no test depends on how fast the machine is."""

from __future__ import annotations

import threading

import pytest

from codesift import watcher as watcher_module
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


class FakeClock:
    """A monotonic clock that only moves when the test says so, standing in for the
    watcher module's `time`. It counts how often other threads (the coalescer's) read
    it since the last move, so a test knows when the coalescer has looked at the new
    time and decided: two readings mean one full decision was taken at that time
    (after one it may still be deciding; after delivering it stops reading)."""

    def __init__(self) -> None:
        self._now = 0.0
        self._readings = 0
        self._owner = threading.current_thread()
        self._changed = threading.Condition()

    def monotonic(self) -> float:
        with self._changed:
            if threading.current_thread() is not self._owner:
                self._readings += 1
                self._changed.notify_all()
            return self._now

    def set(self, now: float) -> None:
        with self._changed:
            self._now = now
            self._readings = 0

    def wait_for_decision(self, timeout: float = 30) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: self._readings >= 2, timeout)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    # The coalescer reads time only through `time.monotonic()` of its module.
    monkeypatch.setattr(watcher_module, "time", fake)
    return fake


class Collector:
    """Delivered batches, and an event set on each delivery."""

    def __init__(self) -> None:
        self.batches: list[ChangeBatch] = []
        self.arrived = threading.Event()

    def __call__(self, batch: ChangeBatch) -> None:
        self.batches.append(batch)
        self.arrived.set()

    def wait(self) -> None:
        # A deadline against a hang, not a timing check: the fake clock decides when.
        assert self.arrived.wait(30), "no batch was delivered"


def test_burst_is_one_batch_after_the_quiet_period(clock: FakeClock) -> None:
    got = Collector()
    coalescer = ChangeCoalescer(got, quiet=0.1, max_wait=5)
    try:
        for i in range(200):
            coalescer.add_path(f"f{i % 50}.py")
        clock.set(0.09)
        assert clock.wait_for_decision()
        assert got.batches == []  # not quiet for long enough yet
        clock.set(0.1)
        got.wait()
        assert len(got.batches) == 1
        assert got.batches[0].paths == {f"f{i}.py" for i in range(50)}
        assert not got.batches[0].rescan
        assert coalescer.pending() == 0
    finally:
        coalescer.stop()


def test_max_wait_flushes_a_steady_stream(clock: FakeClock) -> None:
    got = Collector()
    coalescer = ChangeCoalescer(got, quiet=0.2, max_wait=0.4)
    try:
        for step in range(8):  # a change every 0.05 s: never quiet for 0.2 s
            clock.set(step * 0.05)
            coalescer.add_path("busy.log")
        assert clock.wait_for_decision()
        assert got.batches == []  # at 0.35: still busy, and 0.4 s have not passed
        clock.set(0.4)  # quiet only at 0.55, but the first change is 0.4 s old
        got.wait()
        assert [b.paths for b in got.batches] == [{"busy.log"}]
    finally:
        coalescer.stop()


def test_rescan_and_overflow(clock: FakeClock) -> None:
    got = Collector()
    coalescer = ChangeCoalescer(got, quiet=0.05, max_wait=1, max_paths=10)
    try:
        for i in range(11):
            coalescer.add_path(f"f{i}.py")
        clock.set(0.05)
        got.wait()
        assert got.batches[0].rescan and not got.batches[0].paths
        assert "more than 10 changed paths" in got.batches[0].reasons[0]
        got.arrived.clear()
        coalescer.add_path("a.py")
        coalescer.request_rescan("git HEAD changed")
        coalescer.add_path("b.py")
        clock.set(0.1)
        got.wait()
        assert got.batches[1].rescan and got.batches[1].reasons == ["git HEAD changed"]
        assert not got.batches[1].paths
    finally:
        coalescer.stop()
