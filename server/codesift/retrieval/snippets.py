"""Snippets: a bounded window of a chunk's text, with true source line numbers.

Pure functions: the caller supplies the chunk text and the spans of the nested
definitions that the chunk shows as one-line stubs.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Snippet", "estimate_tokens", "snippet_window", "source_line_map"]

# Lines of context kept above the first matching line.
CONTEXT_ABOVE = 2


@dataclass(frozen=True, slots=True)
class Snippet:
    text: str
    start_line: int  # source line of the snippet's first line
    end_line: int
    truncated: bool  # the snippet does not show the whole chunk


def estimate_tokens(text: str) -> int:
    """Tokens estimated as characters / 4, rounded up: the usual ratio of BPE
    tokenizers on source code and English. Documented in docs/cli.md."""
    return (len(text) + 3) // 4


def source_line_map(
    start_line: int,
    line_count: int,
    stub_spans: Sequence[tuple[int, int]],
    has_part_header: bool = False,
) -> list[int]:
    """Source line number of each line of a chunk's text.

    A code chunk holds its node's own lines in order, with each nested
    definition replaced by one stub line; `stub_spans` are those definitions'
    (start, end) lines. A continuation part starts with a repeated header line,
    mapped to the part's first source line.
    """
    spans = sorted(stub_spans)
    out: list[int] = []
    cursor = start_line
    index = 0
    first = 0
    if has_part_header and line_count:
        out.append(start_line)
        first = 1
    while index < len(spans) and spans[index][1] < cursor:
        index += 1
    for _ in range(first, line_count):
        if index < len(spans) and spans[index][0] == cursor:
            out.append(cursor)
            cursor = spans[index][1] + 1
            index += 1
            while index < len(spans) and spans[index][1] < cursor:
                index += 1
        else:
            out.append(cursor)
            cursor += 1
    return out


@functools.lru_cache(maxsize=256)
def _terms_pattern(terms: tuple[str, ...]) -> re.Pattern[str]:
    """Any of `terms`, longest first (built once for a page's ten snippets)."""
    return re.compile(
        "|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True)), re.IGNORECASE
    )


def _first_match(lines: Sequence[str], terms: Sequence[str]) -> int | None:
    if not terms:
        return None
    pattern = _terms_pattern(tuple(terms))
    for i, line in enumerate(lines):
        if pattern.search(line):
            return i
    return None


def snippet_window(
    text: str,
    terms: Sequence[str],
    max_chars: int,
    line_numbers: Sequence[int],
) -> Snippet:
    """A window of whole lines of `text`, at most `max_chars` long.

    Centred on the first line that contains a query term (with a little context
    above); head-anchored when no term occurs (a vector-only hit). A single line
    longer than the budget is cut.
    """
    lines = text.split("\n")
    if not lines or not line_numbers:
        return Snippet("", 0, 0, bool(text))
    hit = _first_match(lines, terms)
    start = 0 if hit is None else max(0, hit - CONTEXT_ABOVE)
    if hit is not None:
        # Context above is dropped first when it would push the match out of the window.
        while start < hit and sum(len(x) + 1 for x in lines[start : hit + 1]) - 1 > max_chars:
            start += 1
    chosen: list[str] = []
    used = 0
    end = start
    cut = False
    for i in range(start, len(lines)):
        cost = len(lines[i]) + (1 if chosen else 0)
        if used + cost > max_chars:
            if not chosen:
                chosen.append(lines[i][: max(0, max_chars - 1)] + "…")
                used = len(chosen[0])
                end = i
                cut = True
            break
        chosen.append(lines[i])
        used += cost
        end = i
    # Fill upwards when the window reached the end with budget left.
    while start > 0 and end == len(lines) - 1:
        cost = len(lines[start - 1]) + 1
        if used + cost > max_chars:
            break
        start -= 1
        chosen.insert(0, lines[start])
        used += cost
    truncated = cut or start > 0 or end < len(lines) - 1
    last = min(end, len(line_numbers) - 1)
    return Snippet(
        "\n".join(chosen),
        line_numbers[min(start, len(line_numbers) - 1)],
        line_numbers[last],
        truncated,
    )
