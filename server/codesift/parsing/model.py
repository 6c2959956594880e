"""Plain records that parsing produces and the store writes.

A parsed file is a list of nodes (definitions), edges between them (or to names
that could not be resolved inside the file), and chunks of retrieval text.
Everything here is plain data: no database, no tree-sitter objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "CHUNK_LAYERS",
    "EDGE_KINDS",
    "EXTRACTION_VERSION",
    "NODE_KINDS",
    "CallSites",
    "ChunkLayer",
    "EdgeKind",
    "ParsedChunk",
    "ParsedEdge",
    "ParsedFile",
    "ParsedNode",
]

# The version of what parsing makes of a file (nodes, edges, chunks). Raise it when
# the same file parses into different rows (a new chunk, another summary text): an
# index made by another version parses every file again on its next run, even the
# unchanged ones.
EXTRACTION_VERSION = 15

EdgeKind = Literal["calls", "contains", "imports", "inherits", "references"]
EDGE_KINDS: tuple[EdgeKind, ...] = ("calls", "contains", "imports", "inherits", "references")

ChunkLayer = Literal["code", "ast", "summary", "doc"]
CHUNK_LAYERS: tuple[ChunkLayer, ...] = ("code", "ast", "summary", "doc")

# What a parse does with a file's call sites: resolve them into calls edges with
# their targets (an ordinary index run); make the edges with their names but no
# targets ("names"); or leave them out ("later"). The last two leave the file to the
# call pass (call_pass.py), which parses it again and writes its calls edges whole.
CallSites = Literal["resolve", "names", "later"]

NODE_KINDS: tuple[str, ...] = (
    "module",
    "namespace",
    "class",
    "struct",
    "interface",
    "trait",
    "enum",
    "union",
    "type",
    "function",
    "method",
    "constructor",
    "macro",
    "constant",
    "variable",
    "section",
    # Resources of document collections (parsing/resources.py): SQL DDL and API
    # descriptions, one node each.
    "table",
    "view",
    "endpoint",
    "schema",
)


@dataclass(frozen=True, slots=True)
class ParsedNode:
    """A definition. `index` is its position in `ParsedFile.nodes`; `parent` is
    the index of the enclosing node or None for the file's module node."""

    index: int
    kind: str
    name: str
    qualified_name: str
    parent: int | None
    start_line: int  # 1-based, inclusive
    end_line: int  # 1-based, inclusive
    signature: str
    docstring: str
    # First line of a doc comment written above the definition (0: none). The node's
    # code chunk starts there so the comment travels with the code it documents.
    doc_start_line: int = 0

    @property
    def code_start_line(self) -> int:
        return self.doc_start_line or self.start_line


@dataclass(frozen=True, slots=True)
class ParsedEdge:
    """An edge from node `src` (an index into `ParsedFile.nodes`).

    `dst` is the index of a node in the same file when the edge resolved
    locally; otherwise `dst_name` is the name as written (last component) and
    `dst_hint` a qualified name suggested by the file's imports, if any.
    """

    src: int
    kind: EdgeKind
    dst_name: str
    line: int
    dst: int | None = None
    dst_hint: str = ""
    # How `dst` was found in the file (see Confidence); "" while unresolved.
    confidence: str = ""


@dataclass(frozen=True, slots=True)
class ParsedChunk:
    """A unit of retrieval text. `node` indexes `ParsedFile.nodes` (None for
    line-window chunks of files without a grammar). `part` numbers the pieces of
    a node body that was split because it was too long."""

    layer: ChunkLayer
    node: int | None
    start_line: int
    end_line: int
    text: str
    part: int = 0
    title: str = ""  # heading path for doc chunks, file path for text windows


@dataclass(slots=True)
class ParsedFile:
    language: str
    nodes: list[ParsedNode] = field(default_factory=list)
    edges: list[ParsedEdge] = field(default_factory=list)
    chunks: list[ParsedChunk] = field(default_factory=list)
    errors: int = 0  # tree-sitter ERROR/MISSING nodes seen; the file is still indexed
    # Parsed without resolving its calls (CallSites "names" or "later"): the call
    # pass (call_pass.py) writes its calls edges.
    calls_pending: bool = False
