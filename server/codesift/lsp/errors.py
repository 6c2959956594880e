"""codesift errors as JSON-RPC errors: the one place the server maps them.

- QueryError (a bad request: empty query, unknown layer, malformed time...) is
  InvalidParams (-32602), as are the parameter checks of lsp/params.py;
- SearchCancelled is RequestCancelled (-32800);
- every other codesift error (a damaged, foreign or read-only index, a busy
  index, a full disk, no index yet, an embedding failure, a bad setting) and an
  SQLite error that reaches a handler is CODESIFT_ERROR (-33000), with
  `data: {"kind": ...}` naming it (docs/protocol.md lists the kinds).
"""

from __future__ import annotations

import apsw
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcRequestCancelled

from codesift.errors import (
    CodesiftError,
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

__all__ = ["CODESIFT_ERROR", "error_kind", "rpc_error"]

# Outside JSON-RPC's reserved -32768..-32000 and LSP's -32899..-32800.
CODESIFT_ERROR = -33000

_KINDS: tuple[tuple[type[BaseException], str], ...] = (
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
    return "codesift"


def rpc_error(exc: CodesiftError | apsw.Error) -> JsonRpcException:
    """The JSON-RPC error a handler's codesift (or SQLite) error becomes."""
    if isinstance(exc, SearchCancelled):
        return JsonRpcRequestCancelled(message="the request was cancelled")
    if isinstance(exc, QueryError):
        return JsonRpcInvalidParams(message=str(exc))
    kind = error_kind(exc)
    message = str(exc) or type(exc).__name__
    if isinstance(exc, apsw.Error) and kind == "index_damaged":
        message = f"the index is damaged ({exc}); run `codesift index --rebuild`"
    return JsonRpcException(message=message, code=CODESIFT_ERROR, data={"kind": kind})
