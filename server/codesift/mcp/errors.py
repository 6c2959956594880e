"""codesift errors as MCP tool errors: the one place the MCP server maps them.

A tool that fails answers with a result whose `isError` is true, one line of
text saying what went wrong, and `{"error": {"kind": ..., "message": ...}}` as
structured content, so that the agent can read it and try again; the server
lives on. The kinds are codesift.errors' (`error_kind`, the same table as the
language server's `data.kind`, docs/protocol.md):

- `bad_request`: QueryError, a bad argument (wrong type, out of range, unknown
  language, layer or edge kind, malformed time, unknown argument); the text
  starts with `bad argument: `;
- `cancelled`: SearchCancelled;
- `index_damaged`, `index_foreign`, `index_read_only`, `index_busy`,
  `disk_full`, `not_indexed`, `embedding_failed`, `config`, `workspace`,
  `index_error`, `codesift`: the other codesift and SQLite errors;
- `internal`: anything else (a bug; the traceback goes to the log).

An unknown tool name is not a tool error but a JSON-RPC error (-32602), as the
MCP specification asks.
"""

from __future__ import annotations

from mcp_types import CallToolResult, TextContent

from codesift.errors import error_kind, error_message

__all__ = ["error_result"]


def error_result(exc: BaseException) -> CallToolResult:
    """The tool result for a failure: `isError`, one line of text, the kind."""
    kind = error_kind(exc)
    message = error_message(exc)
    if kind == "internal":
        message = f"unexpected failure: {type(exc).__name__}: {message} (see the server log)"
    elif kind == "bad_request":
        message = f"bad argument: {message}"
    return CallToolResult(
        content=[TextContent(type="text", text=message)],
        structured_content={"error": {"kind": kind, "message": message}},
        is_error=True,
    )
