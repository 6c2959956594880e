#!/usr/bin/env python3
"""Markdown parsing speed on pathological input (inputs that made a quadratic
parser take minutes; tests/unit/test_markdown.py checks their results).

Run by hand from the repository root (with the project's interpreter):

    PYTHONPATH=server python bench/markdown_speed.py [--repeat 5]

Prints the best and median time of each input. Target: each well under a second
(3-150 ms on a 2-core machine when this was written, 10,000 headings the slowest).
A time that grows with the square of the input size is the regression to look
for, so each input is also timed at half size (the last column: ~2 is linear).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from codesift.parsing.markdown import parse_markdown

INPUTS: dict[str, Callable[[int], str]] = {
    "headings": lambda n: "\n".join(f"{'#' * (i % 6 + 1)} h{i}\nbody {i}" for i in range(n // 5)),
    "unclosed brackets": lambda n: "# " + "[" * n + "](" * n,
    "list markers": lambda n: "- " * n + "```\n# x",
    "setext paragraph": lambda n: "a\n" * n + "===",
}


def timed(text: str, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        parse_markdown(text, "x.md")
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--size", type=int, default=50_000)
    args = parser.parse_args()
    print(f"{'input':<20}{'size':>8}{'best ms':>10}{'median ms':>11}{'x2 size ratio':>15}")
    for name, make in INPUTS.items():
        half = min(timed(make(args.size // 2), args.repeat))
        times = timed(make(args.size), args.repeat)
        best = min(times)
        print(
            f"{name:<20}{args.size:>8}{best * 1000:>10.1f}"
            f"{statistics.median(times) * 1000:>11.1f}{best / half if half else 0:>15.2f}"
        )


if __name__ == "__main__":
    main()
