"""SQL DDL -> one resource per table, view, type and function.

A statement splitter (no SQL grammar: dialects differ too much for one, and
DDL only needs the statement boundaries and a few words at the start) cuts the
file at top-level `;`, skipping strings ('...', E'...' with backslash escapes,
MySQL's backslash escapes in files that look like MySQL), quoted identifiers
("x", `x`, [x]), comments (-- and nested /* */), PostgreSQL dollar-quoted
bodies ($$...$$, $fn$...$fn$) and BEGIN ATOMIC ... END bodies. A MySQL
`DELIMITER //` line changes the terminator until the next one, and a SQL
Server `GO` line ends a batch as `;` does.

Each CREATE TABLE / VIEW / MATERIALIZED VIEW / TYPE / DOMAIN / FUNCTION /
PROCEDURE becomes a resource named by its object (`users`; `public.users` is
the qualified name), whose text is the statement with the comment block right
above it (or a short one a blank line above it), followed by "Columns: a, b, c"
for a table (or a view with a column list). Statements about a table defined
in the same file (CREATE INDEX ... ON, ALTER TABLE, COMMENT ON TABLE / COLUMN,
CREATE TRIGGER ... ON, GRANT / REVOKE ... ON) are further chunks of that
table's resource. Everything else (INSERTs, SELECTs, statements about tables
defined elsewhere) is indexed as line windows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from codesift.parsing.model import ParsedFile
from codesift.parsing.plaintext import split_lines
from codesift.parsing.resources import add_resource, add_resource_text, leftover_windows

__all__ = ["Statement", "parse_sql", "split_statements"]

_DOLLAR_TAG = re.compile(r"\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$")
_DELIMITER_LINE = re.compile(r"[ \t]*DELIMITER[ \t]+(\S+)[ \t]*(?:\r?\n|$)", re.IGNORECASE)
# SQL Server scripts end their batches with a line `GO`, often with no `;`.
_GO_LINE = re.compile(r"[ \t]*GO[ \t]*(?:\r?\n|$)", re.IGNORECASE)
_HAS_GO_LINE = re.compile(r"^[ \t]*GO[ \t]*$", re.IGNORECASE | re.MULTILINE)
_MYSQL_HINT = re.compile(r"`|\bENGINE\s*=|\bAUTO_INCREMENT\b|^\s*DELIMITER\s", re.I | re.M)


# SQL-standard routine bodies (PostgreSQL 14+): `;` ends their statements, END; the routine.
_ATOMIC_BODY = re.compile(r"\bBEGIN\s+ATOMIC\b", re.IGNORECASE)
_COMMENT_MARK = re.compile(r"/\*|\*/")
_CODE_MARK = re.compile(r"['\"`]|--|/\*")
# The statements parse_sql looks into; the rest only need their lines.
_DDL_START = re.compile(r"(?:CREATE|ALTER|COMMENT|GRANT|REVOKE)\b", re.IGNORECASE)
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


def _skip_quoted(text: str, pos: int, close: str, backslash: bool) -> int:
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


def _skip_block_comment(text: str, pos: int) -> int:
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
    mysql = _looks_like_mysql(text)
    statements: list[Statement] = []
    n = len(text)
    pos = 0
    delimiter = ";"
    batches = _HAS_GO_LINE.search(text) is not None
    special = _special_chars(delimiter, batches)
    start = -1  # offset of the current statement's first word, -1 between statements
    comment = -1  # where the comment block before the next statement began
    atomic: bool | None = None  # whether the statement has a BEGIN ATOMIC body
    while pos < n:
        ch = text[pos]
        if start < 0:
            if ch.isspace():
                if ch == "\n" and comment >= 0 and _blank_after(text, pos):
                    comment = -1  # a blank line parts a comment from what follows
                pos += 1
                continue
            line_start = text.rfind("\n", 0, pos) + 1
            # A comment opens the block above the next statement when it starts
            # its line (not when it trails the previous statement).
            opens_block = comment < 0 and text[line_start:pos].strip() == ""
            if text.startswith("--", pos) or (mysql and ch == "#"):
                if opens_block:
                    comment = line_start
                eol = text.find("\n", pos)
                pos = n if eol < 0 else eol
                continue
            if text.startswith("/*", pos):
                if opens_block:
                    comment = line_start
                pos = _skip_block_comment(text, pos + 2)
                continue
            if pos == line_start or text[line_start:pos].strip() == "":
                go = _GO_LINE.match(text, pos) if batches and ch in "Gg" else None
                if go is not None:
                    pos = go.end()
                    comment = -1
                    continue
                directive = _DELIMITER_LINE.match(text, pos) if ch in "Dd" else None
                if directive is not None:
                    delimiter = directive.group(1)
                    special = _special_chars(delimiter, batches)
                    pos = directive.end()
                    comment = -1
                    continue
            start = pos
            atomic = None
        # Inside a statement.
        if text.startswith(delimiter, pos):
            if atomic is None:
                atomic = _ATOMIC_BODY.search(text, start, pos) is not None
            if atomic and not _ends_with_end(text, start, pos):
                pos += len(delimiter)  # a `;` inside a BEGIN ATOMIC ... END body
                continue
            pos += len(delimiter)
            statements.append(Statement(start, pos, comment if comment >= 0 else start))
            start = comment = -1
            continue
        if ch == "\n":
            go = _GO_LINE.match(text, pos + 1)
            if go is not None:
                end = pos
                while end > start and text[end - 1].isspace():
                    end -= 1
                statements.append(Statement(start, end, comment if comment >= 0 else start))
                start = comment = -1
                pos = go.end()
                continue
        pos = _skip_token(text, pos, mysql, special)
    if start >= 0:
        end = len(text.rstrip())
        if text[start:end].strip():
            statements.append(Statement(start, end, comment if comment >= 0 else start))
    return _with_titled_comments(text, statements)


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
        return _skip_quoted(text, pos + 1, "'", escapes)
    if ch == '"':
        return _skip_quoted(text, pos + 1, '"', mysql)
    if ch == "`":
        return _skip_quoted(text, pos + 1, "`", False)
    if ch == "[" and not mysql:
        close = text.find("]", pos + 1)
        return n if close < 0 else close + 1
    if text.startswith("--", pos) or (mysql and ch == "#"):
        eol = text.find("\n", pos)
        return n if eol < 0 else eol
    if text.startswith("/*", pos):
        return _skip_block_comment(text, pos + 2)
    if ch == "$":
        tag = _DOLLAR_TAG.match(text, pos)
        if tag is not None and _word_start(text, pos):
            close = text.find(tag.group(), tag.end())
            return n if close < 0 else close + len(tag.group())
    # Ordinary text: jump to the next character that can matter.
    found = special.search(text, pos + 1)
    return n if found is None else found.start()


def _looks_like_mysql(text: str) -> bool:
    """MySQL escapes quotes with backslashes and comments with `#`; its dumps
    give themselves away early."""
    return _MYSQL_HINT.search(text[:200_000]) is not None


def _word_start(text: str, pos: int) -> bool:
    return pos == 0 or not (text[pos - 1].isalnum() or text[pos - 1] == "_")


def _blank_after(text: str, newline: int) -> bool:
    """Whether the line after the line break at `newline` is blank."""
    eol = text.find("\n", newline + 1)
    return text[newline + 1 : len(text) if eol < 0 else eol].strip() == ""


# -- what a statement is ------------------------------------------------------------

_IDENT = r'(?:"(?:[^"]|"")+"|`[^`]+`|\[[^\]]+\]|[^\W\d][\w$]*)'
_NAME = rf"{_IDENT}(?:\s*\.\s*{_IDENT}){{0,2}}"
_IF_NOT_EXISTS = r"(?:IF\s+NOT\s+EXISTS\s+)?"
_OR_REPLACE = r"(?:OR\s+(?:REPLACE|ALTER)\s+)?"
_MYSQL_VIEW_OPTIONS = r"(?:(?:ALGORITHM\s*=\s*\w+|DEFINER\s*=\s*\S+|SQL\s+SECURITY\s+\w+)\s+)*"

_CREATE = re.compile(
    rf"CREATE\s+{_OR_REPLACE}"
    r"(?:(?:GLOBAL|LOCAL)\s+)?(?:(?:TEMP|TEMPORARY|UNLOGGED|VIRTUAL|FOREIGN|EXTERNAL)\s+)?"
    rf"{_MYSQL_VIEW_OPTIONS}(?:RECURSIVE\s+)?"
    r"(?P<what>TABLE|MATERIALIZED\s+VIEW|VIEW|TYPE|DOMAIN|FUNCTION|PROCEDURE)\s+"
    rf"{_IF_NOT_EXISTS}(?P<name>{_NAME})",
    re.IGNORECASE,
)
_KIND_OF = {
    "TABLE": "table",
    "VIEW": "view",
    "MATERIALIZED VIEW": "view",
    "TYPE": "type",
    "DOMAIN": "type",
    "FUNCTION": "function",
    "PROCEDURE": "function",
}
# Statements that belong to the table they name.
_ATTACHED = (
    re.compile(
        r"CREATE\s+(?:UNIQUE\s+)?(?:(?:FULLTEXT|SPATIAL|CLUSTERED|NONCLUSTERED)\s+)?INDEX\s+"
        rf"(?:CONCURRENTLY\s+)?{_IF_NOT_EXISTS}(?:{_NAME}\s+)?ON\s+(?:ONLY\s+)?(?P<name>{_NAME})",
        re.IGNORECASE,
    ),
    re.compile(rf"ALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?(?:ONLY\s+)?(?P<name>{_NAME})", re.IGNORECASE),
    re.compile(
        rf"COMMENT\s+ON\s+(?:TABLE|VIEW|MATERIALIZED\s+VIEW)\s+(?P<name>{_NAME})", re.IGNORECASE
    ),
    re.compile(
        rf"(?:GRANT|REVOKE)\b[^;]*?\bON\s+(?:TABLE\s+)?(?P<name>{_NAME})\s+(?:TO|FROM)\b",
        re.IGNORECASE,
    ),
    re.compile(
        rf"CREATE\s+{_OR_REPLACE}(?:CONSTRAINT\s+)?TRIGGER\s+{_IF_NOT_EXISTS}{_NAME}"
        rf"[^;]*?\bON\s+(?P<name>{_NAME})",
        re.IGNORECASE,
    ),
)
_COMMENT_ON_COLUMN = re.compile(rf"COMMENT\s+ON\s+COLUMN\s+(?P<name>{_NAME})", re.IGNORECASE)
_IDENT_RE = re.compile(_IDENT)
_NOT_A_COLUMN = re.compile(
    r"(?:CONSTRAINT|PRIMARY\s+KEY|FOREIGN\s+KEY|UNIQUE|CHECK|EXCLUDE|INDEX|KEY|FULLTEXT"
    r"|SPATIAL|LIKE|PERIOD\s+FOR)\b",
    re.IGNORECASE,
)
_ADD_COLUMN = re.compile(rf"\bADD\s+(?:COLUMN\s+)?{_IF_NOT_EXISTS}(?P<col>{_IDENT})", re.IGNORECASE)
_COMMENT_LINE = re.compile(r"\s*(?:--+|#|/\*+|\*+/?|\*/)\s?")


def _unquote(ident: str) -> str:
    if ident[:1] == '"' and ident[-1:] == '"':
        return ident[1:-1].replace('""', '"')
    if ident[:1] in "`[" and len(ident) > 1:
        return ident[1:-1]
    return ident


def _name_parts(raw: str) -> list[str]:
    return [_unquote(m.group()) for m in _IDENT_RE.finditer(raw)]


def _code_only(statement: str, backslash: bool) -> str:
    """The statement with comments blanked out (same length), for the regexes;
    `backslash`: whether a backslash escapes a quote (MySQL)."""
    if "--" not in statement and "/*" not in statement:
        return statement
    out = list(statement)
    pos = 0
    n = len(statement)
    while pos < n:
        found = _CODE_MARK.search(statement, pos)
        if found is None:
            break
        pos = found.start()
        mark = found.group()
        if mark in ("'", '"', "`"):
            pos = _skip_quoted(statement, pos + 1, mark, backslash and mark != "`")
        elif mark == "--":
            eol = statement.find("\n", pos)
            eol = n if eol < 0 else eol
            out[pos:eol] = " " * (eol - pos)
            pos = eol
        else:
            end = _skip_block_comment(statement, pos + 2)
            out[pos:end] = [c if c == "\n" else " " for c in statement[pos:end]]
            pos = end
    return "".join(out)


def _top_level_items(body: str, backslash: bool) -> list[str]:
    """`body` (the text inside a statement's outer parentheses) split at
    top-level commas, skipping quoted text."""
    items: list[str] = []
    depth = 0
    begin = 0
    pos = 0
    n = len(body)
    while pos < n:
        ch = body[pos]
        if ch in "'\"`":
            pos = _skip_quoted(body, pos + 1, ch, backslash and ch != "`")
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(body[begin:pos])
            begin = pos + 1
        pos += 1
    items.append(body[begin:])
    return [item.strip() for item in items if item.strip()]


def _parenthesized(code: str, pos: int, backslash: bool) -> str | None:
    """The text inside the parentheses opening at or after `pos` (before any
    `AS`), or None."""
    open_at = code.find("(", pos)
    if open_at < 0 or re.search(r"\bAS\b", code[pos:open_at], re.IGNORECASE):
        return None
    depth = 0
    index = open_at
    while index < len(code):
        ch = code[index]
        if ch in "'\"`":
            index = _skip_quoted(code, index + 1, ch, backslash and ch != "`")
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return code[open_at + 1 : index]
        index += 1
    return None


def _columns(code: str, after_name: int, kind: str, backslash: bool) -> list[str]:
    if kind not in ("table", "view"):
        return []
    body = _parenthesized(code, after_name, backslash)
    if body is None:
        return []
    columns: list[str] = []
    for item in _top_level_items(body, backslash):
        if _NOT_A_COLUMN.match(item):
            continue
        match = _IDENT_RE.match(item)
        if match is not None:
            columns.append(_unquote(match.group()))
    return columns


def _comment_text(text: str) -> str:
    lines = [_COMMENT_LINE.sub("", line, count=1).strip() for line in text.split("\n")]
    return " ".join(line.strip("*/ ") for line in lines if line.strip("*/ "))


@dataclass(slots=True)
class _Resource:
    node: int
    key: str  # qualified name, lower case
    columns: list[str] = field(default_factory=list)
    parts: int = 0  # doc chunks so far


def parse_sql(text: str, path: str, window_lines: int) -> ParsedFile:
    """Resources for the DDL statements of an SQL file, line windows for the rest."""
    parsed = ParsedFile(language="sql")
    if text.startswith("\ufeff"):
        text = "\u00a0" + text[1:]  # keep offsets; a no-break space is whitespace
    lines = split_lines(text)
    if "\r" in text:
        text = text.replace("\r\n", " \n").replace("\r", "\n")  # offsets and lines agree
    line_starts = [0, *(match.end() for match in re.finditer("\n", text))]

    def line_of(offset: int) -> int:
        lo, hi = 0, len(line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    mysql = _looks_like_mysql(text)
    resources: dict[str, _Resource] = {}
    by_name: dict[str, list[_Resource]] = {}
    covered: list[tuple[int, int]] = []
    # Statements that join a table's resource: statement, the table's name parts,
    # and the column a COMMENT ON COLUMN is about.
    pending: list[tuple[Statement, list[str], str]] = []

    for statement in split_statements(text):
        raw = text[statement.start : statement.end]
        if not _DDL_START.match(raw):
            continue
        code = _code_only(raw, mysql)
        head = code.lstrip()
        offset = len(code) - len(head)
        created = _CREATE.match(head)
        if created is None:
            for pattern in _ATTACHED:
                attached = pattern.match(head)
                if attached is not None:
                    pending.append((statement, _name_parts(attached.group("name")), ""))
                    break
            else:
                on_column = _COMMENT_ON_COLUMN.match(head)
                if on_column is not None:
                    parts = _name_parts(on_column.group("name"))
                    if len(parts) >= 2:
                        pending.append((statement, parts[:-1], parts[-1]))
            continue
        parts = _name_parts(created.group("name"))
        if not parts:
            continue
        kind = _KIND_OF[re.sub(r"\s+", " ", created.group("what").upper())]
        qualified = ".".join(parts)
        start_line = line_of(statement.start)
        end_line = line_of(statement.end - 1)
        comment_line = line_of(statement.comment)
        signature = re.sub(r"\s+", " ", head[: created.end()]).strip()
        docstring = _comment_text(text[statement.comment : statement.start])
        node = add_resource(
            parsed,
            kind=kind,
            name=parts[-1],
            qualified_name=qualified,
            start_line=start_line,
            end_line=end_line,
            signature=signature,
            docstring=docstring,
            doc_start_line=comment_line,
        )
        resource = _Resource(node, qualified.lower())
        resource.columns = _columns(code, offset + created.end(), kind, mysql)
        resources.setdefault(resource.key, resource)
        by_name.setdefault(parts[-1].lower(), []).append(resource)
        title = f"{kind.capitalize()} {qualified}"
        first = min(comment_line, start_line)
        body = _statement_lines(text, line_starts, statement.comment, statement.end, first)
        tail = f"Columns: {', '.join(resource.columns)}" if resource.columns else ""
        resource.parts = add_resource_text(parsed, node, title, body, first, tail=tail)
        covered.append((first, end_line))

    for statement, parts, column in pending:
        found = resources.get(".".join(parts).lower())
        if found is None and parts:
            candidates = by_name.get(parts[-1].lower(), [])
            found = candidates[0] if len(candidates) == 1 else None
        if found is None:
            continue
        raw = text[statement.start : statement.end]
        added = [
            _unquote(m.group("col"))
            for m in _ADD_COLUMN.finditer(_code_only(raw, mysql))
            if not _NOT_A_COLUMN.match(raw, m.start("col"))
        ]
        if column:
            added.append(column)
        target_node = parsed.nodes[found.node]
        first = line_of(statement.comment)
        end_line = line_of(statement.end - 1)
        body = _statement_lines(text, line_starts, statement.comment, statement.end, first)
        new_columns = [c for c in added if c not in found.columns]
        found.columns.extend(new_columns)
        tail = f"Columns: {', '.join(new_columns)}" if new_columns else ""
        title = f"{target_node.kind.capitalize()} {target_node.qualified_name}"
        found.parts = add_resource_text(
            parsed, found.node, title, body, first, tail=tail, first_part=found.parts
        )
        covered.append((first, end_line))

    if _HAS_GO_LINE.search(text):
        # Batch separators are no content of their own.
        covered.extend((i, i) for i, line in enumerate(lines, 1) if _GO_LINE.fullmatch(line))
    leftover_windows(parsed, lines, covered, path, window_lines)
    parsed.chunks.sort(key=lambda c: (c.start_line, c.node if c.node is not None else -1, c.part))
    return parsed


def _statement_lines(
    text: str,
    line_starts: list[int],
    begin: int,
    end: int,
    first_line: int,
) -> list[str]:
    """The lines of `text[begin:end]`, the first and last cut where the
    statement starts and ends when another statement shares the line."""
    first_offset = line_starts[first_line - 1]
    prefix = text[first_offset:begin]
    body = text[begin:end]
    # Another statement's text on the first line is not ours.
    chunk = body if prefix.strip() else prefix + body
    return [line.rstrip() for line in chunk.split("\n")]
