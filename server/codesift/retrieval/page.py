"""The page of a search, from its ranked candidates: a definition found through its
summary shown with its code, each result's snippet within the request's token
budget, its created / last-changed times, and (when asked) its graph
neighbourhood. `Searcher` (retrieval/search.py) ranks; this builds what it shows."""

from __future__ import annotations

from dataclasses import replace

from codesift.history.records import ChangeInfo, change_info
from codesift.retrieval.fusion import FusedCandidate, Hit
from codesift.retrieval.graph import MAX_GRAPH_NODES, expand_graph
from codesift.retrieval.request import SearchRequest, SearchResponse, SearchResult, StreamHit
from codesift.retrieval.snippets import estimate_tokens, snippet_window, source_line_map
from codesift.store.reader import ChunkRow
from codesift.store.search_store import ChildSpan, SearchStore

__all__ = [
    "MIN_SNIPPET_CHARS",
    "RESULT_OVERHEAD_TOKENS",
    "attach_graph",
    "build_result",
    "code_for_summaries",
    "fill_page",
]

# Per-result overhead in the token budget: path, lines, kind, name and punctuation.
RESULT_OVERHEAD_TOKENS = 24
MIN_SNIPPET_CHARS = 80


def code_for_summaries(
    store: SearchStore,
    candidates: list[FusedCandidate],
    meta: dict[int, tuple[int | None, str]],
    layers: tuple[str, ...],
) -> list[FusedCandidate]:
    """A definition found only through its summary (the vector stream matches that
    generated text) is shown with its code when the request asks for code: the
    first code part, whose snippet then centres on the query's words."""
    if "code" not in layers:
        return candidates
    nodes = [
        node
        for node, layer in (meta.get(c.chunk_id, (None, "")) for c in candidates)
        if layer == "summary" and node is not None
    ]
    if not nodes:
        return candidates
    code_of = store.chunks_for_nodes(nodes, ("code",))
    out = []
    for cand in candidates:
        node, layer = meta.get(cand.chunk_id, (None, ""))
        if layer == "summary" and node is not None and node in code_of:
            cand = FusedCandidate(code_of[node], cand.score, cand.hits)
        out.append(cand)
    return out


def fill_page(
    store: SearchStore,
    candidates: list[FusedCandidate],
    terms: tuple[str, ...],
    request: SearchRequest,
    response: SearchResponse,
) -> int:
    """Append the candidates' results to `response` in order, each snippet cut to
    what is left of `request.max_tokens` (the page stops, marked truncated by the
    budget, when too little is left for a useful snippet), with their history.
    Returns the tokens used."""
    rows = store.chunk_rows([c.chunk_id for c in candidates])
    children = store.child_spans(
        [
            r.node_id
            for r in rows.values()
            if r.layer == "code" and r.node_id is not None and r.kind != "module"
        ]
    )
    # History read before the results are built (one query, as for the rows): each
    # result is made once, with its times, instead of copied to add them.
    times = store.chunk_times([c.chunk_id for c in candidates if c.chunk_id in rows])
    budget = request.max_tokens
    used = 0
    for cand in candidates:
        row = rows.get(cand.chunk_id)
        if row is None:
            continue
        snippet_chars = request.snippet_chars
        if budget is not None:
            room = (budget - used - RESULT_OVERHEAD_TOKENS) * 4
            if room < MIN_SNIPPET_CHARS:
                response.truncated_by_budget = True
                break
            snippet_chars = min(snippet_chars, room)
        history = change_info(times[row.id]) if row.id in times else None
        result = build_result(row, children, cand.score, cand.hits, terms, snippet_chars, history)
        used += RESULT_OVERHEAD_TOKENS + estimate_tokens(result.snippet)
        response.results.append(result)
    return used


def attach_graph(store: SearchStore, response: SearchResponse) -> None:
    """Each code result's callers and callees (at most MAX_GRAPH_NODES in all)."""
    code_nodes = [
        r.node_id
        for r in response.results
        if r.node_id is not None and r.layer in ("code", "ast", "summary")
    ]
    graph = expand_graph(store, code_nodes, MAX_GRAPH_NODES)
    response.results = [
        replace(r, graph=graph.get(r.node_id, ())) if r.node_id in graph else r
        for r in response.results
    ]


def _line_map(row: ChunkRow, children: dict[int, list[ChildSpan]]) -> list[int]:
    """The source line of each line of the chunk's text."""
    text_lines = row.text.count("\n") + 1
    if row.layer == "code" and row.node_id is not None:
        is_module = row.kind == "module"
        # Stubs replace nested definitions inside the node's own lines (a Go method
        # whose parent is its receiver type lies outside the type's span: no stub).
        stubs = (
            []
            if is_module
            else [
                (stub_start, end)
                for stub_start, end, start in children.get(row.node_id, ())
                if start >= row.start_line and end <= row.end_line
            ]
        )
        # Module-level chunks are contiguous runs: parts carry no repeated header.
        return source_line_map(row.start_line, text_lines, stubs, row.part > 0 and not is_module)
    if row.layer == "doc":
        # Doc chunk text starts with the heading path and a blank line.
        return [row.start_line, row.start_line] + [
            row.start_line + i for i in range(text_lines - 2)
        ]
    if row.layer in ("ast", "summary"):
        return [row.start_line] * text_lines
    return [row.start_line + i for i in range(text_lines)]


def build_result(
    row: ChunkRow,
    children: dict[int, list[ChildSpan]],
    score: float,
    hits: list[Hit],
    terms: tuple[str, ...],
    snippet_chars: int,
    history: ChangeInfo | None = None,
) -> SearchResult:
    """One result; `children` are the child spans of the code results' nodes
    (`SearchStore.child_spans`); `history` its created / last-changed times."""
    snippet = snippet_window(row.text, terms, snippet_chars, _line_map(row, children))
    return SearchResult(
        path=row.path,
        start_line=row.start_line,
        end_line=row.end_line,
        kind=row.kind,
        qualified_name=row.qualified_name,
        layer=row.layer,
        language=row.language,
        score=round(score, 6),
        snippet=snippet.text,
        snippet_start_line=snippet.start_line,
        truncated=snippet.truncated,
        provenance=tuple(StreamHit(stream, rank, raw) for stream, rank, raw in hits),
        chunk_id=row.id,
        node_id=row.node_id,
        history=history,
    )
