"""SQL text -> its top-level statements (parsing/sql.py reads the DDL among them).

A statement splitter (no SQL grammar: dialects differ too much for one, and
DDL only needs the statement boundaries and a few words at the start) cuts the
file at top-level `;`, skipping strings ('...', E'...' with backslash escapes,
MySQL's backslash escapes in files that look like MySQL), quoted identifiers
("x", `x`, [x]), comments (-- and nested /* */), PostgreSQL dollar-quoted
bodies ($$...$$, $fn$...$fn$) and BEGIN ATOMIC ... END bodies. A MySQL
`DELIMITER //` line changes the terminator until the next one, and a SQL
Server `GO` line ends a batch as `;` does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "GO_LINE",
    "HAS_GO_LINE",
    "Statement",
    "looks_like_mysql",
    "skip_block_comment",
    "skip_quoted",
    "split_statements",
]

_DOLLAR_TAG = re.compile(r"\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$")
_DELIMITER_LINE = re.compile(r"[ \t]*DELIMITER[ \t]+(\S+)[ \t]*(?:\r?\n|$)", re.IGNORECASE)
# SQL Server scripts end their batches with a line `GO`, often with no `;`.
GO_LINE = re.compile(r"[ \t]*GO[ \t]*(?:\r?\n|$)", re.IGNORECASE)
HAS_GO_LINE = re.compile(r"^[ \t]*GO[ \t]*$", re.IGNORECASE | re.MULTILINE)
_MYSQL_HINT = re.compile(r"`|\bENGINE\s*=|\bAUTO_INCREMENT\b|^\s*DELIMITER\s", re.I | re.M)


# SQL-standard routine bodies (PostgreSQL 14+): `;` ends their statements, END; the routine.
_ATOMIC_BODY = re.compile(r"\bBEGIN\s+ATOMIC\b", re.IGNORECASE)
_COMMENT_MARK = re.compile(r"/\*|\*/")
_STOPS = {q: re.compile(re.escape(q)) for q in "'\"`]"}
_BACKSLASH_STOPS = {q: re.compile(f"[{re.escape(q)}\\\\]") for q in "'\"`]"}


@dataclass(frozen=True, slots=True)
class Statement:
    """One statement: `text[start:end]` (from its first word through its
    terminator), and `comment` the offset where the comment block right above
    it begins (== start when there is none)."""

    start: int
    end: int
    comment: int


def skip_quoted(text: str, pos: int, close: str, backslash: bool) -> int:
    """Offset after the closing `close` of a literal opened at `pos - 1`;
    a doubled closer is an escaped one."""
    n = len(text)
    stops = _BACKSLASH_STOPS[close] if backslash else _STOPS[close]
    while pos < n:
        found = stops.search(text, pos)
        if found is None:
            return n
        pos = found.start()
        if text[pos] == "\\":
            pos += 2
            continue
        if pos + 1 < n and text[pos + 1] == close and close != "]":
            pos += 2  # a doubled quote stands for itself
            continue
        return pos + 1
    return n


def skip_block_comment(text: str, pos: int) -> int:
    """Offset after the `*/` closing the comment whose `/*` ends at `pos`
    (PostgreSQL nests them; the others never write `/*` inside one)."""
    depth = 1
    while depth:
        found = _COMMENT_MARK.search(text, pos)
        if found is None:
            return len(text)
        depth += 1 if found.group() == "/*" else -1
        pos = found.end()
    return pos


def split_statements(text: str) -> list[Statement]:
    """Top-level statements of an SQL text, in order."""
    return _with_titled_comments(text, _Splitter(text).statements())


class _Splitter:
    """One walk over an SQL text: between statements it skips blank space,
    comments (noting where the comment block above the next statement begins)
    and `GO` / `DELIMITER` lines; inside one it skips literals, quoted
    identifiers, comments and bodies until the terminator."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.mysql = looks_like_mysql(text)
        self.found: list[Statement] = []
        self.delimiter = ";"
        self.batches = HAS_GO_LINE.search(text) is not None
        self.special = _special_chars(self.delimiter, self.batches)
        self.start = -1  # offset of the current statement's first word, -1 between statements
        self.comment = -1  # where the comment block before the next statement began
        self.atomic: bool | None = None  # whether the statement has a BEGIN ATOMIC body

    def statements(self) -> list[Statement]:
        text = self.text
        n = len(text)
        pos = 0
        while pos < n:
            if self.start < 0:
                skipped = self._between(pos)
                if skipped is not None:
                    pos = skipped
                    continue
            pos = self._inside(pos)
        if self.start >= 0:
            end = len(text.rstrip())
            if text[self.start : end].strip():
                self._close(end)
        return self.found

    def _close(self, end: int) -> None:
        comment = self.comment if self.comment >= 0 else self.start
        self.found.append(Statement(self.start, end, comment))
        self.start = self.comment = -1

    def _between(self, pos: int) -> int | None:
        """Where the walk goes on after what starts at `pos` between statements,
        or None when a statement starts there (then `start` is set)."""
        text = self.text
        ch = text[pos]
        if ch.isspace():
            if ch == "\n" and self.comment >= 0 and _blank_after(text, pos):
                self.comment = -1  # a blank line parts a comment from what follows
            return pos + 1
        line_start = text.rfind("\n", 0, pos) + 1
        # A comment opens the block above the next statement when it starts
        # its line (not when it trails the previous statement).
        opens_block = self.comment < 0 and text[line_start:pos].strip() == ""
        if text.startswith("--", pos) or (self.mysql and ch == "#"):
            if opens_block:
                self.comment = line_start
            eol = text.find("\n", pos)
            return len(text) if eol < 0 else eol
        if text.startswith("/*", pos):
            if opens_block:
                self.comment = line_start
            return skip_block_comment(text, pos + 2)
        if pos == line_start or text[line_start:pos].strip() == "":
            directive_end = self._directive_line(pos, ch)
            if directive_end is not None:
                return directive_end
        self.start = pos
        self.atomic = None
        return None

    def _directive_line(self, pos: int, ch: str) -> int | None:
        """The end of a `GO` or `DELIMITER x` line starting at `pos`, or None."""
        go = GO_LINE.match(self.text, pos) if self.batches and ch in "Gg" else None
        if go is not None:
            self.comment = -1
            return go.end()
        directive = _DELIMITER_LINE.match(self.text, pos) if ch in "Dd" else None
        if directive is not None:
            self.delimiter = directive.group(1)
            self.special = _special_chars(self.delimiter, self.batches)
            self.comment = -1
            return directive.end()
        return None

    def _inside(self, pos: int) -> int:
        """Where the walk goes on after what starts at `pos` inside a statement
        (closing it at its terminator or at a `GO` line)."""
        text = self.text
        if text.startswith(self.delimiter, pos):
            after = pos + len(self.delimiter)
            if self.atomic is None:
                self.atomic = _ATOMIC_BODY.search(text, self.start, pos) is not None
            if not (self.atomic and not _ends_with_end(text, self.start, pos)):
                self._close(after)
            # else: a `;` inside a BEGIN ATOMIC ... END body
            return after
        if text[pos] == "\n":
            go = GO_LINE.match(text, pos + 1)
            if go is not None:
                end = pos
                while end > self.start and text[end - 1].isspace():
                    end -= 1
                self._close(end)
                return go.end()
        return _skip_token(text, pos, self.mysql, self.special)


