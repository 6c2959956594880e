"""A parsed file as the plain rows the writer inserts.

Building rows (chunk text compression, hashes, identifier-split full-text
bodies) is CPU work that a bulk build does in worker processes; the writer then
only allocates ids and inserts. Rows are tuples of strings and integers on
purpose: they pickle about six times faster than the parsing dataclasses, and
the writer process unpickles every one of them.

Node and chunk references inside a file are positions in its own lists; the
writer turns them into database ids.
"""

from __future__ import annotations

import hashlib
import zlib
from dataclasses import dataclass, field

from codesift.parsing.model import ParsedFile
from codesift.tokens import code_index_text

__all__ = [
    "FTS_AST",
    "FTS_CODE",
    "FTS_DOC",
    "FTS_NONE",
    "ChunkRow",
    "EdgeRow",
    "FileMeta",
    "FileRows",
    "NodeRow",
    "edge_rows",
    "file_rows",
    "pack_text",
    "text_hash",
    "unpack_text",
]

# Chunk texts longer than this are stored zlib-compressed (about 2.4x smaller).
COMPRESS_ABOVE = 160

# Which full-text table a chunk goes to.
FTS_NONE, FTS_CODE, FTS_DOC, FTS_AST = 0, 1, 2, 3

# (kind, name, qualified_name, parent position or -1, start_line, end_line, signature,
#  docstring)
NodeRow = tuple[str, str, str, int, int, int, str, str]
# (source position, kind, local target position or -1, dst_name, dst_hint, line,
#  how a local target was found: scope, type or guess); `contains` edges are not
# rows: they are nodes.parent_id.
EdgeRow = tuple[int, str, int, str, str, int, str]
# (node position or -1, layer, part, start_line, end_line, title, stored text (None for
#  ast and summary, rebuilt from the node on read), text hash, FTS_*, full-text body)
ChunkRow = tuple[int, str, int, int, int, str, "str | bytes | None", int, int, str]


def pack_text(text: str) -> str | bytes:
    if len(text) <= COMPRESS_ABOVE:
        return text
    return zlib.compress(text.encode("utf-8"), 1)


def unpack_text(value: str | bytes) -> str:
    if isinstance(value, bytes):
        return zlib.decompress(value).decode("utf-8")
    return value


def text_hash(text: str) -> int:
    """A signed 64-bit hash of a chunk's text (fits an SQLite integer)."""
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


@dataclass(frozen=True, slots=True)
class FileMeta:
    path: str
    size: int
    mtime_ns: int
    content_hash: str
    language: str
    line_count: int
    invalid_utf8: bool = False
    # Its header says a tool generated it (parsing/generated.py).
    generated: bool = False


@dataclass(frozen=True, slots=True)
class FileRows:
    errors: int  # tree-sitter ERROR/MISSING nodes seen while parsing
    nodes: list[NodeRow]
    edges: list[EdgeRow]
    chunks: list[ChunkRow]
    # The calls edges have no targets yet (ParsedFile.calls_pending).
    calls_pending: bool = False
    # (position in `chunks`, token ids: embedding/texts.py EmbeddingIds) of the
    # chunks whose vectors the writer's process computes with the rows
    # (embedding/row_vectors.py)...
    embedding_ids: list[tuple[int, bytes]] = field(default_factory=list)
    # ... and then the model that made them and (position, int8 vector bytes).
    vector_model: str = ""
    vectors: list[tuple[int, bytes]] = field(default_factory=list)


def edge_rows(parsed: ParsedFile, only: str | None = None) -> list[EdgeRow]:
    """The edges as rows, or those of kind `only` (`contains` edges are no rows:
    they are nodes.parent_id)."""
    return [
        (
            e.src,
            e.kind,
            -1 if e.dst is None else e.dst,
            e.dst_name,
            e.dst_hint,
            e.line,
            e.confidence,
        )
        for e in parsed.edges
        if e.kind != "contains" and (only is None or e.kind == only)
    ]


def file_rows(parsed: ParsedFile) -> FileRows:
    nodes: list[NodeRow] = [
        (
            n.kind,
            n.name,
            n.qualified_name,
            -1 if n.parent is None else n.parent,
            n.start_line,
            n.end_line,
            n.signature,
            n.docstring,
        )
        for n in parsed.nodes
    ]
    edges = edge_rows(parsed)
    chunks: list[ChunkRow] = []
    for chunk in parsed.chunks:
        node = -1 if chunk.node is None else chunk.node
        head = (node, chunk.layer, chunk.part, chunk.start_line, chunk.end_line, chunk.title)
        digest = text_hash(chunk.text)
        if chunk.layer == "doc":
            chunks.append((*head, pack_text(chunk.text), digest, FTS_DOC, chunk.text))
        elif chunk.layer == "code":
            body = chunk.text
            if chunk.node is not None and chunk.part == 0:
                # A doc comment kept outside the chunk's lines is indexed with them.
                doc = parsed.nodes[chunk.node].docstring
                if doc and doc[:60] not in body:
                    body = f"{body}\n{doc}"
            chunks.append((*head, pack_text(chunk.text), digest, FTS_CODE, code_index_text(body)))
        elif chunk.layer == "ast":
            chunks.append((*head, None, digest, FTS_AST, code_index_text(chunk.text)))
        else:
            # summary chunks are for the vector stream; their words are in the code chunk
            chunks.append((*head, None, digest, FTS_NONE, ""))
    return FileRows(parsed.errors, nodes, edges, chunks, parsed.calls_pending)
