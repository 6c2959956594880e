"""Reading one source file: decode it, or say why it is not indexed.

`read_source` reads a file exactly once and returns either a `SourceText` or a
`ContentSkip` carrying a short reason. It never raises for file-level problems
(vanished, unreadable, too big, binary, minified) because one bad file must not
stop an index run.

Callers must index `SourceText.text` (decoded, BOM stripped, newlines
normalised), never `data`: the raw bytes are kept only for the content hash and
may be UTF-16 or contain CRLF line ends. To hand text to tree-sitter, encode
`text` as UTF-8.
"""

from __future__ import annotations

import codecs
import hashlib
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ContentSkip", "SourceText", "read_source"]

# Git's own heuristic: a NUL byte near the start means binary.
_SNIFF_BYTES = 8192
# A file is minified only if its lines are long on average too, so a single long
# string literal (a data URL, a regex table) in normal code does not hide the file.
_MINIFIED_AVG_LINE_CHARS = 300


@dataclass(frozen=True, slots=True)
class SourceText:
    """A decoded text file, ready to parse and chunk."""

    text: str  # decoded, BOM stripped, "\r\n" and "\r" normalised to "\n"
    data: bytes  # raw bytes as read
    content_hash: str  # hex blake2b (digest_size=16) of `data`
    invalid_utf8: bool  # True when undecodable bytes were replaced with U+FFFD


@dataclass(frozen=True, slots=True)
class ContentSkip:
    """Why a file's content is not indexed ("binary", "vanished", ...)."""

    reason: str


def read_source(
    abs_path: Path, max_bytes: int, minified_line_chars: int
) -> SourceText | ContentSkip:
    """Read and decode `abs_path`, or return why it should be skipped.

    Reasons: "vanished", "unreadable: <strerror>", "larger than N bytes",
    "binary", "minified or generated".
    """
    try:
        with open(abs_path, "rb") as handle:
            # One byte past the limit is enough to know the file grew too big,
            # without reading a huge file into memory.
            data = handle.read(max_bytes + 1)
    except (FileNotFoundError, NotADirectoryError):
        return ContentSkip("vanished")
    except OSError as exc:
        return ContentSkip(f"unreadable: {exc.strerror or exc}")
    if len(data) > max_bytes:
        return ContentSkip(f"larger than {max_bytes} bytes")

    invalid_utf8 = False
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) and not data.startswith(
        codecs.BOM_UTF32_LE
    ):
        # UTF-16 text (Windows resource files, some PowerShell) is full of NULs
        # but is still text; the BOM says so, so skip the binary sniff.
        text = data.decode("utf-16", errors="replace")
    else:
        if data.find(b"\x00", 0, _SNIFF_BYTES) != -1:
            return ContentSkip("binary")
        body = data[len(codecs.BOM_UTF8) :] if data.startswith(codecs.BOM_UTF8) else data
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            # Latin-1 or damaged files are still worth searching: keep them with
            # replacement characters and let the caller know.
            text = body.decode("utf-8", errors="replace")
            invalid_utf8 = True

    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if _looks_minified(text, minified_line_chars):
        return ContentSkip("minified or generated")

    return SourceText(
        text=text,
        data=data,
        content_hash=hashlib.blake2b(data, digest_size=16).hexdigest(),
        invalid_utf8=invalid_utf8,
    )


def _looks_minified(text: str, max_line_chars: int) -> bool:
    """Some line longer than `max_line_chars` and an average line over 300 chars."""
    if len(text) <= max_line_chars:
        return False
    newlines = text.count("\n")
    lines = newlines if text.endswith("\n") else newlines + 1
    if (len(text) - newlines) / lines <= _MINIFIED_AVG_LINE_CHARS:
        return False
    # Only reached for files with few, long lines, so this loop is short.
    return _longest_line(text) > max_line_chars


def _longest_line(text: str) -> int:
    longest = 0
    start = 0
    while True:
        end = text.find("\n", start)
        if end == -1:
            return max(longest, len(text) - start)
        longest = max(longest, end - start)
        start = end + 1