# A short comment block one blank line above a statement, standing alone
# ("/* 6.5 CHARACTER_DATA domain */", "-- Users"), titles it; a longer one, or
# one at the top of the file, is more likely about the file or a group.
_MAX_TITLE_COMMENT_LINES = 5
_COMMENT_LINE_START = ("--", "/*", "*", "#")


def _with_titled_comments(text: str, statements: list[Statement]) -> list[Statement]:
    out: list[Statement] = []
    floor = 0
    for statement in statements:
        if statement.comment == statement.start:
            begin = _title_comment(text, statement.start, floor)
            statement = Statement(statement.start, statement.end, begin)
        out.append(statement)
        floor = statement.end
    return out


def _title_comment(text: str, start: int, floor: int) -> int:
    """Where the comment block that titles the statement at `start` begins
    (`start` when there is none)."""
    line_start = text.rfind("\n", 0, start) + 1
    if line_start == 0 or text[line_start:start].strip():
        return start
    blank_end = line_start - 1  # the line break ending the line above: must be blank
    blank_start = text.rfind("\n", 0, blank_end) + 1
    if blank_start == 0 or text[blank_start:blank_end].strip() or blank_start <= floor:
        return start
    begin = blank_start
    taken = 0
    while begin > floor and taken <= _MAX_TITLE_COMMENT_LINES:
        above = text.rfind("\n", 0, begin - 1) + 1
        line = text[above : begin - 1].strip()
        if not line:
            break  # the blank line above the block
        if not (line.startswith(_COMMENT_LINE_START) or line.endswith("*/")) or above < floor:
            return start
        begin = above
        taken += 1
    if not taken or taken > _MAX_TITLE_COMMENT_LINES or begin == 0:
        return start
    return begin


