"""workspace/symbol and textDocument/documentSymbol.

workspace/symbol is the engine's symbol lookup (codesift.engine.symbols, the
same as `codesift symbols`): definitions named as typed first, then similar
names, then signatures matching the name's words. Over several folders the
exact matches come first (folder by folder), then the similar ones by score.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from codesift.engine import Symbol
from codesift.engine.live import Cancellation, FolderIndex
from codesift.engine.navigation import file_definitions
from codesift.engine.results import NodeRow
from codesift.lsp.navigation import (
    document_lines,
    node_location,
    node_range,
    selection_range,
    symbol_kind,
)
from codesift.lsp.params import invalid

if TYPE_CHECKING:
    from codesift.lsp.server import CodesiftServer

__all__ = ["MAX_SYMBOLS", "document_symbols", "workspace_symbols"]

MAX_SYMBOLS = 100


async def workspace_symbols(
    server: CodesiftServer, params: types.WorkspaceSymbolParams
) -> list[types.SymbolInformation]:
    query = params.query.strip()
    if not query:
        return []
    if len(query) > 500:
        raise invalid(f"the symbol query is {len(query)} characters long; the limit is 500")
    folders = server.folder_list()

    def run(cancel: Cancellation) -> list[types.SymbolInformation]:
        exact: list[tuple[FolderIndex, Symbol]] = []
        similar: list[tuple[FolderIndex, Symbol]] = []
        for folder in folders:
            if cancel.cancelled:
                break
            found = server.live.symbols(folder, query, MAX_SYMBOLS, cancel, history=False)
            exact.extend((folder, s) for s in found.exact)
            similar.extend((folder, s) for s in found.fuzzy)
        if len(folders) > 1:
            similar.sort(key=lambda item: -item[1].score)  # stable: each folder's order kept
        return [
            types.SymbolInformation(
                name=symbol.node.name,
                kind=symbol_kind(symbol.node.kind),
                location=node_location(folder, symbol.node),
                container_name=_container(symbol.node),
            )
            for folder, symbol in [*exact, *similar][:MAX_SYMBOLS]
        ]

    return await server.read(run)


def _container(node: NodeRow) -> str | None:
    qname = node.qualified_name
    if qname.endswith(node.name) and len(qname) > len(node.name):
        container = qname[: -len(node.name)].rstrip(".:#/\\")
        return container or None
    return None


async def document_symbols(
    server: CodesiftServer, params: types.DocumentSymbolParams
) -> list[types.DocumentSymbol]:
    uri = params.text_document.uri
    folder, rel = server.folder_for_uri(uri)

    def run(cancel: Cancellation) -> list[types.DocumentSymbol]:
        conn = server.live.open(folder)
        ids, nodes = file_definitions(conn, rel)
        if not nodes:
            return []
        lines = document_lines(server, uri, folder.root / rel)
        symbols: dict[int, types.DocumentSymbol] = {}
        top: list[types.DocumentSymbol] = []
        for node_id in ids:
            node = nodes.get(node_id)
            if node is None:
                continue
            if node.kind == "module" and node.parent_id is None and node.start_line <= 1:
                continue  # the file itself
            symbol = types.DocumentSymbol(
                name=node.name,
                kind=symbol_kind(node.kind),
                range=node_range(node, lines),
                selection_range=selection_range(node, lines),
                detail=node.signature[:200] or None,
                children=[],
            )
            symbols[node.id] = symbol
            parent = symbols.get(node.parent_id) if node.parent_id is not None else None
            if parent is not None:
                parent.children = [*(parent.children or []), symbol]
            else:
                top.append(symbol)
        return top

    return await server.read(run)
