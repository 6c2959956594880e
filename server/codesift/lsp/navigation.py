"""From document positions to nodes, and from nodes to LSP locations.

Node ids are 63-bit integers; they travel to clients as strings, because
JavaScript numbers lose precision above 2**53.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import apsw
from lsprotocol import types

from codesift.engine.navigation import definitions_at
from codesift.engine.results import NodeRow

if TYPE_CHECKING:
    from codesift.engine.live import FolderIndex
    from codesift.lsp.server import CodesiftServer

from codesift.lsp.params import invalid

__all__ = [
    "SYMBOL_KINDS",
    "Resolved",
    "node_location",
    "node_range",
    "read_lines",
    "resolve_position",
    "selection_range",
    "word_at",
]

_WORD = re.compile(r"[A-Za-z_$][\w$]*")

SYMBOL_KINDS: dict[str, types.SymbolKind] = {
    "function": types.SymbolKind.Function,
    "method": types.SymbolKind.Method,
    "constructor": types.SymbolKind.Constructor,
    "class": types.SymbolKind.Class,
    "struct": types.SymbolKind.Struct,
    "interface": types.SymbolKind.Interface,
    "trait": types.SymbolKind.Interface,
    "protocol": types.SymbolKind.Interface,
    "enum": types.SymbolKind.Enum,
    "module": types.SymbolKind.Module,
    "namespace": types.SymbolKind.Namespace,
    "package": types.SymbolKind.Package,
    "type": types.SymbolKind.TypeParameter,
    "typedef": types.SymbolKind.TypeParameter,
    "type_alias": types.SymbolKind.TypeParameter,
    "macro": types.SymbolKind.Function,
    "constant": types.SymbolKind.Constant,
    "variable": types.SymbolKind.Variable,
    "field": types.SymbolKind.Field,
    "property": types.SymbolKind.Property,
    "impl": types.SymbolKind.Class,
    "object": types.SymbolKind.Object,
    "section": types.SymbolKind.String,
}


def symbol_kind(kind: str) -> types.SymbolKind:
    return SYMBOL_KINDS.get(kind, types.SymbolKind.Function)


def read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def node_range(node: NodeRow, lines: list[str] | None = None) -> types.Range:
    end_line = max(node.end_line - 1, node.start_line - 1)
    end_char = len(lines[end_line]) if lines is not None and end_line < len(lines) else 0
    if lines is None:  # whole lines: up to the start of the next line
        return types.Range(
            start=types.Position(line=node.start_line - 1, character=0),
            end=types.Position(line=end_line + 1, character=0),
        )
    return types.Range(
        start=types.Position(line=node.start_line - 1, character=0),
        end=types.Position(line=end_line, character=end_char),
    )


def selection_range(node: NodeRow, lines: list[str] | None) -> types.Range:
    """The node's name on its first lines (where the definition says it)."""
    if lines:
        for offset in range(0, 6):
            index = node.start_line - 1 + offset
            if index >= len(lines) or index > node.end_line - 1:
                break
            match = re.search(rf"(?<![\w$]){re.escape(node.name)}(?![\w$])", lines[index])
            if match:
                return types.Range(
                    start=types.Position(line=index, character=match.start()),
                    end=types.Position(line=index, character=match.end()),
                )
    start = types.Position(line=node.start_line - 1, character=0)
    return types.Range(start=start, end=start)


def node_location(folder: FolderIndex, node: NodeRow) -> types.Location:
    from codesift.lsp.server import path_to_uri

    return types.Location(uri=path_to_uri(folder.root / node.path), range=node_range(node))


def word_at(lines: list[str], position: types.Position, uri: str) -> str:
    """The identifier at `position` (UTF-16 columns); errors past the end of the file."""
    if position.line < 0 or position.line >= len(lines):
        raise invalid(
            f"position line {position.line} is past the end of {uri} ({len(lines)} lines)"
        )
    line = lines[position.line]
    utf16_len = len(line.encode("utf-16-le")) // 2
    if position.character < 0 or position.character > utf16_len:
        raise invalid(
            f"position character {position.character} is past the end of line {position.line}"
            f" of {uri} ({utf16_len} characters)"
        )
    # UTF-16 column -> code point index
    units = 0
    column = len(line)
    for index, char in enumerate(line):
        if units >= position.character:
            column = index
            break
        units += 2 if ord(char) > 0xFFFF else 1
    for match in _WORD.finditer(line):
        if match.start() <= column <= match.end():
            return match.group()
    return ""


@dataclass(frozen=True, slots=True)
class Resolved:
    word: str
    nodes: list[NodeRow]  # best first; empty when nothing matches
    defined_here: bool  # the position is on the definition itself


def document_lines(server: CodesiftServer, uri: str, path: Path) -> list[str]:
    """An open document's current text, else the file on disk."""
    document = server.workspace.text_documents.get(uri)
    if document is not None:
        return list(document.source.splitlines())
    if not path.is_file():
        raise invalid(f"{uri} does not exist")
    return read_lines(path)


def resolve_in_document(
    server: CodesiftServer, folder: FolderIndex, rel: str, uri: str, position: types.Position
) -> tuple[apsw.Connection, Resolved]:
    """For a reader thread: this thread's connection to the folder's index, and the
    definitions meant at `position` of the document (open text, else the file)."""
    conn = server.live.open(folder)
    lines = document_lines(server, uri, folder.root / rel)
    return conn, resolve_position(conn, rel, lines, position, uri)


def resolve_position(
    conn: apsw.Connection, rel: str, lines: list[str], position: types.Position, uri: str
) -> Resolved:
    """The definitions meant by the identifier at `position` in file `rel`.

    1. the identifier names a definition that starts on this line: that one;
    2. a call from the innermost definition around the position to that name,
       resolved by the indexer: its target;
    3. definitions with that name: this file's first, then the rest.
    """
    word = word_at(lines, position, uri)
    if not word:
        return Resolved("", [], False)
    nodes, defined_here = definitions_at(conn, rel, position.line + 1, word)
    return Resolved(word, nodes, defined_here)
