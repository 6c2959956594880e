"""One search request: run the streams, fuse, collapse layers, cut snippets to
the budget, and optionally attach each code result's graph neighbourhood."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import apsw

from codesift.config import SearchSettings
from codesift.embedding.model import Embedder
from codesift.embedding.vectors import quantize
from codesift.errors import CodesiftError
from codesift.history.records import chunk_history
from codesift.retrieval.fusion import collapse_by_node, fuse_rankings
from codesift.retrieval.query import QueryAnalysis, analyze_query
from codesift.retrieval.ranking import (
    ChunkFeatures,
    RankingPriors,
    apply_priors,
    diversify_files,
    file_evidence,
)
from codesift.retrieval.request import (
    SearchRequest,
    SearchResponse,
    SearchResult,
    StreamReport,
)
from codesift.retrieval.snippets import estimate_tokens, snippet_window, source_line_map
from codesift.retrieval.streams import (
    StreamFilters,
    lexical_doc_stream,
    lexical_stream,
    symbol_stream,
    vector_stream,
)
from codesift.store.database import scalar
from codesift.store.reader import ChunkRow, chunk_rows

__all__ = ["Searcher"]

log = logging.getLogger(__name__)

StreamFn = Callable[[apsw.Connection, QueryAnalysis, StreamFilters, int], list[tuple[int, float]]]
# Per-result overhead in the token budget: path, lines, kind, name and punctuation.
RESULT_OVERHEAD_TOKENS = 24
MIN_SNIPPET_CHARS = 80
SYMBOL_QUERY_BOOST = 2.0


@dataclass(frozen=True, slots=True)
class _Stream:
    name: str
    run: StreamFn


class Searcher:
    """Answers search requests from one index connection (a reader)."""

    def __init__(
        self,
        conn: apsw.Connection,
        settings: SearchSettings | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        self.conn = conn
        self.settings = settings or SearchSettings()
        self.embedder = embedder

    def _streams(self) -> list[_Stream]:
        threshold = self.settings.symbol_threshold

        def symbol(
            conn: apsw.Connection, a: QueryAnalysis, f: StreamFilters, cap: int
        ) -> list[tuple[int, float]]:
            return symbol_stream(conn, a, f, cap, threshold)

        streams = [
            _Stream("lexical", lexical_stream),
            _Stream("lexical_doc", lexical_doc_stream),
            _Stream("symbol", symbol),
        ]
        embedder = self.embedder
        if embedder is not None:
            query_vectors: dict[str, bytes] = {}

            def query_vector(text: str) -> bytes:
                if text not in query_vectors:
                    query_vectors.clear()
                    query_vectors[text] = quantize(embedder.embed_query(text)[None, :])[0].tobytes()
                return query_vectors[text]

            def vector(
                conn: apsw.Connection, a: QueryAnalysis, f: StreamFilters, cap: int
            ) -> list[tuple[int, float]]:
                code_layers = tuple(layer for layer in f.layers if layer != "doc")
                code_filters = replace(f, layers=code_layers)
                return vector_stream(conn, query_vector(a.text), code_filters, cap)

            def vector_doc(
                conn: apsw.Connection, a: QueryAnalysis, f: StreamFilters, cap: int
            ) -> list[tuple[int, float]]:
                if "doc" not in f.layers:
                    return []
                doc_filters = replace(f, layers=("doc",))
                return vector_stream(conn, query_vector(a.text), doc_filters, cap)

            # Doc sections found by meaning are weighted like those found by words.
            streams.append(_Stream("vector", vector))
            streams.append(_Stream("vector_doc", vector_doc))
        return streams

    def _revision_root(self, request: SearchRequest) -> Path | None:
        """The indexed folder, where a git revision given as a time is resolved
        (read only when a time option is a string)."""
        if not any(isinstance(v, str) for v in (request.as_of, request.since, request.until)):
            return None
        root = scalar(self.conn, "SELECT value FROM meta WHERE key = 'root'")
        return Path(str(root)) if root else None

    def search(self, request: SearchRequest) -> SearchResponse:
        started = time.perf_counter()
        request = request.validated(root=self._revision_root(request))
        analysis = analyze_query(request.query)
        filters = StreamFilters(
            request.layers, request.languages, request.paths, request.time_filter()
        )
        cap = self.settings.candidate_cap
        response = SearchResponse(query=request.query)
        rankings: dict[str, list[tuple[int, float]]] = {}
        for stream in self._streams():
            t0 = time.perf_counter()
            try:
                ranked = stream.run(self.conn, analysis, filters, cap)[:cap]
                error = None
            except apsw.InterruptError:
                raise
            except (apsw.Error, CodesiftError) as exc:  # a failing stream contributes nothing
                log.warning("stream %s failed for %r: %s", stream.name, request.query, exc)
                ranked, error = [], str(exc)
            rankings[stream.name] = ranked
            response.streams.append(
                StreamReport(stream.name, len(ranked), (time.perf_counter() - t0) * 1000, error)
            )

        # A query that is one identifier asks for its definition: the symbol stream,
        # which ranks definitions by name, counts double against uses found lexically.
        symbol_boost = SYMBOL_QUERY_BOOST if analysis.symbol_like else 1.0
        weights = {
            "lexical": self.settings.weight_lexical,
            "lexical_doc": self.settings.weight_doc,
            "symbol": self.settings.weight_symbol * symbol_boost,
            "vector": self.settings.weight_vector,
            "vector_doc": self.settings.weight_vector * self.settings.weight_doc,
        }
        fused = fuse_rankings(rankings, weights, self.settings.rrf_k)
        # Priors may lift a candidate from deep in the fused list (a definition that
        # lexical ranked low), so they see a wider pool than the page needs.
        wide = fused[: max(request.top_k * 20, 200)]
        meta_rows = _chunk_meta(self.conn, [c.chunk_id for c in wide])
        meta = {cid: (node_id, layer) for cid, node_id, layer, _, _ in meta_rows}
        features: dict[int, ChunkFeatures] = {}
        for cid, _, _, path, kind in meta_rows:
            features[cid] = ChunkFeatures(path=path, kind=kind, symbol_score=0.0)
        for cand in wide:
            symbol_score = max((h.score for h in cand.hits if h.stream == "symbol"), default=0.0)
            feat = features.get(cand.chunk_id)
            if feat is not None and symbol_score:
                features[cand.chunk_id] = ChunkFeatures(feat.path, feat.kind, symbol_score)
        priors = RankingPriors(
            definition=self.settings.prior_definition,
            tests=self.settings.prior_tests,
            path=self.settings.prior_path,
        )
        path_of = {cid: path for cid, _, _, path, _ in meta_rows}
        rescored = apply_priors(wide, features, analysis, priors)
        rescored = file_evidence(rescored, path_of, self.settings.file_evidence)
        pool = rescored[: max(request.top_k * 5, 50)]
        collapsed = diversify_files(
            collapse_by_node(
                pool,
                {cid: m[0] for cid, m in meta.items()},
                {cid: m[1] for cid, m in meta.items()},
            ),
            path_of,
            self.settings.file_diversity,
            request.top_k,
        )
        rows = chunk_rows(self.conn, [c.chunk_id for c in collapsed])
        budget = request.max_tokens
        used = 0
        for cand in collapsed:
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
            result = self._result(row, cand.score, cand.hits, analysis, snippet_chars)
            used += RESULT_OVERHEAD_TOKENS + estimate_tokens(result.snippet)
            response.results.append(result)
        _attach_history(self.conn, response)
        response.tokens = used
        response.took_ms = (time.perf_counter() - started) * 1000
        return response

    def _result(
        self,
        row: ChunkRow,
        score: float,
        hits: list,  # type: ignore[type-arg]
        analysis: QueryAnalysis,
        snippet_chars: int,
    ) -> SearchResult:
        text_lines = row.text.count("\n") + 1
        if row.layer == "code" and row.node_id is not None:
            is_module = row.kind == "module"
            # Stubs replace nested definitions inside the node's own lines (a Go method
            # whose parent is its receiver type lies outside the type's span: no stub).
            stubs = (
                []
                if is_module
                else [
                    (int(s), int(e))
                    for s, e in self.conn.execute(
                        # A child's stub stands for its code chunk's lines (doc comment
                        # included), which start at that chunk's first line.
                        "SELECT coalesce(c.start_line, n.start_line), n.end_line FROM nodes n"
                        " LEFT JOIN chunks c ON c.node_id = n.id AND c.layer = 'code'"
                        " AND c.part = 0 WHERE n.parent_id = ? AND n.start_line >= ?"
                        " AND n.end_line <= ?",
                        (row.node_id, row.start_line, row.end_line),
                    )
                ]
            )
            # Module-level chunks are contiguous runs: parts carry no repeated header.
            line_map = source_line_map(
                row.start_line, text_lines, stubs, row.part > 0 and not is_module
            )
        elif row.layer == "doc":
            # Doc chunk text starts with the heading path and a blank line.
            line_map = [row.start_line, row.start_line] + [
                row.start_line + i for i in range(text_lines - 2)
            ]
        elif row.layer in ("ast", "summary"):
            line_map = [row.start_line] * text_lines
        else:
            line_map = [row.start_line + i for i in range(text_lines)]
        snippet = snippet_window(row.text, analysis.terms, snippet_chars, line_map)
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
            provenance=tuple(hits),
            chunk_id=row.id,
            node_id=row.node_id,
        )


def _attach_history(conn: apsw.Connection, response: SearchResponse) -> None:
    """Each result's created / last-changed time and last commit."""
    times = chunk_history(conn, [r.chunk_id for r in response.results])
    response.results = [
        replace(r, history=times.get(r.chunk_id)) if r.chunk_id in times else r
        for r in response.results
    ]


def _chunk_meta(
    conn: apsw.Connection, ids: list[int]
) -> list[tuple[int, int | None, str, str, str]]:
    """(chunk id, node id, layer, path, kind) for each chunk."""
    if not ids:
        return []
    return [
        (
            int(r[0]),
            r[1],
            str(r[2]),
            str(r[3]),
            str(r[4] or ("section" if r[2] == "doc" else "text")),
        )
        for r in conn.execute(
            "SELECT c.id, c.node_id, c.layer, f.path, n.kind FROM chunks c"
            " JOIN files f ON f.id = c.file_id LEFT JOIN nodes n ON n.id = c.node_id"
            f" WHERE c.id IN ({','.join('?' * len(ids))})",
            ids,
        )
    ]
