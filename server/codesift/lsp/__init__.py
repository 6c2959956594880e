"""The codesift language server: `codesift serve`.

Modules, one per LSP area:
  server.py     the server object, its protocol, folders, progress to the client
  lifecycle.py  initialize, workspace folders, configuration, saves and file events
  search.py     codesift/search (an unscoped one over several folders routes first)
  route.py      codesift/route
  graph.py      codesift/graph and the call hierarchy
  status.py     codesift/status and codesift/reindex
  symbols.py    workspace/symbol and textDocument/documentSymbol
  hover.py      textDocument/hover and textDocument/definition
  options.py    initializationOptions / didChangeConfiguration
  params.py     checking request parameters
  navigation.py positions -> nodes -> locations

Each workspace folder is the engine's live index (codesift/engine/live.py:
writer thread, watcher, reader connections), read through its `LiveReader`;
errors are mapped by errors.py (the kinds of codesift/errors.py).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from codesift.engine.exit_deadline import (
    EXIT_GRACE_SECONDS,
    end_without_stuck_threads,
    stop_on_signals,
)
from codesift.lsp import graph, hover, lifecycle, route, search, status, symbols
from codesift.lsp.server import INDEX_STATUS, CodesiftServer, bind

if TYPE_CHECKING:
    from codesift.local_socket_server import CliSocketStarter

__all__ = ["INDEX_STATUS", "CodesiftServer", "create_server", "serve"]


def _sync(
    server: CodesiftServer, handler: Callable[[CodesiftServer, Any], Any]
) -> Callable[[Any], Any]:
    def handle(params: Any) -> Any:
        return handler(server, params)

    handle.__name__ = getattr(handler, "__name__", "handler")
    return handle


def create_server(cli_socket: CliSocketStarter | None = None) -> CodesiftServer:
    """The server with its handlers; `cli_socket` answers the CLI on each folder's
    local socket (None: no socket)."""
    server = CodesiftServer(cli_socket)
    notifications: list[tuple[str, Callable[[CodesiftServer, Any], Any]]] = [
        (types.INITIALIZE, lifecycle.initialize),
        (types.INITIALIZED, lifecycle.initialized),
        (types.SHUTDOWN, lifecycle.shutdown),
        (types.EXIT, lifecycle.shutdown),
        (types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS, lifecycle.did_change_workspace_folders),
        (types.WORKSPACE_DID_CHANGE_CONFIGURATION, lifecycle.did_change_configuration),
        (types.TEXT_DOCUMENT_DID_SAVE, lifecycle.did_save),
        (types.WORKSPACE_DID_CHANGE_WATCHED_FILES, lifecycle.did_change_watched_files),
    ]
    for method, handler in notifications:
        server.feature(method)(_sync(server, handler))
    requests: list[tuple[str, Callable[[CodesiftServer, Any], Any], Any]] = [
        (search.SEARCH, search.search, None),
        (route.ROUTE, route.route, None),
        (graph.GRAPH, graph.graph, None),
        (status.STATUS, status.status, None),
        (status.REINDEX, status.reindex, None),
        (types.WORKSPACE_SYMBOL, symbols.workspace_symbols, None),
        (types.TEXT_DOCUMENT_DOCUMENT_SYMBOL, symbols.document_symbols, None),
        (types.TEXT_DOCUMENT_HOVER, hover.hover, None),
        (types.TEXT_DOCUMENT_DEFINITION, hover.definition, None),
        (types.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY, graph.prepare_call_hierarchy, None),
        (types.CALL_HIERARCHY_INCOMING_CALLS, graph.incoming_calls, None),
        (types.CALL_HIERARCHY_OUTGOING_CALLS, graph.outgoing_calls, None),
    ]
    for method, handler, options in requests:
        server.feature(method, options)(bind(server, handler))
    return server


# After the event loop ends, the process gets this long to finish its exit (the
# interpreter waits for its threads); then it ends without them.


log = logging.getLogger(__name__)


class _OneLineRecords(logging.Filter):
    """pygls logs a traceback for a message it cannot handle (such as one that is
    not JSON); codesift answers those itself, so one line is enough."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: leave it to the handler
            return True
        if record.exc_info or "Traceback" in message:
            record.msg = message.split("\n", 1)[0]
            record.args = ()
            record.exc_info = None
            record.exc_text = None
        return True


def _quiet_pygls() -> None:
    one_line = _OneLineRecords()
    names = [n for n in logging.root.manager.loggerDict if n == "pygls" or n.startswith("pygls.")]
    for name in {"pygls", "pygls.protocol", "pygls.server", "pygls.feature_manager", *names}:
        logger = logging.getLogger(name)
        logger.setLevel(logging.WARNING)
        logger.addFilter(one_line)


def serve(
    *, tcp: tuple[str, int] | None = None, cli_socket: CliSocketStarter | None = None
) -> None:
    """Run the server on stdio (or TCP) until the client says exit. The process
    is meant to end after this returns: it ends at most EXIT_GRACE_SECONDS later.
    `cli_socket` (the CLI's) answers `codesift search` & co. on each folder's local
    socket. TCP on an address that is not loopback is refused (ConfigError): the
    language server has no authentication (codesift/serving/listen.py)."""
    if tcp is not None:
        from codesift.serving.listen import check_listen

        check_listen(
            tcp[0], False, "codesift serve --tcp", "the language server has no authentication"
        )
    _quiet_pygls()
    server = create_server(cli_socket)
    stop_on_signals(server.shutdown_folders)  # their sockets are removed first
    try:
        if tcp is not None:
            server.start_tcp(*tcp)
        else:
            server.start_io()
    finally:
        if not server.stopped:
            server.shutdown_folders()
        end_without_stuck_threads(EXIT_GRACE_SECONDS)
