"""Helpers the latency benchmarks share: progress lines and percentiles."""

from __future__ import annotations

import sys
from collections.abc import Sequence

__all__ = ["log", "percentile"]


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