def _special_chars(delimiter: str, batches: bool) -> re.Pattern[str]:
    """The characters that may start a literal, a comment or the terminator
    (a line break too when `GO` lines end batches)."""
    chars = "'\"`[-/$#" + delimiter[0] + ("\n" if batches else "")
    return re.compile("[" + re.escape(chars) + "]")


def _ends_with_end(text: str, start: int, pos: int) -> bool:
    """Whether the statement's text before `pos` ends with the word END."""
    end = pos
    while end > start and text[end - 1].isspace():
        end -= 1
    return end - start >= 3 and text[end - 3 : end].upper() == "END" and _word_start(text, end - 3)


def _skip_token(text: str, pos: int, mysql: bool, special: re.Pattern[str]) -> int:
    """Offset after the literal, quoted identifier, comment or dollar-quoted
    body starting at `pos` inside a statement, or of the next character that
    may start one (or end the statement)."""
    n = len(text)
    ch = text[pos]
    if ch == "'":
        escapes = mysql or (pos > 0 and text[pos - 1] in "Ee" and _word_start(text, pos - 1))
        return skip_quoted(text, pos + 1, "'", escapes)
    if ch == '"':
        return skip_quoted(text, pos + 1, '"', mysql)
    if ch == "`":
        return skip_quoted(text, pos + 1, "`", False)
    if ch == "[" and not mysql:
        close = text.find("]", pos + 1)
        return n if close < 0 else close + 1
    if text.startswith("--", pos) or (mysql and ch == "#"):
        eol = text.find("\n", pos)
        return n if eol < 0 else eol
    if text.startswith("/*", pos):
        return skip_block_comment(text, pos + 2)
    if ch == "$":
        tag = _DOLLAR_TAG.match(text, pos)
        if tag is not None and _word_start(text, pos):
            close = text.find(tag.group(), tag.end())
            return n if close < 0 else close + len(tag.group())
    # Ordinary text: jump to the next character that can matter.
    found = special.search(text, pos + 1)
    return n if found is None else found.start()


def looks_like_mysql(text: str) -> bool:
    """MySQL escapes quotes with backslashes and comments with `#`; its dumps
    give themselves away early."""
    return _MYSQL_HINT.search(text[:200_000]) is not None


def _word_start(text: str, pos: int) -> bool:
    return pos == 0 or not (text[pos - 1].isalnum() or text[pos - 1] == "_")


def _blank_after(text: str, newline: int) -> bool:
    """Whether the line after the line break at `newline` is blank."""
    eol = text.find("\n", newline + 1)
    return text[newline + 1 : len(text) if eol < 0 else eol].strip() == ""
