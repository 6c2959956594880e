"""Helpers the benchmarks share: progress lines, percentiles, and how many cores the
host gives this machine."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor

__all__ = ["compile_codesift", "effective_cores", "log", "percentile"]


def log(message: str) -> None:
    """A progress line on stderr (stdout may carry a report)."""
    print(message, file=sys.stderr, flush=True)


def percentile(values: Sequence[float], p: float) -> float:
    """The value at rank round(p% of n - 1) of the sorted values (nan for none)."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]


def compile_codesift(env: Mapping[str, str] | None = None) -> str:
    """Compile the codesift package that this interpreter imports under `env` to
    bytecode, as an installed package has it (pip compiles at installation; so was
    the peer's environment), and return its folder. Run before timing codesift's
    processes: with PYTHONDONTWRITEBYTECODE set (as in some development shells)
    every process would otherwise compile each module it imports from the sources
    again (~0.2 s of the CLI's start here, and again in each index worker), which
    no user's installed codesift does."""
    found = subprocess.run(
        [sys.executable, "-c", "import codesift, os; print(os.path.dirname(codesift.__file__))"],
        env=None if env is None else dict(env),
        capture_output=True,
        text=True,
        check=True,
    )
    package = found.stdout.strip()
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", package],
        env=None if env is None else dict(env),
        check=True,
    )
    return package


def _spin(n: int) -> float:
    """Seconds a plain CPU loop of n steps takes here."""
    t0 = time.perf_counter()
    total = 0
    for i in range(n):
        total += i
    return time.perf_counter() - t0


def effective_cores(n: int = 3_000_000, trials: int = 3) -> float:
    """How many cores the host gives this machine now: the time of one CPU loop
    against two run at once in two processes (about 2.0 on an idle 2-core VM; close
    to 1 while another tenant of the host takes a core). Load average does not show
    it: it counts this machine's own work only. Median of `trials`."""
    ratios = []
    with ProcessPoolExecutor(2) as pool:
        list(pool.map(_spin, [1000, 1000]))  # start the workers first
        for _ in range(trials):
            one = _spin(n)
            t0 = time.perf_counter()
            list(pool.map(_spin, [n, n]))
            ratios.append(2 * one / (time.perf_counter() - t0))
    return statistics.median(ratios)
