"""One search request: run the streams side by side, fuse, apply the priors,
collapse layers, optionally rerank, cut snippets to the budget, and optionally
attach each code result's graph neighbourhood."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType

import apsw
import numpy as np
import numpy.typing as npt

from codesift.config import RerankSettings, SearchSettings
from codesift.embedding.model import Embedder
from codesift.embedding.vectors import quantize
from codesift.errors import SearchCancelled
from codesift.history.records import change_info
from codesift.retrieval.feedback import FEEDBACK_DOCS, expanded_analysis, feedback_terms
from codesift.retrieval.fusion import (
    FusedCandidate,
    Hit,
    close_match_weight,
    collapse_by_node,
    fuse_rankings,
)
from codesift.retrieval.graph import MAX_GRAPH_NODES, expand_graph
from codesift.retrieval.query import QueryAnalysis, analyze_query
from codesift.retrieval.ranking import (
    ChunkFeatures,
    RankingPriors,
    apply_priors,
    diversify_files,
    diversity_keys,
    file_evidence,
    header_twins,
    lexical_dominates,
)
from codesift.retrieval.request import (
    SearchRequest,
    SearchResponse,
    SearchResult,
    StreamHit,
    StreamReport,
)
from codesift.retrieval.rerank import Reranker, rerank_order, rerank_skip_reason
from codesift.retrieval.snippets import estimate_tokens, snippet_window, source_line_map
from codesift.retrieval.streams import (
    Ranked,
    StreamFilters,
    lexical_doc_stream,
    lexical_stream,
    resident_vector_stream,
    symbol_stream,
    vector_stream,
)
from codesift.retrieval.vector_index import VectorIndex
from codesift.store.database import open_reader
from codesift.store.reader import ChunkRow
from codesift.store.search_store import ChildSpan, SearchStore
from codesift.store.sqlite_search import SqliteSearchStore

__all__ = ["Searcher", "StreamInput"]

log = logging.getLogger(__name__)

# Per-result overhead in the token budget: path, lines, kind, name and punctuation.
RESULT_OVERHEAD_TOKENS = 24
MIN_SNIPPET_CHARS = 80
SYMBOL_QUERY_BOOST = 2.0
# How many SQLite VM steps a stream's statement runs between looks at its search's
# cancel event (a Python call each time: ~0.1% of a stream's time at this rate).
_CANCEL_CHECK_STEPS = 20_000
# How often a waiting search looks at its cancel event (seconds).
CANCEL_POLL_SECONDS = 0.005
_STREAM_WORKERS = 6


@dataclass(frozen=True, slots=True)
class StreamInput:
    """What every stream of one search sees."""

    analysis: QueryAnalysis
    filters: StreamFilters
    cap: int
    query_vector: bytes | None = None  # int8 query embedding, for sqlite-vec
    query_embedding: npt.NDArray[np.float32] | None = None  # for resident vectors


StreamFn = Callable[[SearchStore, StreamInput], Ranked]


@dataclass(frozen=True, slots=True)
class _Stream:
    name: str
    run: StreamFn
    needs_query_vector: bool = False


class _InFlight:
    """One search's streams while they run: its cancel event and the stores busy
    with them, so a cancel can interrupt their SQL."""

    def __init__(self, cancel: threading.Event | None) -> None:
        self.cancel = cancel
        self._lock = threading.Lock()
        self._busy: dict[int, SearchStore] = {}

    def cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()

    def enter(self, store: SearchStore) -> None:
        with self._lock:
            self._busy[id(store)] = store

    def leave(self, store: SearchStore) -> None:
        with self._lock:
            self._busy.pop(id(store), None)

    def interrupt(self) -> None:
        # Under the lock: a store leaves only after its statement finished, so this
        # never interrupts another search's statement on that store's connection.
        with self._lock:
            for store in self._busy.values():
                store.interrupt()


_pool_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None


def _stream_pool() -> ThreadPoolExecutor:
    """The worker threads shared by every Searcher in the process."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(_STREAM_WORKERS, thread_name_prefix="codesift-stream")
        return _pool


