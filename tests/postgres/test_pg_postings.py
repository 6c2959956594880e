"""The lexical stream's term postings (term_stats, schema migration 7): the BM25
scored from them equals the one scored from the chunks' tsvectors, and the
migration fills them for a database written before it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
import pytest

from codesift.engine.postgres import SharedIndexReport, index_into
from codesift.store.filters import SearchFilters
from codesift.store.postgres import PostgresSearchStore, Reader, migrate
from codesift.store.postgres.statistics import refresh_statistics

pytestmark = pytest.mark.usefixtures("git_isolation")

NO_VECTORS = {"embedding": {"enabled": False}}
LAYERS = ("code", "ast", "doc")

FILES = {
    "billing/retry.py": (
        "class RetryPolicy:\n"
        '    """How a failed charge is retried: exponential backoff."""\n\n'
        "    def next_delay(self, attempt: int) -> float:\n"
        "        return 2.0 ** attempt\n\n\n"
        "def retry_failed_charge(charge, policy: RetryPolicy) -> bool:\n"
        "    for attempt in range(5):\n"
        "        if charge.submit():\n"
        "            return True\n"
        "    return False\n"
    ),
    "billing/invoice.py": (
        "class Invoice:\n"
        '    """An invoice with line items and a total charge."""\n\n'
        "    def total_amount(self) -> float:\n"
        "        return sum(self.items)\n\n"
        "    def charge_again(self, charge) -> None:\n"
        "        charge.submit()\n"
        "        charge.submit()\n"
    ),
    "http/server.py": (
        "def parse_http_header(line: str) -> tuple[str, str]:\n"
        '    """Split one HTTP header line into its name and value."""\n'
        "    name, _, value = line.partition(':')\n"
        "    return name.strip().lower(), value.strip()\n"
    ),
    "docs/billing.md": (
        "# Billing\n\nCharges that fail are retried with exponential backoff.\n\n"
        "## Invoices\n\nEvery invoice lists its items and computes a total charge.\n"
    ),
}

TERMS = {
    "code": ["charge", "submit", "retry", "header", "line", "invoice", "attempt"],
    "ast": ["charge", "retry", "header", "total", "amount"],
    "doc": ["charges", "retried", "invoice", "total", "the"],
}

POSTINGS = (
    "SELECT layer, lexeme, repo_id, chunks, chunk_ids, occurrences, lengths FROM term_stats"
    " ORDER BY layer, lexeme, repo_id"
)


@pytest.fixture
def shared(pg_dsn: str, make_repo: Any) -> SharedIndexReport:
    root: Path = make_repo(FILES, name="billing")
    return index_into(pg_dsn, root, repo="acme/billing@main", overrides=NO_VECTORS)


def hits_both_ways(
    conn: psycopg.Connection[Any], layer: str, terms: list[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
    store = PostgresSearchStore(conn, Reader())
    from_postings = store.lexical_hits(layer, terms, SearchFilters(LAYERS), 300)
    with monkeypatch.context() as patched:
        patched.setattr(PostgresSearchStore, "_postings_hits", lambda *_args: None)
        from_tsvectors = store.lexical_hits(layer, terms, SearchFilters(LAYERS), 300)
    return from_postings, from_tsvectors


@pytest.mark.parametrize("layer", ["code", "ast", "doc"])
def test_postings_score_as_the_tsvectors_do(
    pg_dsn: str, shared: SharedIndexReport, layer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        for size in (1, 2, len(TERMS[layer])):
            terms = TERMS[layer][:size]
            from_postings, from_tsvectors = hits_both_ways(conn, layer, terms, monkeypatch)
            assert from_postings, terms
            assert [c for c, _ in from_postings] == [c for c, _ in from_tsvectors], terms
            for (_, a), (_, b) in zip(from_postings, from_tsvectors, strict=True):
                # ts_rank_cd's frequencies are float4: the same scores to ~1e-6.
                assert a == pytest.approx(b, rel=1e-5)


def test_the_migration_fills_postings_of_an_existing_database(
    pg_dsn: str, shared: SharedIndexReport
) -> None:
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        written = conn.execute(POSTINGS).fetchall()
        assert written and all(row[4] is not None for row in written)
        # The database as a codesift before migration 7 left it.
        conn.execute(
            "ALTER TABLE term_stats DROP COLUMN chunk_ids, DROP COLUMN occurrences,"
            " DROP COLUMN lengths"
        )
        conn.execute("DELETE FROM schema_migrations WHERE version = 7")
        migrate(conn)
        assert conn.execute(POSTINGS).fetchall() == written
        # A later run with nothing changed rewrites none of them.
        repo_id = int(written[0][2])
        with conn.transaction():
            assert refresh_statistics(conn, repo_id) == len(
                conn.execute("SELECT 1 FROM layer_stats").fetchall()
            )
        assert conn.execute(POSTINGS).fetchall() == written


def test_a_reader_gets_no_postings_of_a_repository_it_may_not_read(
    pg_dsn: str, shared: SharedIndexReport
) -> None:
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        nobody = PostgresSearchStore(conn, Reader(principal="nobody"))
        for layer, terms in TERMS.items():
            assert nobody.lexical_hits(layer, terms, SearchFilters(LAYERS), 300) == []


def test_term_counts_are_the_sqlite_stores(
    pg_dsn: str, shared: SharedIndexReport, make_repo: Any, index_workspace: Any
) -> None:
    from codesift.store.sqlite.search import SqliteSearchStore

    local, _ = index_workspace(make_repo(FILES, name="local"))
    sqlite = SqliteSearchStore(local)
    terms = [*TERMS["code"], "nowhere"]
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        store = PostgresSearchStore(conn, Reader())
        total, counts = store.term_counts("code", terms)
        assert (total, counts) == sqlite.term_counts("code", terms)
        assert total > 0 and counts["charge"] > 1 and counts["nowhere"] == 0
        nobody = PostgresSearchStore(conn, Reader(principal="nobody"))
        assert nobody.term_counts("code", terms) == (0, dict.fromkeys(terms, 0))
