"""SQL DDL -> one resource per table, view, type and function.

The file is cut into its top-level statements (parsing/sql_statements.py:
strings, comments, dollar-quoted bodies, `DELIMITER` and `GO` lines skipped).

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
from codesift.parsing.sql_statements import (
    GO_LINE,
    HAS_GO_LINE,
    Statement,
    looks_like_mysql,
    skip_block_comment,
    skip_quoted,
    split_statements,
)

__all__ = ["Statement", "parse_sql", "split_statements"]

_CODE_MARK = re.compile(r"['\"`]|--|/\*")
# The statements parse_sql looks into; the rest only need their lines.
_DDL_START = re.compile(r"(?:CREATE|ALTER|COMMENT|GRANT|REVOKE)\b", re.IGNORECASE)

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
            pos = skip_quoted(statement, pos + 1, mark, backslash and mark != "`")
        elif mark == "--":
            eol = statement.find("\n", pos)
            eol = n if eol < 0 else eol
            out[pos:eol] = " " * (eol - pos)
            pos = eol
        else:
            end = skip_block_comment(statement, pos + 2)
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
            pos = skip_quoted(body, pos + 1, ch, backslash and ch != "`")
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
            index = skip_quoted(code, index + 1, ch, backslash and ch != "`")
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


# A statement that joins a table's resource: the statement, the table's name
# parts, and the column a COMMENT ON COLUMN is about ("" for the others).
_Attached = tuple[Statement, list[str], str]


def parse_sql(text: str, path: str, window_lines: int) -> ParsedFile:
    """Resources for the DDL statements of an SQL file, line windows for the rest."""
    if text.startswith("\ufeff"):
        text = "\u00a0" + text[1:]  # keep offsets; a no-break space is whitespace
    lines = split_lines(text)
    if "\r" in text:
        text = text.replace("\r\n", " \n").replace("\r", "\n")  # offsets and lines agree
    sql = _SqlFile(text)
    pending: list[_Attached] = []
    for statement in split_statements(text):
        raw = text[statement.start : statement.end]
        if not _DDL_START.match(raw):
            continue
        code = _code_only(raw, sql.mysql)
        head = code.lstrip()
        created = _CREATE.match(head)
        if created is not None:
            sql.add_created(statement, code, head, created)
            continue
        attached = _attached_to(statement, head)
        if attached is not None:
            pending.append(attached)
    for statement, parts, column in pending:
        sql.attach(statement, parts, column)
    parsed = sql.parsed
    covered = sql.covered
    if HAS_GO_LINE.search(text):
        # Batch separators are no content of their own.
        covered.extend((i, i) for i, line in enumerate(lines, 1) if GO_LINE.fullmatch(line))
    leftover_windows(parsed, lines, covered, path, window_lines)
    parsed.chunks.sort(key=lambda c: (c.start_line, c.node if c.node is not None else -1, c.part))
    return parsed


def _attached_to(statement: Statement, head: str) -> _Attached | None:
    """The table a statement other than a CREATE of a resource belongs to, or None."""
    for pattern in _ATTACHED:
        attached = pattern.match(head)
        if attached is not None:
            return (statement, _name_parts(attached.group("name")), "")
    on_column = _COMMENT_ON_COLUMN.match(head)
    if on_column is not None:
        parts = _name_parts(on_column.group("name"))
        if len(parts) >= 2:
            return (statement, parts[:-1], parts[-1])
    return None


class _SqlFile:
    """The resources of one SQL file as its statements are read (`text` with
    line breaks normalised to `\\n`)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.parsed = ParsedFile(language="sql")
        self.line_starts = [0, *(match.end() for match in re.finditer("\n", text))]
        self.mysql = looks_like_mysql(text)
        self.resources: dict[str, _Resource] = {}
        self.by_name: dict[str, list[_Resource]] = {}
        self.covered: list[tuple[int, int]] = []

    def line_of(self, offset: int) -> int:
        line_starts = self.line_starts
        lo, hi = 0, len(line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    def add_created(
        self, statement: Statement, code: str, head: str, created: re.Match[str]
    ) -> None:
        """The resource a CREATE TABLE / VIEW / TYPE / FUNCTION ... defines."""
        parts = _name_parts(created.group("name"))
        if not parts:
            return
        text = self.text
        offset = len(code) - len(head)
        kind = _KIND_OF[re.sub(r"\s+", " ", created.group("what").upper())]
        qualified = ".".join(parts)
        start_line = self.line_of(statement.start)
        end_line = self.line_of(statement.end - 1)
        comment_line = self.line_of(statement.comment)
        node = add_resource(
            self.parsed,
            kind=kind,
            name=parts[-1],
            qualified_name=qualified,
            start_line=start_line,
            end_line=end_line,
            signature=re.sub(r"\s+", " ", head[: created.end()]).strip(),
            docstring=_comment_text(text[statement.comment : statement.start]),
            doc_start_line=comment_line,
        )
        resource = _Resource(node, qualified.lower())
        resource.columns = _columns(code, offset + created.end(), kind, self.mysql)
        self.resources.setdefault(resource.key, resource)
        self.by_name.setdefault(parts[-1].lower(), []).append(resource)
        title = f"{kind.capitalize()} {qualified}"
        first = min(comment_line, start_line)
        body = _statement_lines(text, self.line_starts, statement.comment, statement.end, first)
        tail = f"Columns: {', '.join(resource.columns)}" if resource.columns else ""
        resource.parts = add_resource_text(self.parsed, node, title, body, first, tail=tail)
        self.covered.append((first, end_line))

    def _target(self, parts: list[str]) -> _Resource | None:
        """The resource named by `parts`: by qualified name, else by a unique name."""
        found = self.resources.get(".".join(parts).lower())
        if found is None and parts:
            candidates = self.by_name.get(parts[-1].lower(), [])
            found = candidates[0] if len(candidates) == 1 else None
        return found

    def attach(self, statement: Statement, parts: list[str], column: str) -> None:
        """A statement about a table of this file as a further chunk of its resource."""
        found = self._target(parts)
        if found is None:
            return
        text = self.text
        raw = text[statement.start : statement.end]
        added = [
            _unquote(m.group("col"))
            for m in _ADD_COLUMN.finditer(_code_only(raw, self.mysql))
            if not _NOT_A_COLUMN.match(raw, m.start("col"))
        ]
        if column:
            added.append(column)
        target_node = self.parsed.nodes[found.node]
        first = self.line_of(statement.comment)
        end_line = self.line_of(statement.end - 1)
        body = _statement_lines(text, self.line_starts, statement.comment, statement.end, first)
        new_columns = [c for c in added if c not in found.columns]
        found.columns.extend(new_columns)
        tail = f"Columns: {', '.join(new_columns)}" if new_columns else ""
        title = f"{target_node.kind.capitalize()} {target_node.qualified_name}"
        found.parts = add_resource_text(
            self.parsed, found.node, title, body, first, tail=tail, first_part=found.parts
        )
        self.covered.append((first, end_line))


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
