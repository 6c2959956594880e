"""Streams side by side: the same answers as one after the other, a failing stream
contributes nothing, cancellation interrupts the SQL and raises SearchCancelled,
several threads can search at once; graph expansion on a real index. Concurrency is
shown with barriers and events, never with how long something took."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

import apsw
import pytest

from codesift.config import SearchSettings
from codesift.errors import SearchCancelled
from codesift.indexer import IndexSummary
from codesift.retrieval import Searcher, SearchRequest, SearchResponse
from codesift.retrieval.flight import Stream as _Stream
from codesift.retrieval.flight import StreamInput
from codesift.retrieval.query import trigrams
from codesift.retrieval.streams import Ranked
from codesift.store.search_store import SearchStore
from codesift.store.sqlite.search import SqliteSearchStore

pytestmark = pytest.mark.usefixtures("git_isolation")

MakeRepo = Callable[..., Path]
IndexWorkspace = Callable[..., tuple[apsw.Connection, IndexSummary]]

CART_PY = '''\
"""A shopping cart."""


class Cart:
    """Items a customer is about to buy."""

    def __init__(self) -> None:
        self.items: list[Item] = []

    def add(self, item: Item) -> None:
        self.items.append(item)
        self.touch()

    def touch(self) -> None:
        pass

    def total(self) -> float:
        return sum_prices(self.items)


class DiscountCart(Cart):
    def total(self) -> float:
        return sum_prices(self.items) * 0.9


class Item:
    price: float = 0.0


def sum_prices(items: list[Item]) -> float:
    """Add up the prices of the items."""
    return sum(i.price for i in items)


def checkout(cart: Cart) -> bool:
    """Charge the customer's card for everything in the cart."""
    return charge_card(sum_prices(cart.items))


def charge_card(amount: float) -> bool:
    return amount > 0
