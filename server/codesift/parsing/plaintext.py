"""Line-window chunks for files without a grammar (YAML, TOML, SQL, JSON, ...).

A window is at most `window_lines` lines and at most `MAX_CHUNK_CHARS`
characters. When a window has to be cut inside a file, the cut moves back to a
blank line in the window's last quarter if there is one, so a paragraph, a
YAML block or an SQL statement is not split between two chunks for the sake
of a round number. Leading and trailing blank lines are trimmed from every
window, and runs of blank lines produce no chunk.

The line helpers here are shared with `codesift.parsing.markdown`, which splits
long sections the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from codesift.parsing.model import ParsedChunk, ParsedFile

__all__ = [
    "DEFAULT_WINDOW_LINES",
    "MAX_CHUNK_CHARS",
    "LineSpan",
    "line_windows",
    "parse_text",
    "split_lines",
    "window_chunks",
]

DEFAULT_WINDOW_LINES = 40
# Larger chunks dilute embeddings (the model reads ~256 tokens) and make
# snippets unwieldy; 4000 characters is about a screenful of code.
MAX_CHUNK_CHARS = 4000


@dataclass(frozen=True, slots=True)
class LineSpan:
    """A piece of a line sequence. Lines are 1-based and inclusive. `part`
    numbers the slices of one over-long line (0 for every ordinary window)."""

    start_line: int
    end_line: int
    text: str
    part: int = 0


def split_lines(text: str) -> list[str]:
    """Split like an LSP client does: `\\r\\n`, `\\r` and `\\n` end a line.

    `str.splitlines` is not used because it also breaks on form feeds, vertical
    tabs and Unicode separators, which editors do not count, and line numbers
    would drift from the ones the user sees. A final line break does not start
    another (empty) line. An empty text has no lines.
    """
    if not text:
        return []
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def _is_blank(line: str) -> bool:
    return not line or line.isspace()


def _slice_long_line(line: str, line_no: int, max_chars: int) -> list[LineSpan]:
    """Slices of one line longer than `max_chars` (minified JSON, data URIs).

    A slice ends at the last whitespace in its final quarter when there is one,
    so words and tokens are less often cut in half.
    """
    spans: list[LineSpan] = []
    pos = 0
    n = len(line)
    while pos < n:
        end = min(pos + max_chars, n)
        if end < n:
            floor = end - max_chars // 4
            cut = max(line.rfind(" ", floor, end), line.rfind("\t", floor, end))
            if cut > pos:
                end = cut + 1
        piece = line[pos:end]
        if not piece.isspace():
            spans.append(LineSpan(line_no, line_no, piece, len(spans)))
        pos = end
    return spans


def line_windows(
    lines: Sequence[str],
    first_line: int = 1,
    window_lines: int = DEFAULT_WINDOW_LINES,
    max_chars: int = MAX_CHUNK_CHARS,
) -> list[LineSpan]:
    """Cut `lines` (the first of which is line `first_line`) into windows.

    Every window starts at a non-blank line and ends at a non-blank line, has at
    most `window_lines` lines and its text (the lines joined by `\\n`) at most
    `max_chars` characters. A single line longer than `max_chars` becomes
    windows of its own, one per slice, numbered by `part`.
    """
    window_lines = max(1, window_lines)
    max_chars = max(1, max_chars)
    spans: list[LineSpan] = []
    n = len(lines)
    i = 0
    while i < n:
        while i < n and _is_blank(lines[i]):
            i += 1
        if i >= n:
            break
        if len(lines[i]) > max_chars:
            spans.extend(_slice_long_line(lines[i], first_line + i, max_chars))
            i += 1
            continue
        # Grow the window while it is within both limits; lines[i] fits alone.
        j = i + 1
        size = len(lines[i])
        limit = min(n, i + window_lines)
        while j < limit:
            size += len(lines[j]) + 1
            if size > max_chars:
                break
            j += 1
        if j < n and not _is_blank(lines[j]):
            # Cut mid-file and not already at a paragraph break: end the window
            # at the last blank line of its last quarter, if any.
            taken = j - i
            floor = j - taken // 4
            for b in range(j - 1, floor - 1, -1):
                if _is_blank(lines[b]):
                    j = b
                    break
        end = j
        while end > i and _is_blank(lines[end - 1]):
            end -= 1
        spans.append(LineSpan(first_line + i, first_line + end - 1, "\n".join(lines[i:end])))
        i = j
    return spans


def parse_text(text: str, path: str, window_lines: int = DEFAULT_WINDOW_LINES) -> ParsedFile:
    """Index a file without a grammar as `code` chunks of line windows.

    The chunk text is the file's lines verbatim; `title` carries the path so a
    result can be labelled without the text having to repeat it.
    """
    parsed = ParsedFile(language="text")
    parsed.chunks.extend(window_chunks(split_lines(text), 1, path, window_lines))
    return parsed


def window_chunks(
    lines: Sequence[str], first_line: int, path: str, window_lines: int = DEFAULT_WINDOW_LINES
) -> list[ParsedChunk]:
    """`code` chunks of the line windows of `lines` (the first is line `first_line`),
    each titled by `path`: the chunks of a file, or part of one, without a grammar."""
    return [
        ParsedChunk(
            layer="code",
            node=None,
            start_line=span.start_line,
            end_line=span.end_line,
            text=span.text,
            part=span.part,
            title=path,
        )
        for span in line_windows(lines, first_line, window_lines, MAX_CHUNK_CHARS)
    ]
