"""Progress of long CLI runs on stderr: a bar on a terminal, a line every few
seconds elsewhere (a log file, CI, an editor's task runner), so a run of many
minutes never looks hung.

A line reads `codesift: indexing 1,200/5,000 files (24%), 310 files/s, ~12 s left`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["ProgressLines", "format_duration"]

# A non-terminal run prints a progress line at most this often.
DEFAULT_INTERVAL_SECONDS = 5.0


def format_duration(seconds: float) -> str:
    """`45 s`, `12 min`, `1 h 05 min`."""
    seconds = max(0.0, seconds)
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes = seconds / 60
    if minutes < 90:
        return f"{minutes:.0f} min"
    hours, rest = divmod(int(minutes), 60)
    return f"{hours} h {rest:02d} min"


class ProgressLines:
    """Prints `what done/total unit (pct), rate, ETA` lines to `stream`, the first
    after `interval` seconds and then at most every `interval` seconds, plus a
    closing line when a run that printed anything finishes."""

    def __init__(
        self,
        stream: TextIO,
        what: str,
        unit: str,
        *,
        interval: float = DEFAULT_INTERVAL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.what = what
        self.unit = unit
        self.interval = interval
        self._clock = clock
        self._started = clock()
        self._last = self._started
        self._printed = False
        self._done = 0
        self._total = 0

    def update(self, done: int, total: int) -> None:
        self._done, self._total = done, total
        now = self._clock()
        if now - self._last < self.interval:
            return
        self._last = now
        self._emit(now)

    def phase(self, description: str) -> None:
        """The run moved to a phase without a count of its own (`resolving calls`):
        said at once, so a long one never looks like a hang."""
        self._write(f"codesift: {self.what}: {description}")

    def finish(self, *, interrupted: bool = False) -> None:
        """A closing line, if any progress line was printed: `done in 12 s`, or
        `interrupted after 12 s`. No count: the command's summary gives the counts
        (files prepared run ahead of files written, and some turn out skipped)."""
        if self._printed:
            elapsed = format_duration(self._clock() - self._started)
            ended = f"interrupted after {elapsed}" if interrupted else f"done in {elapsed}"
            self._write(f"codesift: {self.what} {ended}")

    def _emit(self, now: float) -> None:
        done, total = self._done, self._total
        elapsed = max(now - self._started, 1e-9)
        rate = done / elapsed
        parts = [f"codesift: {self.what} {done:,}/{total:,} {self.unit}"]
        if total:
            parts[0] += f" ({done / total:.0%})"
        if done:
            parts.append(f"{rate:,.0f} {self.unit}/s" if rate >= 1 else f"{rate:.2f} {self.unit}/s")
            if total > done:
                parts.append(f"~{format_duration((total - done) / rate)} left")
        self._write(", ".join(parts))

    def _write(self, text: str) -> None:
        self._printed = True
        try:
            self.stream.write(text + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken stderr must not stop the run
            pass
