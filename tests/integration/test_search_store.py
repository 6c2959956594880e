"""The SQLite search store (store/sqlite/search.py) and the meta helper on a real
index file: each read a search makes, with its filters inside the query."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import apsw
import numpy as np
import pytest

from codesift.indexer import IndexSummary
from codesift.store.filters import SearchFilters
from codesift.store.meta import read_meta, write_meta
from codesift.store.search_store import SearchStore
from codesift.store.sqlite.search import SqliteSearchStore
from codesift.store.writer import IndexWriter
from codesift.timespec import TimeFilter

pytestmark = pytest.mark.usefixtures("git_isolation")

MakeRepo = Callable[..., Path]
IndexWorkspace = Callable[..., tuple[apsw.Connection, IndexSummary]]

BILLING_PY = '''\
class Invoice:
    """An invoice to charge."""

    def total(self) -> float:
        return 1.0

    def charge_card(self, card: str) -> bool:
        """Charge the card for the invoice total."""
        return bool(card) and self.total() > 0


def retry_failed_charge(invoice: Invoice) -> bool:
    return invoice.charge_card("visa")
'''

CHARGE_GO = """\
package billing

// ChargeCard charges a card.
func ChargeCard(card string) bool {
\treturn card != ""
}
"""

README_MD = """\
# Billing

