"""codesift errors as JSON-RPC errors: the one place the server maps them.

The kinds come from codesift.errors (`error_kind`, one table for every front
end); here they become JSON-RPC errors:

- `bad_request` (QueryError: empty query, unknown layer, malformed time...) is
  InvalidParams (-32602), as are the parameter checks of lsp/params.py;
- `cancelled` (SearchCancelled) is RequestCancelled (-32800);
- every other kind (a damaged, foreign or read-only index, a busy index, a
  full disk, no index yet, an embedding failure, a bad setting, another SQLite
  error) is CODESIFT_ERROR (-33000), with `data: {"kind": ...}` naming it
  (docs/protocol.md lists the kinds).
"""

from __future__ import annotations

import apsw
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcRequestCancelled

from codesift.errors import CodesiftError, error_kind, error_message

__all__ = ["CODESIFT_ERROR", "rpc_error"]

# Outside JSON-RPC's reserved -32768..-32000 and LSP's -32899..-32800.
CODESIFT_ERROR = -33000


def rpc_error(exc: CodesiftError | apsw.Error) -> JsonRpcException:
    """The JSON-RPC error a handler's codesift (or SQLite) error becomes."""
    kind = error_kind(exc)
    if kind == "cancelled":
        return JsonRpcRequestCancelled(message="the request was cancelled")
    if kind == "bad_request":
        return JsonRpcInvalidParams(message=str(exc))
    return JsonRpcException(message=error_message(exc), code=CODESIFT_ERROR, data={"kind": kind})
