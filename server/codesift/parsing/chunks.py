"""Build retrieval chunks from a file's nodes.

Per node (other than the file's module node):
  code     the node's own lines. A container's nested definitions are elided to
           one stub line each, so every source line lives in exactly one code
           chunk and a class chunk reads as an outline. Long bodies are split into
           parts that each repeat the node's header line.
  ast      the signature alone (for signature-shaped queries).
  summary  a deterministic description: qualified name, kind, signature, first
           docstring sentence, parent and the names it calls.
Per file: `code` chunks for module-level lines outside every node, one per
contiguous run of lines, and, when the file describes itself (a Python module
docstring, else the first comment block at its top that is not a licence), one
`summary` of the file as a whole: its module name or path and that description's
first sentence, so that a question about a file as a whole ("the writer of the tar
format") has a chunk that answers it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import accumulate

from codesift.parsing.model import ParsedChunk, ParsedFile, ParsedNode

__all__ = ["build_chunks", "call_summaries", "first_sentence", "summary_text"]

# A sentence ends at ". ", a blank line, or a line that opens a block tag (Javadoc,
# KDoc, JSDoc, PHPDoc: `@param`, `@author`, `@since`): "Single instance holder" and
# not "Single instance holder @author A. Person".
_SENTENCE_END = re.compile(r"(?<=[.!?])\s|\n\s*\n|\n[\s*]*@[A-Za-z]")
MAX_SUMMARY_CALLS = 16


def first_sentence(doc: str) -> str:
    doc = doc.strip()
    if not doc:
        return ""
    match = _SENTENCE_END.search(doc)
    sentence = doc[: match.start()] if match else doc
    return " ".join(sentence.split())[:300]


def _split_runs(
    numbered: list[tuple[int, str]], max_lines: int, max_chars: int
) -> Iterator[list[tuple[int, str]]]:
    """Cut a list of (line_no, text) into pieces within the line and char budgets."""
    piece: list[tuple[int, str]] = []
    size = 0
    for item in numbered:
        line_len = len(item[1]) + 1
        if piece and (len(piece) >= max_lines or size + line_len > max_chars):
            yield piece
            piece, size = [], 0
        if line_len > max_chars:
            # One enormous line: keep its head; the rest is unsearchable noise anyway.
            item = (item[0], item[1][: max_chars - 1])
            line_len = max_chars
        piece.append(item)
        size += line_len
    if piece:
        yield piece


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def build_chunks(
    parsed: ParsedFile, lines: list[str], max_lines: int = 80, max_chars: int = 4000
) -> list[ParsedChunk]:
    """Return code, ast and summary chunks for `parsed` (whose nodes are set).

    `lines` are the file's lines without newline characters.
    """
    nodes = parsed.nodes
    children = _children_by_parent(nodes)
    calls_by_node = _calls_by_node(parsed)
    chunks: list[ParsedChunk] = []
    total = len(lines)
    offsets = _line_offsets(lines)
    for node in nodes:
        kids = sorted(children.get(node.index, ()), key=lambda n: n.code_start_line)
        if node.index == 0:
            own = _own_lines(lines, kids, 1, total, stubs=False)
            chunks.extend(_module_chunks(own, max_lines, max_chars))
            if _has_summary(node):
                text = _summary_text(node, nodes, calls_by_node.get(0, []))
                chunks.append(ParsedChunk("summary", 0, 1, node.end_line, text))
            continue
        start = node.code_start_line
        end = min(node.end_line, total)
        # (The span's characters with its newlines, one a line.)
        span_chars = offsets[end] - offsets[start - 1] + end - start + 1
        if not kids and end - start < max_lines and span_chars <= max_chars:
            # The common case: a leaf definition that fits in one chunk.
            body = "\n".join(lines[start - 1 : end])
            if body.strip():
                chunks.append(ParsedChunk("code", node.index, start, node.end_line, body, 0))
        else:
            own = _own_lines(lines, kids, start, end, stubs=True)
            _add_code_parts(chunks, node, own, start, max_lines, max_chars)
        _add_signature_chunks(chunks, node, nodes, calls_by_node)
    return chunks


def _has_summary(node: ParsedNode) -> bool:
    """Every definition has a summary chunk; the module (index 0) only when the
    file describes itself."""
    return node.index != 0 or bool(first_sentence(node.docstring))


def call_summaries(parsed: ParsedFile) -> list[tuple[int, str]]:
    """(node index, summary text) of each summary chunk that names calls: the texts
    a parse that left the call sites out (model.CallSites "later") wrote without
    them, which the call pass puts right."""
    nodes = parsed.nodes
    return [
        (index, _summary_text(nodes[index], nodes, calls))
        for index, calls in sorted(_calls_by_node(parsed).items())
        if calls and _has_summary(nodes[index])
    ]


def _children_by_parent(nodes: list[ParsedNode]) -> dict[int, list[ParsedNode]]:
    """Each node's direct children; the module's (index 0) are the outermost
    definitions by span, whatever their parent: a Go method (parent: its receiver
    type) or a Rust `impl` method lies outside its type's lines and must not stay
    in the module-level chunks too."""
    children: dict[int, list[ParsedNode]] = {}
    for node in nodes[1:]:
        if node.parent is not None:
            children.setdefault(node.parent, []).append(node)
    outermost: list[ParsedNode] = []
    for node in sorted(nodes[1:], key=lambda n: (n.code_start_line, -n.end_line)):
        if outermost and node.code_start_line <= outermost[-1].end_line:
            continue
        outermost.append(node)
    children[0] = outermost
    return children


def _calls_by_node(parsed: ParsedFile) -> dict[int, list[str]]:
    """Each called name once, at its first call, in (line, name) order: the order
    in which the store reads the edges back (store/reader.py rebuilds summaries)."""
    first_call: dict[int, dict[str, int]] = {}
    for edge in parsed.edges:
        if edge.kind == "calls":
            first_call.setdefault(edge.src, {}).setdefault(edge.dst_name, edge.line)
    return {
        src: sorted(lines, key=lambda name: (lines[name], name))
        for src, lines in first_call.items()
    }


def _line_offsets(lines: list[str]) -> list[int]:
    """offsets[i] = characters (without newlines) before line i+1: spans cost O(1) to
    measure. (accumulate keeps the loop over a file's lines in C.)"""
    return list(accumulate(map(len, lines), initial=0))


def _own_lines(
    lines: list[str], kids: list[ParsedNode], start: int, end: int, stubs: bool
) -> list[tuple[int, str]]:
    """The (line_no, text) of lines `start..end` outside the nested definitions
    `kids` (sorted by start); with `stubs`, each kid inside the span leaves one
    stub line, its signature."""
    total = len(lines)
    own: list[tuple[int, str]] = []
    line_no = start
    for kid in kids:
        kid_start = kid.code_start_line
        if kid_start < line_no:
            continue  # overlapping spans (odd grammars): keep the first
        own.extend((n, lines[n - 1]) for n in range(line_no, min(kid_start, end + 1)))
        if stubs and kid_start <= end:
            stub_src = lines[kid.start_line - 1] if kid.start_line <= total else ""
            own.append((kid_start, f"{_indent_of(stub_src)}{kid.signature} …"))
        line_no = max(line_no, kid.end_line + 1)
    own.extend((n, lines[n - 1]) for n in range(line_no, end + 1))
    return own


def _add_code_parts(
    chunks: list[ParsedChunk],
    node: ParsedNode,
    own: list[tuple[int, str]],
    start: int,
    max_lines: int,
    max_chars: int,
) -> None:
    """The code chunks of a node that has children or does not fit in one: its
    own lines cut into parts, each after the first headed by the signature."""
    header = node.signature
    # A long doc comment must not fill the first part on its own: that part (the
    # one that answers for the definition) keeps the comment's last lines and the
    # header; the rest of the comment becomes the last part.
    doc_head: list[tuple[int, str]] = []
    keep_doc = max_lines // 4
    if node.start_line - start > keep_doc:
        cut = node.start_line - keep_doc
        doc_head = [item for item in own if item[0] < cut]
        own = [item for item in own if item[0] >= cut]
    pieces = [
        *_split_runs(own, max_lines, max_chars),
        *_split_runs(doc_head, max_lines, max_chars),
    ]
    for part, piece in enumerate(pieces):
        body = "\n".join(text for _, text in piece)
        if not body.strip():
            continue
        if part > 0:
            body = f"{header} …(part {part + 1})\n{body}"
        chunks.append(
            ParsedChunk(
                layer="code",
                node=node.index,
                start_line=piece[0][0] if part > 0 or doc_head else start,
                end_line=piece[-1][0],
                text=body,
                part=part,
            )
        )
    if not doc_head and chunks and chunks[-1].node == node.index and chunks[-1].part == 0:
        # A single-part body covers the node's whole span.
        last = chunks[-1]
        chunks[-1] = ParsedChunk(last.layer, last.node, start, node.end_line, last.text, 0)


def _add_signature_chunks(
    chunks: list[ParsedChunk],
    node: ParsedNode,
    nodes: list[ParsedNode],
    calls_by_node: dict[int, list[str]],
) -> None:
    chunks.append(ParsedChunk("ast", node.index, node.start_line, node.end_line, node.signature))
    chunks.append(
        ParsedChunk(
            "summary",
            node.index,
            node.start_line,
            node.end_line,
            _summary_text(node, nodes, calls_by_node.get(node.index, [])),
        )
    )


def _module_chunks(
    own: list[tuple[int, str]], max_lines: int, max_chars: int
) -> Iterator[ParsedChunk]:
    run: list[tuple[int, str]] = []
    part = 0

    def flush(run: list[tuple[int, str]]) -> Iterator[ParsedChunk]:
        nonlocal part
        while run and not run[-1][1].strip():
            run.pop()
        while run and not run[0][1].strip():
            run.pop(0)
        if not run:
            return
        for piece in _split_runs(run, max_lines, max_chars):
            yield ParsedChunk(
                layer="code",
                node=0,
                start_line=piece[0][0],
                end_line=piece[-1][0],
                text="\n".join(t for _, t in piece),
                part=part,
            )
            part += 1

    for item in own:
        if run and item[0] != run[-1][0] + 1:
            yield from flush(run)
            run = []
        run.append(item)
    yield from flush(run)


def summary_text(
    qualified_name: str,
    kind: str,
    signature: str,
    docstring: str,
    parent: tuple[str, str] | None,
    calls: list[str],
) -> str:
    """The summary layer's text. `parent` is (kind, qualified_name) of the enclosing
    node; a signature equal to the qualified name (a file's) is not repeated.

    The store rebuilds this from node rows instead of keeping the text, so the
    function must stay deterministic.
    """
    lines = [f"{qualified_name} ({kind})"]
    if signature != qualified_name:
        lines.append(signature)
    sentence = first_sentence(docstring)
    if sentence:
        lines.append(sentence)
    if parent is not None:
        lines.append(f"in {parent[0]} {parent[1]}")
    if calls:
        shown = calls[:MAX_SUMMARY_CALLS]
        more = f" and {len(calls) - len(shown)} more" if len(calls) > len(shown) else ""
        lines.append("calls " + ", ".join(shown) + more)
    return "\n".join(lines)


def _summary_text(node: ParsedNode, nodes: list[ParsedNode], calls: list[str]) -> str:
    parent = nodes[node.parent] if node.parent is not None else None
    return summary_text(
        node.qualified_name,
        node.kind,
        node.signature,
        node.docstring,
        (parent.kind, parent.qualified_name) if parent is not None else None,
        calls,
    )
