"""The language server's JSON-RPC protocol: pygls's, adjusted.

Custom `codesift/*` requests get their params as plain JSON objects (`[]`, an
empty Lua table from Neovim, counts as no params); a request whose params do not
fit its LSP type gets an InvalidParams error instead of being dropped unanswered;
a message that is not JSON gets a ParseError reply and one that is not a JSON-RPC
message an InvalidRequest reply (id null when it has none), instead of a popup; a
didChange for a document that was never opened is logged and ignored.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any
from urllib.parse import unquote

import attrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage
from pygls.protocol.language_server import lsp_method

__all__ = [
    "CLIENT_ERROR_CODES",
    "CUSTOM_PREFIX",
    "INVALID_REQUEST",
    "PARSE_ERROR",
    "CodesiftProtocol",
]

log = logging.getLogger(__name__)

# codesift's own requests: their params arrive as plain JSON objects.
CUSTOM_PREFIX = "codesift/"

# JSON-RPC error codes for messages that cannot be handled at all.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
# The codes of a request refused for the client's own mistake (or cancelled).
CLIENT_ERROR_CODES = frozenset({PARSE_ERROR, INVALID_REQUEST, -32601, -32602, -32800})


@attrs.define
class _InvalidRequest:
    """A request whose params could not be read: answered with InvalidParams."""

    id: int | str
    method: str
    jsonrpc: str
    error: str


@attrs.define
class _NotAMessage:
    """JSON that is not a JSON-RPC 2.0 message: answered with InvalidRequest."""

    id: int | str | None
    error: str


@attrs.define
class _BadNotification:
    """A notification whose params could not be read: logged (never answered)."""

    method: str
    error: str


def _message_problem(data: dict[str, Any]) -> str | None:
    """What makes `data` not a JSON-RPC 2.0 message, or None."""
    if data.get("jsonrpc") != "2.0":
        return 'a JSON-RPC message needs "jsonrpc": "2.0"'
    if "id" in data and not _valid_id(data["id"]):
        return "the id must be a string, an integer or null"
    if "method" in data:
        if not isinstance(data["method"], str):
            return "the method must be a string"
        # params that are not an object are the handler's to report (InvalidParams)
    elif "id" not in data or not ("result" in data or "error" in data):
        return "a JSON-RPC message needs a method (or an id with a result or an error)"
    return None


def _valid_id(value: Any) -> bool:
    return value is None or (isinstance(value, int | str) and not isinstance(value, bool))


def _reply_id(data: Any) -> int | str | None:
    """The id to answer an invalid message with: its own when readable, else null."""
    if isinstance(data, dict):
        value = data.get("id")
        if _valid_id(value):
            return value
    return None


class CodesiftProtocol(LanguageServerProtocol):
    def structure_message(self, data: dict[str, Any]) -> Any:
        # Called by json.loads for every object, nested ones too: only objects that
        # say "jsonrpc" are taken for messages.
        if "jsonrpc" not in data:
            return data
        problem = _message_problem(data)
        if problem is not None:
            return _NotAMessage(id=_reply_id(data), error=problem)
        method = data.get("method")
        if isinstance(method, str) and method.startswith(CUSTOM_PREFIX):
            # Plain JSON objects: the handlers check them and say what is wrong.
            params = data.get("params")
            if params == []:  # Neovim sends an empty Lua table `{}` as []
                params = None
            if "id" in data:
                return JsonRPCRequestMessage(
                    id=data["id"], method=method, jsonrpc=data["jsonrpc"], params=params
                )
            return JsonRPCNotification(method=method, jsonrpc=data["jsonrpc"], params=params)
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            cause = exc.__cause__
            detail = _describe_structure_error(cause) if cause is not None else str(exc)
            if not isinstance(method, str):
                return _NotAMessage(id=_reply_id(data), error=f"unreadable message: {detail}")
            if "id" in data:
                return _InvalidRequest(
                    id=data["id"],
                    method=method,
                    jsonrpc=data["jsonrpc"],
                    error=f"invalid params for {method}: {detail}",
                )
            return _BadNotification(method=method, error=detail)

    def handle_message(self, message: Any) -> None:
        if isinstance(message, _InvalidRequest):
            error = JsonRpcInvalidParams(message=message.error)
            log.info("answered %s with error %d: %s", message.method, error.code, error.message)
            self._send_response(message.id, None, error.to_response_error())
            return
        if isinstance(message, _BadNotification):
            log.info("ignored %s with invalid params: %s", message.method, message.error)
            return
        if isinstance(message, _NotAMessage):
            self.reply_error(message.id, INVALID_REQUEST, f"invalid request: {message.error}")
            return
        if not hasattr(message, "jsonrpc"):  # an array, a number, an object without "jsonrpc"
            kind = "an array" if isinstance(message, list) else type(message).__name__
            if isinstance(message, dict):
                kind = 'an object without "jsonrpc": "2.0"'
            self.reply_error(
                _reply_id(message), INVALID_REQUEST, f"invalid request: got {kind}, not a message"
            )
            return
        super().handle_message(message)

    def _send_handler_result(self, future: Future[Any], *, msg_id: int | str) -> None:
        """A handler's answer. One that refused the request with a JSON-RPC error
        (bad params: the client's mistake; a damaged or busy index: the user's to
        fix) is one log line, INFO for a client's mistake: pygls would log it with
        a traceback and report it again as an error outside any request."""
        error = None if future.cancelled() else future.exception()
        if not isinstance(error, JsonRpcException):
            super()._send_handler_result(future, msg_id=msg_id)  # a bug: logged in full
            return
        self._request_futures.pop(msg_id, None)
        level = logging.INFO if error.code in CLIENT_ERROR_CODES else logging.WARNING
        log.log(level, "answered request %s with error %d: %s", msg_id, error.code, error.message)
        self._send_response(msg_id, error=error.to_response_error())

    def reply_error(self, msg_id: int | str | None, code: int, message: str) -> None:
        """An error response written as plain JSON (its id may be null)."""
        log.info("answered with error %d: %s", code, message)
        error = {"code": code, "message": message}
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": error})

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(
        self, params: types.DidChangeTextDocumentParams
    ) -> Iterator[Any]:
        """Changes to a document the client never opened are ignored (and logged)."""
        uri = params.text_document.uri
        if unquote(uri) not in self.workspace.text_documents:
            log.info("didChange for %s, which was never opened: ignored", uri)
            return
        yield from super().lsp_text_document__did_change(params)


def _describe_structure_error(exc: BaseException) -> str:
    """The first leaf of a cattrs validation error as a path and a problem, e.g.
    "params.position: missing" or "params.position.line: invalid literal ..."."""
    found: list[str] = []

    def walk(error: BaseException, path: list[str]) -> None:
        subs = getattr(error, "exceptions", None)
        if subs:
            for sub in subs:
                attribute = ""
                for note in getattr(sub, "__notes__", None) or []:
                    if "@ attribute " in str(note):
                        attribute = str(note).rsplit("@ attribute ", 1)[1].strip()
                walk(sub, [*path, attribute] if attribute else path)
            return
        where = ".".join(path) or "params"
        if isinstance(error, KeyError):
            found.append(f"{where}: required field is missing")
        else:
            found.append(f"{where}: {error}")

    walk(exc, [])
    return found[0] if found else str(exc)
