"""Reading one source file: decode it, or say why it is not indexed.

`read_source` reads a file exactly once and returns either a `SourceText` or a
`ContentSkip` carrying a short reason. It never raises for file-level problems
(vanished, unreadable, too big, binary, minified) because one bad file must not
stop an index run.

Text is UTF-8 unless a byte-order mark (UTF-8, UTF-16, UTF-32) or the file's
own declaration says otherwise: Python's coding line (PEP 263) and Ruby's magic
comment (`declared_encoding`).

Callers must index `SourceText.text` (decoded, BOM stripped, newlines
normalised), never `data`: the raw bytes are kept only for the content hash and
may be UTF-16 or contain CRLF line ends. To hand text to tree-sitter, encode
`text` as UTF-8.
"""

from __future__ import annotations

import codecs
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ContentSkip", "SourceText", "declared_encoding", "read_source"]

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
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        text = data.decode("utf-32", errors="replace")
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        # UTF-16 text (Windows resource files, some PowerShell) is full of NULs
        # but is still text; the BOM says so, so skip the binary sniff.
        text = data.decode("utf-16", errors="replace")
    else:
        if data.find(b"\x00", 0, _SNIFF_BYTES) != -1:
            return ContentSkip("binary")
        bom = data.startswith(codecs.BOM_UTF8)
        body = data[len(codecs.BOM_UTF8) :] if bom else data
        # A UTF-8 BOM wins over a declaration (Python calls the two together an error).
        encoding = None if bom else declared_encoding(abs_path.name, body)
        try:
            text = body.decode(encoding or "utf-8")
        except UnicodeDecodeError:
            # Latin-1 or damaged files are still worth searching: keep them with
            # replacement characters and let the caller know.
            text = body.decode(encoding or "utf-8", errors="replace")
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


# PEP 263's pattern; Ruby's magic comment (`# encoding: x`, `# -*- coding: x -*-`)
# has the same shape, in any case.
_PYTHON_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_RUBY_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.IGNORECASE)
_PYTHON_SUFFIXES = (".py", ".pyi", ".pyw")
_RUBY_SUFFIXES = (".rb", ".rake", ".gemspec")
_RUBY_NAMES = ("Rakefile", "Gemfile", "Guardfile", "Vagrantfile", "Podfile")


def declared_encoding(name: str, data: bytes) -> str | None:
    """The encoding a file named `name` declares for itself, when its language has
    such a declaration and it names a codec Python knows other than UTF-8: Python's
    coding line (PEP 263: the first line, or the second after a comment or blank
    first line) and Ruby's magic comment (the first line, or the second after
    `#!`). None otherwise (the text is then read as UTF-8)."""
    if name.endswith(_PYTHON_SUFFIXES):
        pattern = _PYTHON_CODING
    elif name.endswith(_RUBY_SUFFIXES) or name in _RUBY_NAMES:
        pattern = _RUBY_CODING
    else:
        return None
    lines = data[:1024].split(b"\n", 2)[:2]
    found = pattern.match(lines[0])
    if found is None and len(lines) == 2:
        first = lines[0].strip()
        second_counts = (
            first.startswith(b"#!")
            if pattern is _RUBY_CODING
            else (not first or first.startswith(b"#"))
        )
        if second_counts:
            found = pattern.match(lines[1])
    if found is None:
        return None
    try:
        codec = codecs.lookup(found.group(1).decode("ascii"))
    except (LookupError, UnicodeDecodeError):
        return None
    if codec.name == "utf-8" or "#\n".encode(codec.name, "replace") != b"#\n":
        return None  # UTF-8 already, or not ASCII-compatible (Python refuses those too)
    return codec.name


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
