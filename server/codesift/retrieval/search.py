"""One search request: run the streams side by side, fuse, apply the priors,
collapse layers, optionally rerank, cut snippets to the budget, and optionally
attach each code result's graph neighbourhood."""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from pathlib import Path
from types import TracebackType

import apsw
import numpy as np
import numpy.typing as npt

from codesift.config import RerankSettings, SearchSettings
from codesift.embedding.model import Embedder
from codesift.embedding.vectors import quantize
from codesift.errors import SearchCancelled
from codesift.retrieval.feedback import (
    FEEDBACK_DOCS,
    feedback_ranking,
    feedback_wanted,
)
from codesift.retrieval.flight import (
    CANCEL_POLL_SECONDS,
    InFlight,
    Stream,
    StreamInput,
    check_flight,
    stream_filters,
    stream_pool,
)
from codesift.retrieval.fusion import (
    close_match_weight,
    fuse_rankings,
)
from codesift.retrieval.ordering import order_page
from codesift.retrieval.page import attach_graph, code_for_summaries, fill_page
from codesift.retrieval.query import QueryAnalysis, analyze_query
from codesift.retrieval.ranking import lexical_dominates
from codesift.retrieval.request import (
    SearchRequest,
    SearchResponse,
    StreamReport,
)
from codesift.retrieval.rerank import Reranker, rerank_stage
from codesift.retrieval.stream_set import search_streams
from codesift.retrieval.streams import (
    Ranked,
)
from codesift.retrieval.vector_index import VectorIndex
from codesift.store.data_version import IndexVersion
from codesift.store.database import open_reader
from codesift.store.search_store import SearchStore
from codesift.store.sqlite.chunk_facts import ChunkFacts
from codesift.store.sqlite.search import SqliteSearchStore

__all__ = ["Searcher", "StreamInput"]

log = logging.getLogger(__name__)

SYMBOL_QUERY_BOOST = 2.0
# How many SQLite VM steps a stream's statement runs between looks at its search's
# cancel event (a Python call each time: ~0.1% of a stream's time at this rate).
_CANCEL_CHECK_STEPS = 20_000


StreamResults = dict[str, tuple[Ranked, StreamReport | None]]


def _idle_streams(streams: Sequence[Stream], inputs: StreamInput) -> StreamResults:
    """The streams with nothing to do for this search (`Stream.wanted`), reported with
    no candidates: they are not handed to a worker."""
    return {
        s.name: ([], StreamReport(s.name, 0, 0.0))
        for s in streams
        if s.wanted is not None and not s.wanted(inputs)
    }


