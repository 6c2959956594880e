"""codesift errors as MCP tool errors: the one place the MCP server maps them.

A tool that fails answers with a result whose `isError` is true, one line of
text saying what went wrong, and `{"error": {"kind": ..., "message": ...}}` as
structured content, so that the agent can read it and try again; the server
lives on. The kinds are the language server's (docs/protocol.md):

- `bad_request`: QueryError, a bad argument (wrong type, out of range, unknown
  language, layer or edge kind, malformed time, unknown argument);
- `cancelled`: SearchCancelled;
- `index_damaged`, `index_foreign`, `index_read_only`, `index_busy`,
  `disk_full`, `not_indexed`, `embedding_failed`, `config`, `workspace`,
  `index_error`: the other codesift and SQLite errors;
- `internal`: anything else (a bug; the traceback goes to the log).

An unknown tool name is not a tool error but a JSON-RPC error (-32602), as the
MCP specification asks.
"""

from __future__ import annotations

import apsw
from mcp_types import CallToolResult, TextContent

from codesift.errors import (
    ConfigError,
    CorruptIndexError,
    DiskFullError,
    EmbeddingError,
    ForeignIndexError,
    IndexBusyError,
    NotIndexedError,
    QueryError,
    ReadOnlyIndexError,
    SearchCancelled,
    WorkspaceError,
)

__all__ = ["error_kind", "error_result"]

_KINDS: tuple[tuple[type[BaseException], str], ...] = (
    (QueryError, "bad_request"),
    (SearchCancelled, "cancelled"),
    (CorruptIndexError, "index_damaged"),
    (ForeignIndexError, "index_foreign"),
    (ReadOnlyIndexError, "index_read_only"),
    (IndexBusyError, "index_busy"),
    (DiskFullError, "disk_full"),
    (NotIndexedError, "not_indexed"),
    (EmbeddingError, "embedding_failed"),
    (ConfigError, "config"),
    (WorkspaceError, "workspace"),
    (apsw.CorruptError, "index_damaged"),
    (apsw.NotADBError, "index_damaged"),
    (apsw.BusyError, "index_busy"),
    (apsw.FullError, "disk_full"),
    (apsw.ReadOnlyError, "index_read_only"),
    (apsw.Error, "index_error"),
)


def error_kind(exc: BaseException) -> str:
    for cls, kind in _KINDS:
        if isinstance(exc, cls):
            return kind
    return "internal"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def error_result(exc: BaseException) -> CallToolResult:
    """The tool result for a failure: `isError`, one line of text, the kind."""
    kind = error_kind(exc)
    detail = _one_line(str(exc)) or type(exc).__name__
    if kind == "internal":
        message = f"unexpected failure: {type(exc).__name__}: {detail} (see the server log)"
    elif kind == "index_damaged" and isinstance(exc, apsw.Error):
        message = f"the index is damaged ({detail}); run `codesift index --rebuild`"
    elif kind == "bad_request":
        message = f"bad argument: {detail}"
    else:
        message = detail
    return CallToolResult(
        content=[TextContent(type="text", text=message)],
        structured_content={"error": {"kind": kind, "message": message}},
        is_error=True,
    )