class Searcher:
    """Answers search requests over one index; `search` may be called from several
    threads at once (the LSP server does).

    Streams run side by side on a shared pool of worker threads, each worker with its
    own read-only connection to the same database file (WAL; apsw releases the GIL
    while SQLite works), so a query costs about its slowest stream rather than their
    sum. The query embedding is computed in the calling thread while the lexical and
    symbol streams run; the vector streams start when it is ready (with the vectors
    in memory, on the calling thread itself, one after the other). With
    `parallel=False`, an in-memory database, or when no second connection can be
    opened (logged once), streams run one after the other on `conn`.

    Given a `vector_index` (a long-running process), the vector streams search that
    copy of the vectors kept in memory (retrieval/vector_index.py), loaded by its
    owner, by `load_vectors()`, or in the background on first use; until it is
    loaded they ask sqlite-vec, as a one-shot search always does.

    Given a `store` (another backend's `SearchStore`, e.g. store/postgres), every
    read goes through it instead of `conn`, and streams run one after the other;
    with `worker_stores` too (a function making a store on its own connection, and
    the function that closes it), they run side by side, one store per worker.

    A stream that raises logs a warning, reports its error in `response.streams` and
    contributes nothing; the search still answers.

    Cancellation: pass `cancel=threading.Event()` to `search` and set it from any
    thread. The search checks it before and after each stage and while it waits for
    its streams, interrupts the SQL statements its streams are running, and raises
    `codesift.errors.SearchCancelled` (never a partial response)::

        cancel = threading.Event()
        try:
            response = searcher.search(request, cancel=cancel)
        except SearchCancelled:
            ...  # e.g. reply with a RequestCancelled error

    `close()` (or leaving a `with Searcher(...)` block) closes the worker
    connections; call it when no search is running (e.g. before the index file is
    replaced by a rebuild, then make a new Searcher).
    """

    def __init__(
        self,
        conn: apsw.Connection,
        settings: SearchSettings | None = None,
        embedder: Embedder | None = None,
        *,
        parallel: bool = True,
        reranker: Reranker | None = None,
        rerank_settings: RerankSettings | None = None,
        vector_index: VectorIndex | None = None,
        store: SearchStore | None = None,
        worker_stores: Callable[[], tuple[SearchStore, Callable[[], None]]] | None = None,
    ) -> None:
        self.conn = conn
        self.settings = settings or SearchSettings()
        self.embedder = embedder
        self.reranker = reranker
        self.rerank_settings = rerank_settings or RerankSettings()
        filename = str(getattr(conn, "filename", "") or "")
        self._db_path = filename if filename and filename != ":memory:" else None
        self._worker_stores = worker_stores if store is not None else None
        self.parallel = parallel and (
            self._worker_stores is not None or (self._db_path is not None and store is None)
        )
        # Another backend's store (e.g. PostgreSQL) replaces the SQLite reads; its
        # streams run one after the other on it, or side by side on stores that
        # `worker_stores` makes, one per worker thread.
        self._store: SearchStore = store if store is not None else SqliteSearchStore(conn)
        self._workers: dict[int, tuple[SearchStore, Callable[[], None]]] = {}
        # Per worker thread: its own read-only connection, and the store over it.
        self._readers: dict[int, tuple[apsw.Connection, SqliteSearchStore]] = {}
        self._readers_lock = threading.Lock()
        self._shared_conn_lock = threading.RLock()
        # Vectors held in memory once loaded (by their owner, or here on first use).
        self._vector_index = vector_index if self._db_path and embedder and not store else None
        self._vector_load: threading.Thread | None = None

    # -- connections ---------------------------------------------------------------

    def _reader(self) -> SearchStore:
        """The store over this thread's read-only connection (over the shared one
        when sequential)."""
        if self.parallel and self._worker_stores is not None:
            ident = threading.get_ident()
            with self._readers_lock:
                worker = self._workers.get(ident)
                if worker is None:
                    worker = self._workers[ident] = self._worker_stores()
                return worker[0]
        if not self.parallel or self._db_path is None:
            return self._store
        ident = threading.get_ident()
        with self._readers_lock:
            reader = self._readers.get(ident)
            if reader is None:
                try:
                    conn = open_reader(Path(self._db_path))
                except apsw.Error as exc:
                    # E.g. a read-only file whose WAL index cannot be opened a second
                    # time: search on the caller's connection, one stream at a time.
                    log.warning(
                        "cannot open another connection to %s (%s); streams run one "
                        "after the other",
                        self._db_path,
                        exc,
                    )
                    self.parallel = False
                    return self._store
                reader = self._readers[ident] = (conn, SqliteSearchStore(conn))
            return reader[1]

    def _guard(self, store: SearchStore) -> AbstractContextManager[object]:
        """A lock around work on the caller's connection, which threads share when
        no reader connection could be opened (apsw refuses concurrent use)."""
        return self._shared_conn_lock if store is self._store else nullcontext()

    def close(self) -> None:
        """Close the worker connections (not `conn`, which the caller owns)."""
        with self._readers_lock:
            readers, self._readers = list(self._readers.values()), {}
            workers, self._workers = list(self._workers.values()), {}
        for conn, _ in readers:
            conn.close()
        for _, close in workers:
            close()

    def __enter__(self) -> Searcher:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- streams -------------------------------------------------------------------

    def _streams(self) -> list[_Stream]:
        threshold = self.settings.symbol_threshold
        max_df = self.settings.lexical_max_df

        def lexical(store: SearchStore, i: StreamInput) -> Ranked:
            return lexical_stream(store, i.analysis, i.filters, i.cap, max_df)

        def lexical_doc(store: SearchStore, i: StreamInput) -> Ranked:
            return lexical_doc_stream(store, i.analysis, i.filters, i.cap)

        def symbol(store: SearchStore, i: StreamInput) -> Ranked:
            return symbol_stream(store, i.analysis, i.filters, i.cap, threshold)

        streams = [
            _Stream("lexical", lexical),
            _Stream("lexical_doc", lexical_doc),
            _Stream("symbol", symbol),
        ]
        if self.embedder is not None:

            def nearest(store: SearchStore, i: StreamInput, filters: StreamFilters) -> Ranked:
                index = self._resident_vectors()
                if index is not None and i.query_embedding is not None:
                    return resident_vector_stream(store, index, i.query_embedding, filters, i.cap)
                if i.query_vector is None:
                    return []
                return vector_stream(store, i.query_vector, filters, i.cap)

            def vector(store: SearchStore, i: StreamInput) -> Ranked:
                code_layers = tuple(layer for layer in i.filters.layers if layer != "doc")
                return nearest(store, i, replace(i.filters, layers=code_layers))

            def vector_doc(store: SearchStore, i: StreamInput) -> Ranked:
                if "doc" not in i.filters.layers:
                    return []
                return nearest(store, i, replace(i.filters, layers=("doc",)))

            # Doc sections found by meaning are weighted like those found by words.
            streams.append(_Stream("vector", vector, needs_query_vector=True))
            streams.append(_Stream("vector_doc", vector_doc, needs_query_vector=True))
        return streams

    def _revision_root(self, request: SearchRequest) -> Path | None:
        """The indexed folder, where a git revision given as a time is resolved
        (read only when a time option is a string)."""
        if not any(isinstance(v, str) for v in (request.as_of, request.since, request.until)):
            return None
        with self._guard(self._store):
            root = self._store.meta("root")
        return Path(root) if root else None

    def load_vectors(self) -> bool:
        """Load the resident vectors now (on the calling thread); False when this
        Searcher keeps none."""
        if self._vector_index is None:
            return False
        self._reader().sync_resident(self._vector_index)
        return True

    def _resident_vectors(self) -> VectorIndex | None:
        """The in-memory vectors when loaded; else None, starting their load."""
        index = self._vector_index
        if index is None:
            return None
        if index.loaded:
            return index
        with self._readers_lock:
            if self._vector_load is None:
                self._vector_load = threading.Thread(
                    target=self._load_in_background, name="codesift-vectors", daemon=True
                )
                self._vector_load.start()
        return None

    def _load_in_background(self) -> None:
        assert self._vector_index is not None and self._db_path is not None
        try:
            self._vector_index.sync_file(self._db_path)  # loads, unless its owner did
        except Exception as exc:  # searches keep using sqlite-vec
            log.warning("cannot load the vectors into memory: %s", exc)

    def _query_vector(self, text: str) -> npt.NDArray[np.float32]:
        assert self.embedder is not None
        return self.embedder.embed_query(text)

    def _run_stream(
        self, stream: _Stream, inputs: StreamInput, flight: _InFlight
    ) -> tuple[Ranked, StreamReport | None]:
        """Run one stream; (ranking, report), or ([], None) when cancelled."""
        if flight.cancelled():
            return [], None
        t0 = time.perf_counter()
        store = self._reader()
        flight.enter(store)
        try:
            # An interrupt reaches only statements already running, so a stream whose
            # statement starts just after the cancel would run to its end: the store
            # also asks the search every few thousand steps.
            checks = flight.cancelled if flight.cancel is not None else None
            with self._guard(store), store.checking(checks, _CANCEL_CHECK_STEPS):
                ranked = stream.run(store, inputs)[: inputs.cap]
            error = None
        except apsw.InterruptError:
            if flight.cancelled():
                return [], None
            ranked, error = [], "interrupted"
            log.warning("stream %s was interrupted for %r", stream.name, inputs.analysis.text)
        except Exception as exc:  # a failing stream contributes nothing
            # One line: a database's message spans several (psycopg's DETAIL, HINT).
            said = "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())
            log.warning("stream %s failed for %r: %s", stream.name, inputs.analysis.text, said)
            ranked, error = [], f"{type(exc).__name__}: {said}"
        finally:
            flight.leave(store)
        return ranked, StreamReport(
            stream.name, len(ranked), (time.perf_counter() - t0) * 1000, error
        )

    def _embed_for(
        self, inputs: StreamInput, response: SearchResponse
    ) -> tuple[StreamInput, str | None]:
        """`inputs` with the query embedding (float32, and int8 for sqlite-vec)."""
        t0 = time.perf_counter()
        try:
            embedding = self._query_vector(inputs.analysis.text)
            inputs = replace(
                inputs,
                query_embedding=embedding,
                query_vector=bytes(quantize(embedding[None, :])[0].tobytes()),
            )
            error = None
        except Exception as exc:  # the vector streams then report it and contribute nothing
            log.warning("query embedding failed for %r: %s", inputs.analysis.text, exc)
            error = f"query embedding: {type(exc).__name__}: {exc}"
        response.stages["embed"] = (time.perf_counter() - t0) * 1000
        return inputs, error

    def _run_streams(
        self, inputs: StreamInput, flight: _InFlight, response: SearchResponse
    ) -> dict[str, Ranked]:
        streams = self._streams()
        plain = [s for s in streams if not s.needs_query_vector]
        needs_vector = [s for s in streams if s.needs_query_vector]
        results: dict[str, tuple[Ranked, StreamReport | None]] = {}
        embed_error: str | None = None
        if not self.parallel:
            for stream in plain:
                _check(flight, "streams")
                results[stream.name] = self._run_stream(stream, inputs, flight)
            if needs_vector:
                _check(flight, "query embedding")
                with_vector, embed_error = self._embed_for(inputs, response)
                for stream in needs_vector:
                    _check(flight, "streams")
                    results[stream.name] = self._run_stream(stream, with_vector, flight)
        else:
            pool = _stream_pool()
            futures: dict[Future[tuple[Ranked, StreamReport | None]], str] = {
                pool.submit(self._run_stream, s, inputs, flight): s.name for s in plain
            }
            if needs_vector:
                # Overlaps the lexical and symbol streams: onnxruntime releases the GIL.
                with_vector, embed_error = self._embed_for(inputs, response)
                # With the vectors in memory the vector streams take a few
                # milliseconds and are most often the last to finish: they run here,
                # one after the other, without a hand-off to a worker (on workers they
                # would only wait for each other: the in-memory index serves one search
                # at a time). A sqlite-vec kNN takes ~100 ms and goes to a worker, so
                # that a cancel still interrupts it at once.
                index = self._vector_index
                if index is not None and index.loaded:
                    for stream in needs_vector:  # each returns at once once cancelled
                        results[stream.name] = self._run_stream(stream, with_vector, flight)
                else:
                    for stream in needs_vector:
                        futures[pool.submit(self._run_stream, stream, with_vector, flight)] = (
                            stream.name
                        )
            pending = set(futures)
            while pending:
                if flight.cancelled():
                    flight.interrupt()
                    raise SearchCancelled("the search was cancelled while its streams ran")
                done, pending = wait(pending, CANCEL_POLL_SECONDS, FIRST_COMPLETED)
                for future in done:
                    results[futures[future]] = future.result()
        _check(flight, "streams")
        rankings: dict[str, Ranked] = {}
        for stream in streams:  # reports in stream order, whatever finished first
            ranked, report = results[stream.name]
            if report is None:
                _check(flight, "streams")
                continue
            if stream.needs_query_vector and embed_error and report.error is None:
                report = replace(report, error=embed_error)
            rankings[stream.name] = ranked
            response.streams.append(report)
        return rankings

    def _vector_weight(self, ranked: Ranked) -> float:
        """The vector streams' fusion weight for this query: higher when the best
        match is a close one (close_match_weight), for a model calibrated for it."""
        if not ranked or self.embedder is None:
            return self.settings.weight_vector
        span = self.embedder.close_match
        if span is None:
            return self.settings.weight_vector
        return close_match_weight(
            ranked[0][1], span, self.settings.weight_vector, self.settings.weight_vector_close
        )

    # -- one request ---------------------------------------------------------------

    def search(
        self, request: SearchRequest, cancel: threading.Event | None = None
    ) -> SearchResponse:
        """Answer `request`; raises QueryError for an invalid request and
        SearchCancelled when `cancel` is set before the answer is complete."""
        started = time.perf_counter()
        request = request.validated(root=self._revision_root(request))
        flight = _InFlight(cancel)
        _check(flight, "start")
        analysis = analyze_query(request.query)
        filters = _stream_filters(request)
        cap = self.settings.candidate_cap
        response = SearchResponse(query=request.query)
        t0 = time.perf_counter()
        rankings = self._run_streams(StreamInput(analysis, filters, cap), flight, response)
        response.stages["streams"] = (time.perf_counter() - t0) * 1000
        store = self._reader()
        with self._guard(store):
            return self._answer(store, request, analysis, rankings, flight, response, started)

    def _answer(
        self,
        store: SearchStore,
        request: SearchRequest,
        analysis: QueryAnalysis,
        rankings: dict[str, Ranked],
        flight: _InFlight,
        response: SearchResponse,
        started: float,
    ) -> SearchResponse:
        """Fuse, rank, rerank and build the results (reading from `store`)."""
        t0 = time.perf_counter()
        # A query that is one identifier asks for its definition: the symbol stream,
        # which ranks definitions by name, counts double against uses found lexically.
        symbol_boost = SYMBOL_QUERY_BOOST if analysis.symbol_like else 1.0
        vector_weight = self._vector_weight(rankings.get("vector", []))
        weights = {
            "lexical": self.settings.weight_lexical,
            "lexical_doc": self.settings.weight_doc,
            "symbol": self.settings.weight_symbol * symbol_boost,
            "vector": vector_weight,
            "vector_doc": vector_weight * self.settings.weight_doc,
        }
        response.streams = [replace(s, weight=weights.get(s.stream)) for s in response.streams]
        if self._wants_feedback(request, analysis, rankings):
            ranked, report = self._feedback(request, analysis, rankings, weights, flight)
            _check(flight, "feedback")
            if report is not None:
                rankings = {**rankings, "feedback": ranked}
                weights["feedback"] = self.settings.weight_feedback
                response.streams.append(replace(report, weight=weights["feedback"]))
        # Priors may lift a candidate from deep in the fused list (a definition that
        # lexical ranked low), so they see a wider pool than the page needs.
        wide = fuse_rankings(
            rankings, weights, self.settings.rrf_k, limit=max(request.top_k * 20, 200)
        )
        candidates = len({cid for ranked in rankings.values() for cid, _ in ranked})
        places = store.chunk_places([c.chunk_id for c in wide])
        meta = {p.chunk_id: (p.node_id, p.layer) for p in places}
        path_of = {p.chunk_id: p.path for p in places}
        language_of = {p.chunk_id: p.language for p in places}
        generated = {p.chunk_id for p in places if p.generated}
        twins = header_twins([(p.chunk_id, p.path, p.name) for p in places])
        symbol_score: dict[int, float] = {}  # as its provenance says: the first listing
        for cid, raw in rankings.get("symbol", ()):
            symbol_score.setdefault(cid, raw)
        features = {
            cid: ChunkFeatures(
                path_of[cid],
                symbol_score.get(cid, 0.0),
                language_of[cid],
                window=meta[cid][1] == "code" and meta[cid][0] is None,
                generated=cid in generated,
                header_twin=cid in twins,
            )
            for cid in (cand.chunk_id for cand in wide)
            if cid in path_of
        }
        priors = RankingPriors(
            definition=self.settings.prior_definition,
            tests=self.settings.prior_tests,
            path=self.settings.prior_path,
            path_short=self.settings.prior_path_short,
            headers=self.settings.prior_headers,
        )
        rescored = apply_priors(wide, features, analysis, priors)
        # A dominant lexical match: file evidence stands aside.
        dominant = lexical_dominates(rankings.get("lexical", []), self.settings.file_evidence_yield)
        evidence = 0.0 if dominant else self.settings.file_evidence
        rescored = file_evidence(rescored, path_of, evidence)
        pool = rescored[: max(request.top_k * 5, 50)]
        collapsed = collapse_by_node(
            pool,
            {cid: m[0] for cid, m in meta.items()},
            {cid: m[1] for cid, m in meta.items()},
        )
        # The page in diversified order; with a reranker, the whole pool (the rerank
        # stage may reorder its head).
        shown = len(collapsed) if self.reranker is not None else request.top_k
        collapsed = diversify_files(
            collapsed,
            diversity_keys(path_of, language_of),
            self.settings.file_diversity,
            shown,
        )
        response.stages["rank"] = (time.perf_counter() - t0) * 1000
        _check(flight, "ranking")

        collapsed = self._rerank(store, request, analysis, candidates, collapsed, response)
        _check(flight, "rerank")
        collapsed = _code_for_summaries(store, collapsed[: request.top_k], meta, request.layers)

        t0 = time.perf_counter()
        rows = store.chunk_rows([c.chunk_id for c in collapsed])
        children = store.child_spans(
            [
                r.node_id
                for r in rows.values()
                if r.layer == "code" and r.node_id is not None and r.kind != "module"
            ]
        )
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
            result = self._result(row, children, cand.score, cand.hits, analysis, snippet_chars)
            used += RESULT_OVERHEAD_TOKENS + estimate_tokens(result.snippet)
            response.results.append(result)
        _attach_history(store, response)
        response.stages["results"] = (time.perf_counter() - t0) * 1000
        _check(flight, "snippets")

        if request.include_graph:
            t0 = time.perf_counter()
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
            response.stages["graph"] = (time.perf_counter() - t0) * 1000
            _check(flight, "graph")
        response.tokens = used
        response.took_ms = (time.perf_counter() - started) * 1000
        return response

    def _wants_feedback(
        self, request: SearchRequest, analysis: QueryAnalysis, rankings: dict[str, Ranked]
    ) -> bool:
        """Whether the feedback stream runs: for a prose query over code, when no
        vector stream found anything (retrieval/feedback.py)."""
        return (
            self.settings.feedback_terms > 0
            and not analysis.symbol_like
            and "code" in request.layers
            and not rankings.get("vector")
            and not rankings.get("vector_doc")
            and any(rankings.values())
        )

    def _feedback(
        self,
        request: SearchRequest,
        analysis: QueryAnalysis,
        rankings: dict[str, Ranked],
        weights: dict[str, float],
        flight: _InFlight,
    ) -> tuple[Ranked, StreamReport | None]:
        """The feedback stream: the query's terms and the words of the first pass's
        best code chunks, by bm25 (its report lists the words added)."""
        first = [
            c.chunk_id
            for c in fuse_rankings(rankings, weights, self.settings.rrf_k, limit=FEEDBACK_DOCS * 4)
        ]
        added: list[str] = []

        def run(store: SearchStore, inputs: StreamInput) -> Ranked:
            rows = store.chunk_rows(first)
            texts = [rows[c].text for c in first if c in rows and rows[c].layer == "code"]
            added.extend(
                feedback_terms(
                    texts[:FEEDBACK_DOCS],
                    analysis.terms,
                    lambda terms: store.term_counts("code", terms),
                    self.settings.feedback_terms,
                )
            )
            if not added:
                return []
            return lexical_stream(
                store,
                expanded_analysis(analysis, added),
                inputs.filters,
                inputs.cap,
                self.settings.lexical_max_df,
            )

        inputs = StreamInput(analysis, _stream_filters(request), self.settings.candidate_cap)
        ranked, report = self._run_stream(_Stream("feedback", run), inputs, flight)
        if report is not None:
            report = replace(report, added_terms=tuple(added))
        return ranked, report

    def _rerank(
        self,
        store: SearchStore,
        request: SearchRequest,
        analysis: QueryAnalysis,
        candidates: int,
        collapsed: list[FusedCandidate],
        response: SearchResponse,
    ) -> list[FusedCandidate]:
        """Reorder the best `rerank.candidates` results by the cross-encoder, when
        the stage is on and not skipped (rerank.rerank_skip_reason)."""
        if self.reranker is None:
            response.rerank = "off"
            return collapsed
        exact_first = (
            analysis.symbol_like
            and bool(collapsed)
            and any(stream == "symbol" and raw >= 1.0 for stream, _, raw in collapsed[0].hits)
        )
        skip = rerank_skip_reason(
            request.query, candidates, self.rerank_settings.threshold, exact_first
        )
        if skip is not None:
            response.rerank = f"skipped: {skip}"
            return collapsed
        t0 = time.perf_counter()
        head = collapsed[: self.rerank_settings.candidates]
        rows = store.chunk_rows([c.chunk_id for c in head])
        texts = [rows[c.chunk_id].text if c.chunk_id in rows else "" for c in head]
        try:
            scores = self.reranker.scores(request.query, texts)
        except Exception as exc:  # a failing reranker leaves the fused order
            log.warning("rerank failed for %r: %s", request.query, exc)
            response.rerank = f"skipped: {type(exc).__name__}: {exc}"
            return collapsed
        order = rerank_order(scores)
        reranked = [
            FusedCandidate(
                head[i].chunk_id,
                head[i].score,
                [*head[i].hits, ("rerank", rank, round(scores[i], 6))],
            )
            for rank, i in enumerate(order, start=1)
        ]
        response.rerank = "applied"
        response.stages["rerank"] = (time.perf_counter() - t0) * 1000
        return reranked + collapsed[len(head) :]

    def _result(
        self,
        row: ChunkRow,
        children: dict[int, list[ChildSpan]],
        score: float,
        hits: list[Hit],
        analysis: QueryAnalysis,
        snippet_chars: int,
    ) -> SearchResult:
        """One result; `children` are the child spans of the code results' nodes
        (`SearchStore.child_spans`)."""
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
            provenance=tuple(StreamHit(stream, rank, raw) for stream, rank, raw in hits),
            chunk_id=row.id,
            node_id=row.node_id,
        )


def _attach_history(store: SearchStore, response: SearchResponse) -> None:
    """Each result's created / last-changed time and last commit."""
    times = store.chunk_times([r.chunk_id for r in response.results])
    response.results = [
        replace(r, history=change_info(times[r.chunk_id])) if r.chunk_id in times else r
        for r in response.results
    ]


def _stream_filters(request: SearchRequest) -> StreamFilters:
    return StreamFilters(request.layers, request.languages, request.paths, request.time_filter())


def _check(flight: _InFlight, stage: str) -> None:
    if flight.cancelled():
        raise SearchCancelled(f"the search was cancelled ({stage})")


def _code_for_summaries(
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