def _reported(
    streams: Sequence[Stream],
    results: StreamResults,
    embed_error: str | None,
    flight: InFlight,
    response: SearchResponse,
) -> dict[str, Ranked]:
    """Each stream's ranking, its report added to `response` in stream order
    (whatever finished first); a vector stream's report carries the query
    embedding's error."""
    rankings: dict[str, Ranked] = {}
    for stream in streams:
        ranked, report = results[stream.name]
        if report is None:
            check_flight(flight, "streams")
            continue
        if stream.needs_query_vector and embed_error and report.error is None:
            report = replace(report, error=embed_error)
        rankings[stream.name] = ranked
        response.streams.append(report)
    return rankings


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
        # What the reader stores know of chunks while the index is unchanged
        # (store/sqlite/chunk_facts.py), for a Searcher that serves many searches
        # side by side; not on `conn`, which its owner may write.
        self._facts = (
            ChunkFacts(IndexVersion(Path(self._db_path)))
            if self.parallel and self._db_path is not None and store is None
            else None
        )
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
                reader = self._readers[ident] = (conn, SqliteSearchStore(conn, self._facts))
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
        if self._facts is not None:
            self._facts.close()

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

    def _streams(self) -> list[Stream]:
        return search_streams(
            self.settings, vectors=self.embedder is not None, resident=self._resident_vectors
        )

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
        self, stream: Stream, inputs: StreamInput, flight: InFlight
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
        self, inputs: StreamInput, flight: InFlight, response: SearchResponse
    ) -> dict[str, Ranked]:
        streams = self._streams()
        results = _idle_streams(streams, inputs)
        plain = [s for s in streams if not s.needs_query_vector and s.name not in results]
        needs_vector = [s for s in streams if s.needs_query_vector and s.name not in results]
        embed_error: str | None = None
        if not self.parallel:
            for stream in plain:
                check_flight(flight, "streams")
                results[stream.name] = self._run_stream(stream, inputs, flight)
            if needs_vector:
                check_flight(flight, "query embedding")
                with_vector, embed_error = self._embed_for(inputs, response)
                for stream in needs_vector:
                    check_flight(flight, "streams")
                    results[stream.name] = self._run_stream(stream, with_vector, flight)
        else:
            pool = stream_pool()
            futures: dict[Future[tuple[Ranked, StreamReport | None]], str] = {
                pool.submit(self._run_stream, s, inputs, flight): s.name
                for s in plain
                if not s.inline
            }
            for stream in plain:
                if stream.inline:
                    results[stream.name] = self._run_stream(stream, inputs, flight)
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
        check_flight(flight, "streams")
        return _reported(streams, results, embed_error, flight, response)

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
        flight = InFlight(cancel)
        check_flight(flight, "start")
        analysis = analyze_query(request.query)
        filters = stream_filters(request)
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
        flight: InFlight,
        response: SearchResponse,
        started: float,
    ) -> SearchResponse:
        """Fuse, rank, rerank and build the results (reading from `store`)."""
        t0 = time.perf_counter()
        # A query that is one identifier asks for its definition: the symbol stream,
        # which ranks definitions by name, counts double against uses found lexically.
        symbol_weight = (
            self.settings.weight_symbol * SYMBOL_QUERY_BOOST
            if analysis.symbol_like
            else self.settings.weight_symbol_prose
        )
        vector_weight = self._vector_weight(rankings.get("vector", []))
        weights = {
            "lexical": self.settings.weight_lexical,
            "exact": self.settings.weight_lexical,
            "path": self.settings.weight_lexical,
            "lexical_doc": self.settings.weight_doc,
            "symbol": symbol_weight,
            "vector": vector_weight,
            "vector_doc": vector_weight * self.settings.weight_doc,
        }
        response.streams = [replace(s, weight=weights.get(s.stream)) for s in response.streams]
        if feedback_wanted(
            self.settings.feedback_terms,
            analysis,
            request.layers,
            rankings,
            with_vectors=functools.partial(self._feedback_with_vectors, store, rankings),
        ):
            ranked, report = self._feedback(request, analysis, rankings, weights, flight)
            check_flight(flight, "feedback")
            if report is not None:
                rankings = {**rankings, "feedback": ranked}
                weights["feedback"] = self.settings.weight_feedback
                response.streams.append(replace(report, weight=weights["feedback"]))
        # Priors may lift a candidate from deep in the fused list (a definition that
        # lexical ranked low), so they see a wider pool than the page needs.
        wide = fuse_rankings(
            rankings, weights, self.settings.rrf_k, limit=max(request.top_k * 20, 200)
        )
        # How many distinct chunks the streams found: only the rerank stage reads it.
        candidates = (
            len({cid for ranked in rankings.values() for cid, _ in ranked})
            if self.reranker is not None
            else 0
        )
        places = store.chunk_places([c.chunk_id for c in wide])
        collapsed, meta = order_page(
            wide,
            places,
            rankings,
            analysis,
            self.settings,
            top_k=request.top_k,
            whole_pool=self.reranker is not None,  # the rerank stage may reorder its head
        )
        response.stages["rank"] = (time.perf_counter() - t0) * 1000
        check_flight(flight, "ranking")

        collapsed = rerank_stage(
            self.reranker,
            self.rerank_settings,
            store,
            request,
            analysis,
            candidates,
            collapsed,
            response,
        )
        check_flight(flight, "rerank")
        collapsed = code_for_summaries(store, collapsed[: request.top_k], meta, request.layers)

        t0 = time.perf_counter()
        used = fill_page(store, collapsed, analysis.terms, request, response)
        response.stages["results"] = (time.perf_counter() - t0) * 1000
        check_flight(flight, "snippets")

        if request.include_graph:
            t0 = time.perf_counter()
            attach_graph(store, response)
            response.stages["graph"] = (time.perf_counter() - t0) * 1000
            check_flight(flight, "graph")
        response.tokens = used
        response.took_ms = (time.perf_counter() - started) * 1000
        return response

    def _feedback_with_vectors(self, store: SearchStore, rankings: Mapping[str, Ranked]) -> bool:
        """Whether the feedback stream runs although a vector stream answered: when
        the lexical stream's best match stands out (`feedback_vectors_ratio` times its
        second), on an index of at most `feedback_vectors_max_chunks` code chunks
        (retrieval/feedback.py)."""
        return (
            lexical_dominates(rankings.get("lexical", []), self.settings.feedback_vectors_ratio)
            and store.term_counts("code", ())[0] <= self.settings.feedback_vectors_max_chunks
        )

    def _feedback(
        self,
        request: SearchRequest,
        analysis: QueryAnalysis,
        rankings: dict[str, Ranked],
        weights: dict[str, float],
        flight: InFlight,
    ) -> tuple[Ranked, StreamReport | None]:
        """The feedback stream: the query's terms and the words of the first pass's
        best code chunks, by bm25, the best of those chunks first (its report lists
        the words added)."""
        first = [
            c.chunk_id
            for c in fuse_rankings(rankings, weights, self.settings.rrf_k, limit=FEEDBACK_DOCS * 4)
        ]
        added: list[str] = []

        def run(store: SearchStore, inputs: StreamInput) -> Ranked:
            return feedback_ranking(
                store, first, analysis, inputs.filters, inputs.cap, self.settings, added
            )

        inputs = StreamInput(analysis, stream_filters(request), self.settings.candidate_cap)
        ranked, report = self._run_stream(Stream("feedback", run), inputs, flight)
        if report is not None:
            report = replace(report, added_terms=tuple(added))
        return ranked, report