How a failed charge is retried: the invoice is charged again.
"""

WORKSPACE = {"billing.py": BILLING_PY, "go/charge.go": CHARGE_GO, "README.md": README_MD}


@pytest.fixture
def conn(make_repo: MakeRepo, index_workspace: IndexWorkspace) -> apsw.Connection:
    connection, _ = index_workspace(make_repo(WORKSPACE))
    return connection


@pytest.fixture
def store(conn: apsw.Connection) -> SqliteSearchStore:
    return SqliteSearchStore(conn)


def layers_of(conn: apsw.Connection, ids: list[int]) -> set[str]:
    rows = conn.execute(
        f"SELECT layer FROM chunks WHERE id IN ({','.join('?' * len(ids))})", ids
    ).fetchall()
    return {str(r[0]) for r in rows}


def paths_of(conn: apsw.Connection, ids: list[int]) -> set[str]:
    rows = conn.execute(
        "SELECT f.path FROM chunks c JOIN files f ON f.id = c.file_id"
        f" WHERE c.id IN ({','.join('?' * len(ids))})",
        ids,
    ).fetchall()
    return {str(r[0]) for r in rows}


def node_id(conn: apsw.Connection, qualified_name: str) -> int:
    (found,) = conn.execute("SELECT id FROM nodes WHERE qualified_name = ?", (qualified_name,))
    return int(found[0])


def test_the_sqlite_store_is_a_search_store(store: SqliteSearchStore) -> None:
    def reads(s: SearchStore) -> str | None:
        return s.meta("root")

    assert reads(store) is not None


def test_lexical_hits_rank_one_layer_best_first(
    conn: apsw.Connection, store: SqliteSearchStore
) -> None:
    hits = store.lexical_hits("code", ("charge", "card"), SearchFilters(("code",)), 50)
    assert hits
    assert layers_of(conn, [cid for cid, _ in hits]) == {"code"}
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    assert store.lexical_hits("code", ("charge", "card"), SearchFilters(("code",)), 1) == hits[:1]
    docs = store.lexical_hits("doc", ("charge",), SearchFilters(("doc",)), 50)
    assert docs and layers_of(conn, [cid for cid, _ in docs]) == {"doc"}
    # Summaries have no text index; no terms, no hits.
    assert store.lexical_hits("summary", ("charge",), SearchFilters(("summary",)), 50) == []
    assert store.lexical_hits("code", (), SearchFilters(("code",)), 50) == []


def test_lexical_hits_filter_inside_the_query(
    conn: apsw.Connection, store: SqliteSearchStore
) -> None:
    every = store.lexical_hits("code", ("charge", "card"), SearchFilters(("code",)), 50)
    go = store.lexical_hits("code", ("charge", "card"), SearchFilters(("code",), ("go",)), 50)
    assert go and paths_of(conn, [cid for cid, _ in go]) == {"go/charge.go"}
    assert go == [hit for hit in every if hit[0] in {cid for cid, _ in go}]
    by_name = SearchFilters(("code",), paths=("billing.py",))
    assert paths_of(conn, [c for c, _ in store.lexical_hits("code", ("charge",), by_name, 50)]) == {
        "billing.py"
    }
    future = SearchFilters(("code",), times=TimeFilter(since=4_000_000_000.0))
    assert store.lexical_hits("code", ("charge",), future, 50) == []
    past = SearchFilters(("code",), times=TimeFilter(as_of=1_000_000.0))
    assert store.lexical_hits("code", ("charge",), past, 50) == []


def test_phrase_hits_find_a_line_by_its_words_in_order(
    conn: apsw.Connection, store: SqliteSearchStore
) -> None:
    filters = SearchFilters(("code",))
    hits = store.phrase_hits("code", 'return invoice.charge_card("visa")', filters, 50)
    assert hits and paths_of(conn, [cid for cid, _ in hits]) == {"billing.py"}
    # the same words in another order are not the line
    assert store.phrase_hits("code", "charge_card invoice return", filters, 50) == []
    go_only = SearchFilters(("code",), ("go",))
    assert store.phrase_hits("code", 'return invoice.charge_card("visa")', go_only, 50) == []
    # no words, the doc layer, or FTS5 syntax: nothing, and no error
    assert store.phrase_hits("code", "();", filters, 50) == []
    assert store.phrase_hits("doc", "invoice is charged", SearchFilters(("doc",)), 50) == []
    for text in ('"', 'say "hi" NEAR(a b)', "col:term *"):
        store.phrase_hits("code", text, filters, 10)


def test_path_hits_find_the_files_a_name_or_path_names(
    conn: apsw.Connection, store: SqliteSearchStore
) -> None:
    every = SearchFilters(("code", "doc"))
    (hit,) = store.path_hits("charge.go", every, 10)
    assert paths_of(conn, [hit[0]]) == {"go/charge.go"} and hit[1] == 0.95
    assert store.path_hits("go/charge.go", every, 10)[0][1] == 1.0
    assert store.path_hits("GO/Charge.go", every, 10)[0][1] == 0.9  # case aside
    (doc,) = store.path_hits("README.md", every, 10)
    assert layers_of(conn, [doc[0]]) == {"doc"}  # a file without code: its doc chunk
    # a suffix is a whole path component; LIKE's wildcards are searched literally
    assert store.path_hits("harge.go", every, 10) == []
    assert store.path_hits("%.go", every, 10) == []
    assert store.path_hits("_o/charge.go", every, 10) == []
    assert store.path_hits("charge.go", SearchFilters(("code",), ("python",)), 10) == []


def test_path_hits_with_a_line_give_the_chunk_holding_it(
    conn: apsw.Connection, store: SqliteSearchStore
) -> None:
    """`charge_card`'s return is line 9 of billing.py: the method's chunk (lines
    7-9), not the class's (which holds the method as a stub line) nor the file's
    first."""
    code = SearchFilters(("code",))
    (hit,) = store.path_hits("billing.py", code, 10, line=9)
    start, end = conn.execute(
        "SELECT start_line, end_line FROM chunks WHERE id = ?", [hit[0]]
    ).fetchone()
    assert (start, end) == (7, 9)
    (first,) = store.path_hits("billing.py", code, 10)
    assert first[0] != hit[0]
    # past the file's end: the file's first chunk, as without a line
    assert store.path_hits("billing.py", code, 10, line=999) == [first]


def test_query_text_never_reaches_match_as_syntax(store: SqliteSearchStore) -> None:
    filters = SearchFilters(("code",))
    for term in ('"', "NEAR(a b)", "col:term", "*", "AND", "a OR"):
        store.lexical_hits("code", (term, "charge"), filters, 10)  # no FTS5 syntax error
    assert store.symbol_candidates("x' OR '1'='1", filters, 10) == []


def test_symbol_candidates_find_names_in_any_case_and_look_alikes(
    store: SqliteSearchStore,
) -> None:
    filters = SearchFilters(("code",))
    exact = {c.qualified_name for c in store.symbol_candidates("chargecard", filters, 10)}
    assert "billing.ChargeCard" in exact
    alike = store.symbol_candidates("charge_cards", filters, 10)
    assert "billing.Invoice.charge_card" in {c.qualified_name for c in alike}
    first = alike[0]
    assert first.start_line <= first.end_line and first.kind
    go_only = store.symbol_candidates("chargecard", SearchFilters(("code",), ("go",)), 10)
    assert "billing.ChargeCard" in {c.qualified_name for c in go_only}
    assert "billing.Invoice.charge_card" not in {c.qualified_name for c in go_only}


def test_chunks_for_nodes_takes_the_first_layer_a_node_has(
    conn: apsw.Connection, store: SqliteSearchStore
) -> None:
    method = node_id(conn, "billing.Invoice.charge_card")
    code = store.chunks_for_nodes([method], ("code", "summary"))
    summary = store.chunks_for_nodes([method], ("summary", "code"))
    assert set(code) == set(summary) == {method}
    assert layers_of(conn, [code[method]]) == {"code"}
    assert layers_of(conn, [summary[method]]) == {"summary"}
    assert store.chunks_for_nodes([method], ("doc",)) == {}


def test_rows_after_fusion(conn: apsw.Connection, store: SqliteSearchStore) -> None:
    invoice = node_id(conn, "billing.Invoice")
    method = node_id(conn, "billing.Invoice.charge_card")
    chunk = store.chunks_for_nodes([method], ("code",))[method]
    (place,) = store.chunk_places([chunk])
    assert place == (chunk, method, "code", "billing.py", "python", False, "charge_card")
    assert store.chunk_places([]) == []
    assert store.chunk_rows([chunk])[chunk].qualified_name == "billing.Invoice.charge_card"
    spans = store.child_spans([invoice])[invoice]
    assert [s.start_line for s in spans] == sorted(s.start_line for s in spans)
    assert all(s.stub_start <= s.start_line <= s.end_line for s in spans)
    assert store.child_spans([]) == {}
    times = store.chunk_times([chunk])
    assert times[chunk].changed is not None and times[chunk].oid is not None
    assert store.node_rows([method])[method].name == "charge_card"
    assert any(e.kind == "calls" for e in store.edges_from(method))
    assert any(e.kind == "contains" for e in store.edges_to(method))
    assert store.meta("root") == str(Path(store.meta("root") or "").resolve())
    assert store.meta("no such key") is None


def test_nearest_chunks_and_current_chunks(conn: apsw.Connection, store: SqliteSearchStore) -> None:
    rng = np.random.default_rng(3)
    rows = conn.execute(
        "SELECT id, layer, text_hash FROM chunks WHERE layer IN ('code', 'summary', 'doc')"
    ).fetchall()
    with conn:
        for cid, layer, text_hash in rows:
            conn.execute(
                "INSERT INTO chunk_vectors (chunk_id, layer, embedding) VALUES (?, ?, vec_int8(?))",
                (cid, layer, rng.integers(-127, 127, 384, dtype=np.int8).tobytes()),
            )
            conn.execute(
                "INSERT INTO embedded (chunk_id, text_hash) VALUES (?, ?)", (cid, text_hash)
            )
    query = rng.integers(-127, 127, 384, dtype=np.int8).tobytes()
    hits = store.nearest_chunks(query, ["code"], 3, SearchFilters(("code",)))
    assert len(hits) == 3 and layers_of(conn, [cid for cid, _ in hits]) == {"code"}
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    none = SearchFilters(("code",), times=TimeFilter(since=4_000_000_000.0))
    assert store.nearest_chunks(query, ["code"], 3, none) == []
    ids = [cid for cid, _ in hits]
    assert store.current_chunks(ids, SearchFilters(("code",))) == set(ids)
    go = store.current_chunks(ids, SearchFilters(("code",), ("go",)))
    assert go <= set(ids) and paths_of(conn, list(go) or [-1]) <= {"go/charge.go"}
    with conn:  # an edit made the first vector stale
        conn.execute("UPDATE embedded SET text_hash = text_hash + 1 WHERE chunk_id = ?", (ids[0],))
    assert store.current_chunks(ids, SearchFilters(("code",))) == set(ids[1:])


def test_meta_values_are_set_replaced_and_removed_through_one_helper(
    conn: apsw.Connection,
) -> None:
    write_meta(conn, "test_key", "one")
    write_meta(conn, "test_key", "two")
    assert read_meta(conn, "test_key") == "two"
    assert len(conn.execute("SELECT value FROM meta WHERE key = 'test_key'").fetchall()) == 1
    write_meta(conn, "test_key", None)
    assert read_meta(conn, "test_key") is None
    write_meta(conn, "test_key", None)  # removing what is not there is fine


def test_the_writer_reads_the_file_catalog(conn: apsw.Connection, tmp_path: Path) -> None:
    writer = IndexWriter(conn)
    known = writer.known_files()
    assert set(known) == set(WORKSPACE) and writer.file_count() == len(WORKSPACE)
    size, mtime_ns = known["billing.py"]
    assert size == len(BILLING_PY.encode()) and mtime_ns > 0
    assert writer.content_hash("billing.py")
    assert writer.content_hash("missing.py") is None
    with conn:
        writer.record_skipped("big.bin", 10, 20, "binary")
        writer.record_update(str(tmp_path))
    assert writer.skipped_files() == {"big.bin": (10, 20, "binary")}
    assert read_meta(conn, "root") == str(tmp_path)
    assert float(read_meta(conn, "last_update") or 0) > 0


def test_term_counts_agree_with_a_count_of_the_rows(
    conn: apsw.Connection, store: SqliteSearchStore
) -> None:
    """Counted once, then read from the cache (one term cached, the others not):
    each term's count is the rows of code_fts that hold it."""
    terms = ["retry", "charge", "invoice", "nosuchword"]
    expected = {
        t: conn.execute(
            "SELECT count(*) FROM code_fts WHERE code_fts MATCH ?", (f'"{t}"',)
        ).fetchone()[0]
        for t in terms
    }
    total = conn.execute("SELECT count(*) FROM code_fts").fetchone()[0]
    assert expected["retry"] > 0 and expected["nosuchword"] == 0
    assert store.term_counts("code", terms[:1]) == (total, {"retry": expected["retry"]})
    for _ in range(2):
        assert store.term_counts("code", terms) == (total, expected)
