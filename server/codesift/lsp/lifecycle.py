"""Initialisation, configuration, workspace folders, and change notifications."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from codesift.lsp.options import parse_options

if TYPE_CHECKING:
    from codesift.lsp.server import CodesiftServer

__all__ = [
    "did_change_configuration",
    "did_change_watched_files",
    "did_change_workspace_folders",
    "did_save",
    "initialize",
    "initialized",
    "shutdown",
]

log = logging.getLogger(__name__)


def initialize(server: CodesiftServer, params: types.InitializeParams) -> None:
    server.loop = asyncio.get_event_loop()
    window = params.capabilities.window
    server.client_progress = bool(window and window.work_done_progress)
    options, problems = parse_options(params.initialization_options)
    server.options = options
    for problem in problems:
        server.show_message(f"codesift: {problem}")


def initialized(server: CodesiftServer, params: types.InitializedParams) -> None:
    """Index every workspace folder (the root URI when the client sends no folders)."""
    workspace = server.workspace
    folders = list(workspace.folders.values())
    if folders:
        for folder in folders:
            server.add_folder(folder.uri, folder.name)
    elif workspace.root_uri:
        server.add_folder(workspace.root_uri, "")


def did_change_workspace_folders(
    server: CodesiftServer, params: types.DidChangeWorkspaceFoldersParams
) -> None:
    for removed in params.event.removed:
        server.remove_folder(removed.uri)
    for added in params.event.added:
        server.add_folder(added.uri, added.name)


def did_change_configuration(
    server: CodesiftServer, params: types.DidChangeConfigurationParams
) -> None:
    settings: Any = params.settings
    if settings is None:
        return
    options, problems = parse_options(settings)
    for problem in problems:
        server.show_message(f"codesift: {problem}")
    server.apply_options(options)


def did_save(server: CodesiftServer, params: types.DidSaveTextDocumentParams) -> None:
    """A save is indexed at once (no quiet period): the editor says it is complete."""
    _changed(server, [params.text_document.uri])


def did_change_watched_files(
    server: CodesiftServer, params: types.DidChangeWatchedFilesParams
) -> None:
    _changed(server, [change.uri for change in params.changes])


def _changed(server: CodesiftServer, uris: list[str]) -> None:
    by_folder: dict[str, tuple[Any, list[str]]] = {}
    for uri in uris:
        try:
            folder, rel = server.folder_for_uri(uri)
        except Exception:  # outside every folder: not ours to index
            continue
        if not rel:
            continue
        by_folder.setdefault(folder.uri, (folder, []))[1].append(rel)
    for folder, paths in by_folder.values():
        folder.add_paths(paths)


def shutdown(server: CodesiftServer, params: Any) -> None:
    """Stop every folder's background work (bounded: see `shutdown_folders`);
    never fails, so that the client's shutdown and exit always go through."""
    try:
        server.shutdown_folders()
    except Exception as exc:
        log.warning("stopping the folders failed: %s", exc)
