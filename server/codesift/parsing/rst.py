"""reStructuredText -> `doc` chunks, one per section, like markdown.

A section title is a line of text underlined (and optionally overlined) by
one punctuation character repeated (`=====`, `-----`, `~~~~~`...). Levels are
not fixed by the character: the first style seen (character, with or without
an overline) is level 1, the next new one level 2, and so on, as docutils
assigns them. The sections, their heading paths and the splitting of long ones
are markdown's (`section_chunks`).

What cannot open a section: anything indented (literal blocks after `::`,
directive bodies such as `.. code-block::`, block quotes; docutils allows no
section there), a quoted literal block (unindented lines after a `::`
paragraph that all start with the same punctuation), an explicit markup line
(`.. comment`) and a text line that follows a paragraph line directly (docutils
rejects a title there). An underline shorter than the title is accepted when
it has at least four characters, as docutils does (with a warning).
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import PurePosixPath

from codesift.parsing.markdown import Heading, section_chunks
from codesift.parsing.model import ParsedFile
from codesift.parsing.plaintext import split_lines

__all__ = ["parse_rst"]

_ADORNMENT_CHARS = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_MAX_TITLE_CHARS = 120
_ROLE = re.compile(r":[\w.+-]+:`([^`]*)`")
_LINK = re.compile(r"`([^`<]*?)\s*<[^`>]*>`__?")
_LITERAL = re.compile(r"``([^`]*)``")
_EMPHASIS = re.compile(r"\*\*?([^*]+)\*\*?")
_INTERPRETED = re.compile(r"`([^`]*)`_{0,2}")
_SPACES = re.compile(r"\s+")


def _adornment(line: str) -> str:
    """The character a line repeats when it is an adornment (at least two
    characters at column 0, nothing else), "" otherwise."""
    body = line.rstrip()
    if len(body) < 2 or body[0] not in _ADORNMENT_CHARS or body == "::":
        return ""
    return body[0] if body.count(body[0]) == len(body) else ""


def _width(text: str) -> int:
    """Columns the text takes: wide East Asian characters count twice, as in docutils."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _clean_title(raw: str) -> str:
    text = _ROLE.sub(r"\1", raw[: _MAX_TITLE_CHARS * 8])
    text = _LINK.sub(r"\1", text)
    text = _LITERAL.sub(r"\1", text)
    text = _EMPHASIS.sub(r"\1", text)
    text = _INTERPRETED.sub(r"\1", text)
    text = _SPACES.sub(" ", text).strip()
    if len(text) > _MAX_TITLE_CHARS:
        text = text[: _MAX_TITLE_CHARS - 1].rstrip() + "…"
    return text


def _is_blank(line: str) -> bool:
    return not line or line.isspace()


def _is_title_text(line: str) -> bool:
    stripped = line.strip()
    return (
        bool(stripped)
        and not _adornment(line)
        and not (stripped == ".." or stripped.startswith(".. "))
    )


def _long_enough(adornment: str, title: str) -> bool:
    length = len(adornment.rstrip())
    return length >= _width(title.strip()) or length >= 4


def _find_headings(lines: list[str]) -> list[Heading]:
    headings: list[Heading] = []
    styles: dict[tuple[str, bool], int] = {}
    n = len(lines)
    i = 0
    # Whether the line before `i` lets a title start at `i` (blank, start of
    # file, or the end of a title).
    open_before = True
    # After a paragraph that ends in "::" and the blank line after it: a quoted
    # literal block may start.
    literal_next = False
    while i < n:
        line = lines[i]
        if _is_blank(line):
            open_before = True
            i += 1
            continue
        if literal_next and line[0] in _ADORNMENT_CHARS:
            i = _quoted_block_end(lines, i)
            literal_next = False
            open_before = False
            continue
        literal_next = False
        heading = _heading_at(lines, i, styles) if open_before and not line[0].isspace() else None
        if heading is not None:
            headings.append(heading)
            i = heading.body
            open_before = True
            continue
        after_blanks = _after_literal_marker(lines, i)
        if after_blanks is not None:
            literal_next = True
            i = after_blanks
            continue
        open_before = False
        i += 1
    return headings


def _quoted_block_end(lines: list[str], i: int) -> int:
    """The end of the quoted literal block starting at `i`: the lines up to a
    blank one that start with its first line's character."""
    quote = lines[i][0]
    n = len(lines)
    while i < n and not _is_blank(lines[i]) and lines[i].startswith(quote):
        i += 1
    return i


def _heading_at(lines: list[str], i: int, styles: dict[tuple[str, bool], int]) -> Heading | None:
    """The section title at line `i` (overlined and underlined, or underlined),
    or None."""
    line = lines[i]
    n = len(lines)
    over = _adornment(line)
    if over:
        if (
            i + 2 < n
            and _is_title_text(lines[i + 1])
            and _adornment(lines[i + 2]) == over
            and _long_enough(lines[i + 2], lines[i + 1])
        ):
            return _heading(styles, (over, True), i, i + 3, lines[i + 1])
        return None
    if i + 1 < n and _is_title_text(line):
        under = _adornment(lines[i + 1])
        if under and _long_enough(lines[i + 1], line):
            return _heading(styles, (under, False), i, i + 2, line)
    return None


def _after_literal_marker(lines: list[str], i: int) -> int | None:
    """When line `i` ends a paragraph with "::" and blank lines follow, the
    line after them (where a quoted literal block may start); else None."""
    line = lines[i]
    if not line.rstrip().endswith("::") or line.lstrip().startswith(".."):
        return None
    n = len(lines)
    j = i + 1
    if j < n and _is_blank(lines[j]):
        while j < n and _is_blank(lines[j]):
            j += 1
        return j
    return None


def _heading(
    styles: dict[tuple[str, bool], int], style: tuple[str, bool], start: int, body: int, title: str
) -> Heading:
    level = styles.setdefault(style, len(styles) + 1)
    return Heading(start, body, level, _clean_title(title))


def parse_rst(text: str, path: str) -> ParsedFile:
    """Split a reStructuredText document into heading sections (`doc` chunks).
    Never raises on text of any shape."""
    parsed = ParsedFile(language="rst")
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = split_lines(text)
    file_title = PurePosixPath(path).name or path or "document"
    parsed.chunks = section_chunks(lines, _find_headings(lines), file_title)
    return parsed