'''

SERVER_GO = """\
package server

// Server routes HTTP requests to registered handlers.
type Server struct {
\troutes map[string]string
}

// Handle dispatches a request to the handler registered for its path.
func (s *Server) Handle(path string) string {
\treturn s.lookup(path)
}

func (s *Server) lookup(path string) string {
\treturn s.routes[path]
}
"""

WORKSPACE = {
    "shop/cart.py": CART_PY,
    "tests/test_cart.py": (
        "from shop.cart import Item, sum_prices\n\n\n"
        "def test_sum_prices_of_nothing():\n"
        "    assert sum_prices([]) == 0\n"
    ),
    "server/server.go": SERVER_GO,
    "README.md": "# Shop\n\nA cart adds up item prices and charges a card at checkout.\n",
}

QUERIES = [
    "sum_prices",
    "Cart.total",
    "func (s *Server) Handle",
    "charge the card at checkout",
    "how are item prices added up",
]


@pytest.fixture
def conn(make_repo: MakeRepo, index_workspace: IndexWorkspace) -> apsw.Connection:
    connection, _ = index_workspace(make_repo(WORKSPACE))
    return connection


def _answer(response: SearchResponse) -> list[tuple[int, float, tuple[str, ...]]]:
    return [(r.chunk_id, r.score, tuple(h.stream for h in r.provenance)) for r in response.results]


class ExtraStreamSearcher(Searcher):
    """The shipped streams plus one more (a test double for a slow or failing stream)."""

    def __init__(self, conn: apsw.Connection, extra: list[_Stream], **kwargs: object) -> None:
        super().__init__(conn, **kwargs)  # type: ignore[arg-type]
        self.extra = extra

    def _streams(self) -> list[_Stream]:
        return [*super()._streams(), *self.extra]


def test_parallel_and_sequential_give_the_same_answers(conn: apsw.Connection) -> None:
    with Searcher(conn) as parallel:
        assert parallel.parallel
        sequential = Searcher(conn, parallel=False)
        for query in QUERIES:
            a = parallel.search(SearchRequest(query))
            b = sequential.search(SearchRequest(query))
            assert _answer(a) == _answer(b), query
            assert [s.stream for s in a.streams] == [s.stream for s in b.streams]
            assert all(s.error is None for s in a.streams)


def test_streams_run_on_worker_threads_side_by_side(conn: apsw.Connection) -> None:
    # Each extra stream waits until all three are running: run one after the other,
    # the first would wait alone until the barrier's deadline and then break it.
    barrier = threading.Barrier(3, timeout=30)
    runs: dict[str, tuple[int, float]] = {}
    lock = threading.Lock()

    def meeting(name: str) -> _Stream:
        def run(c: SearchStore, i: StreamInput) -> Ranked:
            started = time.perf_counter()
            barrier.wait()  # raises BrokenBarrierError if the others never come
            with lock:
                runs[name] = (threading.get_ident(), (time.perf_counter() - started) * 1000)
            return []

        return _Stream(name, run)

    names = ["meet_a", "meet_b", "meet_c"]
    searcher = ExtraStreamSearcher(conn, [meeting(name) for name in names])
    response = searcher.search(SearchRequest("sum_prices"))

    reports = {s.stream: s for s in response.streams}
    assert [reports[name].error for name in names] == [None, None, None]
    assert not barrier.broken
    assert sorted(runs) == names
    threads = {ident for ident, _ in runs.values()}
    assert len(threads) == 3 and threading.get_ident() not in threads
    # A stream's reported time covers its run, and the streams stage covers them all.
    for name in names:
        assert reports[name].ms >= runs[name][1]
    assert response.stages["streams"] >= max(ms for _, ms in runs.values())
    assert _answer(response) == _answer(
        Searcher(conn, parallel=False).search(SearchRequest("sum_prices"))
    )


def test_a_failing_stream_logs_a_warning_and_contributes_nothing(
    conn: apsw.Connection, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(c: SearchStore, i: StreamInput) -> Ranked:
        connection_of(c).execute("SELECT * FROM no_such_table").fetchall()
        return [(1, 1.0)]

    def buggy(c: SearchStore, i: StreamInput) -> Ranked:
        raise RuntimeError("a bug in a stream")

    expected = Searcher(conn).search(SearchRequest("sum_prices"))
    for parallel in (True, False):
        searcher = ExtraStreamSearcher(
            conn, [_Stream("broken", broken), _Stream("buggy", buggy)], parallel=parallel
        )
        with caplog.at_level(logging.WARNING, logger="codesift.retrieval.search"):
            response = searcher.search(SearchRequest("sum_prices"))
        reports = {s.stream: s for s in response.streams}
        assert "no_such_table" in (reports["broken"].error or "")
        assert reports["broken"].candidates == 0
        assert "a bug in a stream" in (reports["buggy"].error or "")
        assert reports["lexical"].error is None
        assert _answer(response) == _answer(expected)
        assert "stream broken failed" in caplog.text
        assert "stream buggy failed" in caplog.text
        caplog.clear()


def test_a_reader_that_cannot_open_falls_back_to_one_connection(
    conn: apsw.Connection, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import codesift.retrieval.search as search_module

    def refuse(path: object) -> apsw.Connection:
        raise apsw.CantOpenError("unable to open database file")

    expected = _answer(Searcher(conn, parallel=False).search(SearchRequest("sum_prices")))
    monkeypatch.setattr(search_module, "open_reader", refuse)
    searcher = Searcher(conn)
    assert searcher.parallel
    with caplog.at_level(logging.WARNING, logger="codesift.retrieval.search"):
        first = searcher.search(SearchRequest("sum_prices"))
    assert _answer(first) == expected
    assert all(s.error is None for s in first.streams)
    assert searcher.parallel is False
    assert "streams run one after the other" in caplog.text
    assert _answer(searcher.search(SearchRequest("sum_prices"))) == expected


def test_a_failing_query_embedding_leaves_the_vector_streams_empty(
    conn: apsw.Connection,
) -> None:
    class BrokenEmbedder:
        def embed_query(self, text: str) -> object:
            raise RuntimeError("model missing")

    searcher = Searcher(conn, embedder=BrokenEmbedder())  # type: ignore[arg-type]
    response = searcher.search(SearchRequest("sum_prices"))
    reports = {s.stream: s for s in response.streams}
    assert "model missing" in (reports["vector"].error or "")
    assert reports["vector"].candidates == 0
    assert response.results[0].qualified_name == "cart.sum_prices"


def test_a_set_cancel_event_raises_before_any_work(conn: apsw.Connection) -> None:
    cancel = threading.Event()
    cancel.set()
    for parallel in (True, False):
        with pytest.raises(SearchCancelled):
            Searcher(conn, parallel=parallel).search(SearchRequest("sum_prices"), cancel=cancel)


def connection_of(store: SearchStore) -> apsw.Connection:
    """The SQLite connection under a stream's store, for statements of the test's own."""
    assert isinstance(store, SqliteSearchStore)
    return store.connection


class EndlessStatement:
    """A SQL statement that never ends unless interrupted: `run(conn)` executes it,
    `running` is set once it runs (SQLite interrupts only statements that are
    running when the interrupt comes), `interrupted` once it was interrupted.
    `abandon()` ends it anyway, so that a statement a cancel failed to interrupt
    does not keep a stream worker (and the interpreter's exit) busy."""

    SQL = (
        "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + next_row() FROM n)"
        " SELECT count(*) FROM n"
    )

    def __init__(self) -> None:
        self.running = threading.Event()
        self.interrupted = threading.Event()
        self._abandoned = threading.Event()

    def _next_row(self, *args: object) -> int:
        self.running.set()
        if self._abandoned.is_set():
            raise RuntimeError("abandoned by the test")
        return 1

    def run(self, conn: apsw.Connection) -> None:
        conn.create_scalar_function("next_row", self._next_row, 0)
        try:
            conn.execute(self.SQL).fetchall()
        except apsw.InterruptError:
            self.interrupted.set()
            raise

    def abandon(self) -> None:
        self._abandoned.set()


def search_in_thread(
    searcher: Searcher, cancel: threading.Event
) -> tuple[threading.Thread, list[BaseException | None]]:
    """Start `searcher.search` on a thread; the list gets its exception (or None)."""
    outcome: list[BaseException | None] = []

    def search() -> None:
        try:
            searcher.search(SearchRequest("sum_prices"), cancel=cancel)
        except BaseException as exc:  # handed to the test thread
            outcome.append(exc)
        else:
            outcome.append(None)

    worker = threading.Thread(target=search, daemon=True)
    worker.start()
    return worker, outcome


def test_cancel_interrupts_a_running_stream_and_raises(conn: apsw.Connection) -> None:
    statement = EndlessStatement()

    def endless(c: SearchStore, i: StreamInput) -> Ranked:
        statement.run(connection_of(c))
        return []

    searcher = ExtraStreamSearcher(conn, [_Stream("endless", endless)])
    cancel = threading.Event()
    try:
        worker, outcome = search_in_thread(searcher, cancel)
        # Deadlines against a hang, not timing checks: the statement never ends.
        assert statement.running.wait(60), "the endless stream's statement never started"
        cancel.set()  # the client cancels while the stream's statement runs
        worker.join(60)
        assert not worker.is_alive(), "the search was not interrupted"
        assert len(outcome) == 1 and isinstance(outcome[0], SearchCancelled), outcome
        assert statement.interrupted.wait(60), "the stream's SQL was not interrupted"
    finally:
        statement.abandon()
    # The searcher (and its worker connections) still answers afterwards.
    after = Searcher(conn).search(SearchRequest("sum_prices"))
    assert after.results[0].qualified_name == "cart.sum_prices"


def test_cancel_stops_a_statement_that_starts_after_it(conn: apsw.Connection) -> None:
    # An interrupt reaches only statements already running: one that starts just
    # after the cancel must still stop (it used to run to its end).
    statement = EndlessStatement()
    entered = threading.Event()
    cancelled = threading.Event()

    def starts_late(c: SearchStore, i: StreamInput) -> Ranked:
        entered.set()
        assert cancelled.wait(60), "the test never cancelled"
        statement.run(connection_of(c))
        return []

    searcher = ExtraStreamSearcher(conn, [_Stream("starts_late", starts_late)])
    cancel = threading.Event()
    try:
        worker, outcome = search_in_thread(searcher, cancel)
        assert entered.wait(60), "the stream never ran"
        cancel.set()
        worker.join(60)  # the search itself returns once cancelled
        assert not worker.is_alive(), "the search was not cancelled"
        assert len(outcome) == 1 and isinstance(outcome[0], SearchCancelled), outcome
        cancelled.set()  # only now does the stream start its statement
        assert statement.interrupted.wait(60), "the statement that started after the cancel ran on"
    finally:
        cancelled.set()
        statement.abandon()


def test_cancel_between_stages_in_sequential_mode(conn: apsw.Connection) -> None:
    cancel = threading.Event()

    def cancels(c: SearchStore, i: StreamInput) -> Ranked:
        cancel.set()  # as if the client cancelled while this stream ran
        return []

    searcher = ExtraStreamSearcher(conn, [_Stream("cancels", cancels)], parallel=False)
    with pytest.raises(SearchCancelled):
        searcher.search(SearchRequest("sum_prices"), cancel=cancel)


def test_many_threads_search_at_once(conn: apsw.Connection) -> None:
    searcher = Searcher(conn)
    expected = {
        q: _answer(Searcher(conn, parallel=False).search(SearchRequest(q))) for q in QUERIES
    }
    failures: list[str] = []

    def worker(offset: int) -> None:
        for n in range(10):
            query = QUERIES[(offset + n) % len(QUERIES)]
            try:
                got = _answer(searcher.search(SearchRequest(query)))
            except Exception as exc:  # pragma: no cover - reported below
                failures.append(f"{query}: {exc!r}")
                continue
            if got != expected[query]:
                failures.append(f"{query}: different answer")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert failures == []
    searcher.close()


def test_graph_lists_parent_callees_and_callers_with_their_edge_kinds(
    conn: apsw.Connection,
) -> None:
    response = Searcher(conn).search(SearchRequest("Cart.total", top_k=3, include_graph=True))
    first = response.results[0]
    assert first.qualified_name == "cart.Cart.total"
    edges = {(e.relation, e.kind, e.direction, e.node.qualified_name) for e in first.graph}
    assert ("parent", "contains", "in", "cart.Cart") in edges
    assert ("callee", "calls", "out", "cart.sum_prices") in edges

    response = Searcher(conn).search(SearchRequest("sum_prices", top_k=1, include_graph=True))
    first = response.results[0]
    edges = {(e.relation, e.kind, e.direction, e.node.qualified_name) for e in first.graph}
    assert ("parent", "contains", "in", "cart") in edges
    callers = [e.node.qualified_name for e in first.graph if e.relation == "caller"]
    assert set(callers[:3]) == {"cart.Cart.total", "cart.DiscountCart.total", "cart.checkout"}
    assert callers[3:] == ["test_cart.test_sum_prices_of_nothing"]  # tests last
    caller_lines = {e.line for e in first.graph if e.relation == "caller"}
    assert caller_lines == {18, 23, 37, 5}

    response = Searcher(conn).search(SearchRequest("DiscountCart", top_k=1, include_graph=True))
    kinds = {(e.relation, e.kind, e.node.qualified_name) for e in response.results[0].graph}
    assert ("base", "inherits", "cart.Cart") in kinds


def test_graph_is_empty_unless_asked_and_bounded_in_all(conn: apsw.Connection) -> None:
    plain = Searcher(conn).search(SearchRequest("cart total prices", top_k=20))
    assert all(r.graph == () for r in plain.results)
    assert "graph" not in plain.stages
    full = Searcher(conn).search(SearchRequest("cart total prices", top_k=20, include_graph=True))
    shown = {e.node.id for r in full.results for e in r.graph}
    assert 0 < len(shown) <= 20
    for result in full.results:
        if result.kind in ("section", "text"):
            assert result.graph == ()


def test_go_method_graph(conn: apsw.Connection) -> None:
    response = Searcher(conn).search(SearchRequest("Server.Handle", top_k=1, include_graph=True))
    first = response.results[0]
    assert first.qualified_name.endswith("Server.Handle")
    relations = {(e.relation, e.node.name) for e in first.graph}
    assert ("callee", "lookup") in relations


def fts_bm25(conn: apsw.Connection, terms: list[str]) -> list[tuple[int, float]]:
    """(rowid, bm25) of code_fts rows matching any of `terms`, best first."""
    match = " OR ".join(f'"{t}"' for t in terms)
    return [
        (int(r[0]), float(r[1]))
        for r in conn.execute(
            "SELECT rowid, bm25(code_fts) s FROM code_fts WHERE code_fts MATCH ? ORDER BY s, rowid",
            (match,),
        )
    ]


def test_terms_in_half_the_rows_are_not_scored_and_rankings_keep() -> None:
    from codesift.store.sqlite import search as sqlite_search

    conn = apsw.Connection(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE code_fts USING fts5(body, tokenize=\"unicode61 tokenchars '_'\")"
    )
    texts = [f"def common_{i}(self): return self.value" for i in range(8)] + [
        "def parse_rare(self): return rare_words",
        "def rare(self): return self",
    ]
    for i, text in enumerate(texts, start=1):
        conn.execute("INSERT INTO code_fts (rowid, body) VALUES (?, ?)", (i, text))
    assert sqlite_search.scored_terms(conn, "code_fts", ["self", "rare", "def"]) == ["rare"]
    assert sqlite_search.scored_terms(conn, "code_fts", ["self", "def"]) == ["self", "def"]
    assert sqlite_search.scored_terms(conn, "code_fts", ["self"]) == ["self"]
    # A term no row holds (a query word's variant) does not make the common ones go:
    # it matches nothing, so leaving them out would leave nothing to match. It is
    # left out itself (it adds nothing to any row's score).
    assert sqlite_search.scored_terms(conn, "code_fts", ["self", "def", "nowordhere"]) == [
        "self",
        "def",
    ]
    assert sqlite_search.scored_terms(conn, "code_fts", ["rare", "nowordhere"]) == ["rare"]

    every = fts_bm25(conn, ["self", "rare", "def"])
    scored = fts_bm25(conn, ["rare"])
    assert [r for r, _ in scored] == [r for r, _ in every][: len(scored)]
    for (_, a), (_, b) in zip(scored, every, strict=False):
        assert abs(a - b) < 1e-5


def test_terms_no_row_holds_change_no_score_and_are_looked_up_again(tmp_path: Path) -> None:
    from codesift.store.sqlite import search as sqlite_search

    # A file: its counts are cached for the process, as an index's are.
    conn = apsw.Connection(str(tmp_path / "terms.db"))
    conn.execute("CREATE VIRTUAL TABLE code_fts USING fts5(body)")
    with conn:
        for i, text in enumerate(
            ["parse the header line", "header fields", "parse a date", "line endings"]
            + ["other words"] * 6,
            start=1,
        ):
            conn.execute("INSERT INTO code_fts (rowid, body) VALUES (?, ?)", (i, text))

    terms = ["parse", "parsi", "header", "heade"]
    assert sqlite_search.scored_terms(conn, "code_fts", terms) == ["parse", "header"]
    # The same rows and the same scores, to the bit.
    assert fts_bm25(conn, ["parse", "header"]) == fts_bm25(conn, terms)
    # A word indexed after its count (0) was cached is scored: the cache is not trusted
    # for absence.
    with conn:
        conn.execute("INSERT INTO code_fts (rowid, body) VALUES (11, 'heade parsi')")
    assert sqlite_search.scored_terms(conn, "code_fts", terms) == terms
    assert 11 in {r for r, _ in fts_bm25(conn, terms)}
    conn.close()


def test_signature_query_with_common_terms_still_finds_its_definition(
    conn: apsw.Connection,
) -> None:
    response = Searcher(conn).search(SearchRequest("def total(self) -> float"))
    assert response.results[0].qualified_name in {"cart.Cart.total", "cart.DiscountCart.total"}


def test_common_terms_of_a_large_index_are_not_scored() -> None:
    from codesift.store.sqlite import search as sqlite_search

    def table(rows: int, common: int) -> apsw.Connection:
        conn = apsw.Connection(":memory:")
        conn.execute("CREATE VIRTUAL TABLE code_fts USING fts5(body)")
        with conn:
            for i in range(1, rows + 1):
                words = (
                    "value" + (" handler" if i <= common else "") + (" sprocket" if i < 5 else "")
                )
                conn.execute("INSERT INTO code_fts (rowid, body) VALUES (?, ?)", (i, words))
        return conn

    # 15% of 20,000 rows: common enough to leave out at max_df 0.1, not at 0.5.
    large = table(20_000, 3_000)
    assert sqlite_search.scored_terms(large, "code_fts", ["handler", "sprocket"], 0.1) == [
        "sprocket"
    ]
    assert sqlite_search.scored_terms(large, "code_fts", ["handler", "sprocket"], 0.5) == [
        "handler",
        "sprocket",
    ]
    # 6% of 50,000 rows: left out by default (a twentieth), kept at a tenth.
    default = SearchSettings().lexical_max_df
    larger = table(50_000, 3_000)
    assert sqlite_search.scored_terms(larger, "code_fts", ["handler", "sprocket"], default) == [
        "sprocket"
    ]
    assert sqlite_search.scored_terms(larger, "code_fts", ["handler", "sprocket"], 0.1) == [
        "handler",
        "sprocket",
    ]
    # The same share of a small index is cheap to score: kept.
    small = table(200, 30)
    assert sqlite_search.scored_terms(small, "code_fts", ["handler", "sprocket"], 0.1) == [
        "handler",
        "sprocket",
    ]


def test_name_candidates_are_counted_over_the_rarest_trigrams_within_a_budget() -> None:
    from codesift.store.sqlite import search as sqlite_search

    def names(rows: int) -> apsw.Connection:
        conn = apsw.Connection(":memory:")
        conn.execute(
            "CREATE VIRTUAL TABLE names_fts USING fts5("
            "name, detail='none', tokenize='trigram case_sensitive 0')"
        )
        with conn:
            for i in range(1, rows + 1):  # test_1 ...: `est` in every name but two
                conn.execute("INSERT INTO names_fts (rowid, name) VALUES (?, ?)", (i, f"test_{i}"))
            conn.execute("INSERT INTO names_fts (rowid, name) VALUES (?, 'redirect_request')", (0,))
            conn.execute("INSERT INTO names_fts (rowid, name) VALUES (?, 'redirect')", (-1,))
        return conn

    probe = trigrams("redirect_request")
    assert "est" in probe
    many = names(sqlite_search.NAME_POSTINGS_BUDGET + 100)
    # `est`'s postings alone are over the budget: the rarer trigrams are counted.
    assert sqlite_search.telling_trigrams(many, probe) == [tri for tri in probe if tri != "est"]
    # The names sharing telling trigrams come first; `test_...` names share no other.
    assert sqlite_search.name_candidates_by_trigrams(many, "redirect_request", 5) == [0, -1]
    # The rarest trigram is counted however many postings it has.
    assert sqlite_search.telling_trigrams(many, ["est", "tes"]) in (["est"], ["tes"])
    # When all postings fit the budget, every trigram is counted.
    assert sqlite_search.telling_trigrams(names(100), probe) == probe
