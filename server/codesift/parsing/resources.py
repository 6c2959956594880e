"""Resources: a table, a view, an endpoint or a schema as one searchable unit.

A resource is a node (kind "table", "view", "endpoint", "schema"...; its name
what a person calls it, `users` or `GET /users/{id}`) with `doc` chunks, so it
is searched like prose (stemmed full text, vectors) and shown with a name.
Like a markdown section, each chunk's text starts with the resource's title
and a blank line. The rest is either the file's own lines (SQL: the statement
and its comment, so snippets cite real lines) or a description built from a
structured document (OpenAPI, JSON Schema: summary, parameters, properties),
which is easier to search than the raw YAML or JSON; its chunks all span the
resource's lines. Like a definition, a resource also has an `ast` chunk (its
signature) and a `summary` chunk, so the symbol stream can return it when a
query names it.
"""

from __future__ import annotations

from collections.abc import Sequence

from codesift.parsing.chunks import summary_text
from codesift.parsing.model import ParsedChunk, ParsedFile, ParsedNode
from codesift.parsing.plaintext import MAX_CHUNK_CHARS, line_windows, window_chunks

__all__ = ["MAX_RESOURCE_LINES", "add_resource", "add_resource_text", "leftover_windows"]

MAX_RESOURCE_LINES = 80


def add_resource(
    parsed: ParsedFile,
    *,
    kind: str,
    name: str,
    qualified_name: str,
    start_line: int,
    end_line: int,
    signature: str = "",
    docstring: str = "",
    doc_start_line: int = 0,
) -> int:
    """Append a resource node (no parent) with its `ast` (signature) and
    `summary` chunks, as a definition has, and return its index. The summary is
    what the symbol stream returns for a name match (`invoices`)."""
    index = len(parsed.nodes)
    node = ParsedNode(
        index=index,
        kind=kind,
        name=name,
        qualified_name=qualified_name,
        parent=None,
        start_line=start_line,
        end_line=max(start_line, end_line),
        signature=signature,
        docstring=docstring,
        doc_start_line=doc_start_line if 0 < doc_start_line < start_line else 0,
    )
    parsed.nodes.append(node)
    parsed.chunks.append(ParsedChunk("ast", index, node.start_line, node.end_line, signature))
    summary = summary_text(qualified_name, kind, signature, docstring, None, [])
    parsed.chunks.append(ParsedChunk("summary", index, node.start_line, node.end_line, summary))
    return index


def add_resource_text(
    parsed: ParsedFile,
    node: int,
    title: str,
    lines: Sequence[str],
    first_line: int | None,
    *,
    tail: str = "",
    first_part: int = 0,
) -> int:
    """Doc chunks for resource `node`: `title`, a blank line, then `lines`.

    `first_line` is the file line of `lines[0]` when they are the file's own
    lines (chunks then span the lines they hold), None for a built description
    (every chunk spans the node). `tail` (a "Columns: ..." line) ends the first
    chunk. Long texts are split like markdown sections, the title repeated.
    Parts are numbered from `first_part`; returns the next part number.
    """
    header = title + "\n\n"
    budget = max(MAX_CHUNK_CHARS - len(header) - len(tail) - 1, MAX_CHUNK_CHARS // 2)
    spans = line_windows(lines, first_line or 1, MAX_RESOURCE_LINES, budget)
    span_node = parsed.nodes[node]
    part = first_part
    for k, span in enumerate(spans):
        text = header + span.text
        if tail and k == 0:
            text += "\n" + tail
        if first_line is None:
            start, end = span_node.code_start_line, span_node.end_line
        else:
            start, end = span.start_line, span.end_line
        parsed.chunks.append(
            ParsedChunk(
                layer="doc",
                node=node,
                start_line=start,
                end_line=end,
                text=text,
                part=part,
                title=title,
            )
        )
        part += 1
    if not spans and tail:
        parsed.chunks.append(
            ParsedChunk(
                layer="doc",
                node=node,
                start_line=span_node.code_start_line,
                end_line=span_node.end_line,
                text=header + tail,
                part=part,
                title=title,
            )
        )
        part += 1
    return part


def leftover_windows(
    parsed: ParsedFile,
    lines: Sequence[str],
    covered: Sequence[tuple[int, int]],
    path: str,
    window_lines: int,
) -> None:
    """Line-window `code` chunks (as for a file without a grammar) over the lines
    no resource covers; `covered` holds 1-based inclusive spans."""
    taken = [False] * (len(lines) + 2)
    for start, end in covered:
        for line in range(max(1, start), min(len(lines), end) + 1):
            taken[line] = True
    line = 1
    while line <= len(lines):
        if taken[line]:
            line += 1
            continue
        run_end = line
        while run_end + 1 <= len(lines) and not taken[run_end + 1]:
            run_end += 1
        parsed.chunks.extend(window_chunks(lines[line - 1 : run_end], line, path, window_lines))
        line = run_end + 1
