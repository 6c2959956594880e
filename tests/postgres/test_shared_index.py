"""The shared index on a real PostgreSQL: indexing a git repository through
codesift's own indexer and mirroring it, searching through the shared search
code, incremental updates, git time filters, a second repository, and access
control inside every statement."""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest

import codesift.store.postgres.mirror as mirror
import codesift.store.postgres.search as pg_search
from codesift.embedding import Embedder
from codesift.engine import Workspace, reindex
from codesift.engine.postgres import (
    SharedIndexReport,
    index_into,
    mirror_local,
    open_shared_search,
)
from codesift.errors import ConfigError
from codesift.retrieval.request import SearchRequest
from codesift.retrieval.search import Searcher
from codesift.store.database import open_reader
from codesift.store.filters import SearchFilters
from codesift.store.postgres import (
    PostgresSearchStore,
    Reader,
    add_member,
    add_principal,
    disable_row_security,
    enable_row_security,
    grant,
    migrate,
)
from codesift.store.postgres.schema import ID_SPAN, MIGRATIONS, repo_of

pytestmark = pytest.mark.usefixtures("git_isolation")

NO_VECTORS = {"embedding": {"enabled": False}}

APP = {
    "billing/retry.py": (
        "import time\n\n\n"
        "class RetryPolicy:\n"
        '    """How a failed charge is retried: exponential backoff."""\n\n'
        "    def __init__(self, attempts: int = 5) -> None:\n"
        "        self.attempts = attempts\n\n"
        "    def next_delay(self, attempt: int) -> float:\n"
        "        return 2.0 ** attempt\n\n\n"
        "def retry_failed_charge(charge, policy: RetryPolicy) -> bool:\n"
        "    for attempt in range(policy.attempts):\n"
        "        if charge.submit():\n"
        "            return True\n"
        "        time.sleep(policy.next_delay(attempt))\n"
        "    return False\n"
    ),
    "billing/invoice.py": (
        "class Invoice:\n"
        '    """An invoice with line items and a total."""\n\n'
        "    def __init__(self, items: list[float]) -> None:\n"
        "        self.items = items\n\n"
        "    def total_amount(self) -> float:\n"
        "        return sum(self.items)\n"
    ),
    "http/server.py": (
        "def parse_http_header(line: str) -> tuple[str, str]:\n"
        '    """Split one HTTP header line into its name and value."""\n'
        "    name, _, value = line.partition(':')\n"
        "    return name.strip().lower(), value.strip()\n\n\n"
        "def serve_forever(port: int) -> None:\n"
        "    header = parse_http_header('Host: example')\n"
        "    print(port, header)\n"
    ),
    "docs/billing.md": (
        "# Billing\n\nCharges that fail are retried with exponential backoff.\n\n"
        "## Invoices\n\nEvery invoice lists its items and computes a total.\n"
    ),
}

SECRET = {
    "vault/keys.py": (
        "def rotate_master_key(vault) -> None:\n"
        '    """Rotate the master encryption key of the vault."""\n'
        "    vault.key = derive_master_key(vault.seed)\n\n\n"
        "def derive_master_key(seed: bytes) -> bytes:\n"
        "    return seed[::-1]\n"
    ),
    "README.md": "# Vault\n\nKeeps the master encryption key.\n",
}


def commit_at(root: Path, message: str, when: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", message], cwd=root, check=True, env=env)


@pytest.fixture
def app(make_repo: Any) -> Path:
    root: Path = make_repo(APP, name="app", commit=False)
    commit_at(root, "initial", "2021-03-01T12:00:00+00:00")
    return root


@pytest.fixture
def shared(pg_dsn: str, app: Path) -> SharedIndexReport:
    return index_into(pg_dsn, app, repo="acme/app@main", overrides=NO_VECTORS)


def local_paths(root: Path, request: SearchRequest) -> list[str]:
    conn = open_reader(root / ".codesift" / "index.db")
    try:
        with Searcher(conn, parallel=False) as searcher:
            return [r.path for r in searcher.search(request).results]
    finally:
        conn.close()


def shared_paths(dsn: str, request: SearchRequest, **kwargs: Any) -> list[str]:
    with open_shared_search(dsn, **kwargs) as search:
        return [r.path for r in search.search(request).results]


@pytest.fixture
def pg(pg_dsn: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        migrate(conn)
        yield conn


def test_migrations_are_recorded_once(pg: psycopg.Connection[Any]) -> None:
    assert migrate(pg) == MIGRATIONS[-1].version
    rows = pg.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
    assert rows == [(m.version, m.name) for m in MIGRATIONS]


def test_index_writes_every_file_then_nothing(pg_dsn: str, app: Path) -> None:
    first = index_into(pg_dsn, app, repo="acme/app@main", overrides=NO_VECTORS).shared
    assert first.files_added == len(APP)
    assert first.rows["nodes"] > 0 and first.rows["chunks"] > 0 and first.rows["edges"] > 0
    assert first.rows["commits"] == 1
    with psycopg.connect(pg_dsn) as conn:
        # The full-text statistics are the counts a search would otherwise make.
        stats = conn.execute(
            "SELECT layer, lexeme, chunks FROM term_stats WHERE lexeme IN ('retry', 'self')"
        ).fetchall()
        assert stats
        for layer, lexeme, chunks in stats:
            row = conn.execute(
                "SELECT count(*) FROM chunks WHERE layer = %s AND tsv @@ %s::tsquery",
                (layer, f"'{lexeme}'"),
            ).fetchone()
            assert row is not None and row[0] == chunks
        sizes = conn.execute(
            "SELECT s.layer, s.chunks, s.tokens, count(c.id), sum(c.tokens) FROM layer_stats s"
            " JOIN chunks c ON c.repo_id = s.repo_id AND c.layer = s.layer"
            " GROUP BY s.layer, s.chunks, s.tokens"
        ).fetchall()
        assert {r[0] for r in sizes} == {"code", "ast", "doc"}
        assert all(r[1] == r[3] and r[2] == r[4] for r in sizes)
    again = index_into(pg_dsn, app, repo="acme/app@main", overrides=NO_VECTORS).shared
    assert (again.files_added, again.files_replaced, again.files_deleted) == (0, 0, 0)
    assert again.files_unchanged == len(APP)
    assert again.rows_written == 0


@pytest.mark.parametrize(
    "query",
    [
        "RetryPolicy",
        "retry a failed charge",
        "parse_http_header",
        "http header",
        "invoice total",
        "exponential backoff",
        "header = parse_http_header('Host: example')",  # a pasted line: the exact stream
        "server.py",  # a file's name: the path stream
        "billing/invoice.py",
    ],
)
def test_same_ranked_paths_as_the_local_index(
    pg_dsn: str, app: Path, shared: SharedIndexReport, query: str
) -> None:
    request = SearchRequest(query, top_k=5)
    expected = local_paths(app, request)
    assert expected
    assert shared_paths(pg_dsn, request) == expected


def test_a_new_commit_rewrites_only_the_changed_file(
    pg_dsn: str, app: Path, shared: SharedIndexReport
) -> None:
    path = app / "billing" / "invoice.py"
    path.write_text(path.read_text() + "\n    def tax(self) -> float:\n        return 0.2\n")
    commit_at(app, "tax", "2024-06-01T12:00:00+00:00")
    summary = index_into(pg_dsn, app, repo="acme/app@main", overrides=NO_VECTORS).shared
    assert (summary.files_added, summary.files_replaced, summary.files_deleted) == (0, 1, 0)
    assert summary.files_unchanged == len(APP) - 1
    with psycopg.connect(pg_dsn) as conn:
        (nodes,) = conn.execute(
            "SELECT count(*) FROM nodes n JOIN files f ON f.id = n.file_id WHERE f.path = %s",
            ("billing/invoice.py",),
        ).fetchone() or (0,)
        (chunks,) = conn.execute(
            "SELECT count(*) FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = %s",
            ("billing/invoice.py",),
        ).fetchone() or (0,)
    # Exactly the changed file's rows, and the new commit.
    assert summary.rows["files"] == 1
    assert summary.rows["nodes"] == nodes
    assert summary.rows["chunks"] == chunks
    assert summary.rows["commits"] == 1
    assert shared_paths(pg_dsn, SearchRequest("tax", top_k=3))[0] == "billing/invoice.py"

    (app / "http" / "server.py").unlink()
    commit_at(app, "no server", "2024-07-01T12:00:00+00:00")
    summary = index_into(pg_dsn, app, repo="acme/app@main", overrides=NO_VECTORS).shared
    assert summary.files_deleted == 1
    assert summary.files_replaced == 0
    assert shared_paths(pg_dsn, SearchRequest("parse_http_header", top_k=5)) == []


def test_time_filters_run_in_each_stream(pg_dsn: str, app: Path, shared: SharedIndexReport) -> None:
    (app / "billing" / "refund.py").write_text(
        "def refund_failed_charge(charge) -> None:\n    charge.refund()\n"
    )
    commit_at(app, "refunds", "2024-06-01T12:00:00+00:00")
    index_into(pg_dsn, app, repo="acme/app@main", overrides=NO_VECTORS)
    for window in (
        {"since": "2024-01-01"},
        {"until": "2022-01-01"},
        {"as_of": "2022-01-01"},
    ):
        request = SearchRequest("failed charge", top_k=10, **window)  # type: ignore[arg-type]
        got = shared_paths(pg_dsn, request)
        assert got == local_paths(app, request), window
        assert got
        if "since" in window:
            assert set(got) == {"billing/refund.py"}
        else:
            assert "billing/refund.py" not in got
    newest = open_shared_search(pg_dsn)
    try:
        response = newest.search(SearchRequest("refund_failed_charge", top_k=1))
        history = response.results[0].history
        assert history is not None and history.source == "git" and history.subject == "refunds"
    finally:
        newest.close()


@pytest.fixture
def two_repos(pg_dsn: str, app: Path, make_repo: Any) -> Path:
    secret: Path = make_repo(SECRET, name="secret", commit=False)
    commit_at(secret, "vault", "2022-01-01T12:00:00+00:00")
    index_into(pg_dsn, app, repo="acme/app@main", overrides=NO_VECTORS)
    index_into(pg_dsn, secret, repo="acme/secret@main", overrides=NO_VECTORS)
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        add_member(conn, "devs", "ana")
        add_principal(conn, "bob")
        assert grant(conn, "devs", "acme/app@main")
        assert not grant(conn, "devs", "acme/nothing@main")
    return secret


def test_a_second_repository_under_its_own_key(pg_dsn: str, two_repos: Path) -> None:
    request = SearchRequest("master encryption key", top_k=5)
    # The role's own view: both repositories, paths under their keys.
    both = shared_paths(pg_dsn, request)
    assert both[0] == "acme/secret@main/vault/keys.py"
    only = shared_paths(pg_dsn, request, repos=["acme/secret@main"])
    assert only == local_paths(two_repos, request)
    assert shared_paths(pg_dsn, request, repos=["acme/app@main"]) == []
    with open_shared_search(pg_dsn) as search:
        assert search.repos() == ["acme/app@main", "acme/secret@main"]
        found = search.symbols("rotate_master_key")
        assert [s.node.path for s in found.exact] == ["acme/secret@main/vault/keys.py"]
        assert found.exact[0].history is not None
        assert [s.node.name for s in search.symbols("rotate_mastr_key").fuzzy][:1] == [
            "rotate_master_key"
        ]
        callers = search.callers("derive_master_key")
        assert [(callee.name, caller.name) for callee, caller, _ in callers] == [
            ("derive_master_key", "rotate_master_key")
        ]


def _secret_ids(pg_dsn: str) -> tuple[list[int], list[int]]:
    with psycopg.connect(pg_dsn) as conn:
        chunks = [
            int(r[0])
            for r in conn.execute(
                "SELECT c.id FROM chunks c JOIN repos r ON r.id = c.repo_id"
                " WHERE r.key = 'acme/secret@main'"
            )
        ]
        nodes = [
            int(r[0])
            for r in conn.execute(
                "SELECT n.id FROM nodes n JOIN repos r ON r.id = n.repo_id"
                " WHERE r.key = 'acme/secret@main'"
            )
        ]
    return chunks, nodes


@pytest.mark.parametrize("principal", ["ana", "devs", "bob", "nobody", "x' OR '1'='1"])
def test_a_principal_sees_nothing_of_a_repository_it_may_not_read(
    pg_dsn: str, two_repos: Path, principal: str
) -> None:
    may_read_app = principal in ("ana", "devs")
    with open_shared_search(pg_dsn, principal=principal) as search:
        assert search.repos() == (["acme/app@main"] if may_read_app else [])
        assert list(search.counts()) == search.repos()
        for query in ("master encryption key", "rotate_master_key", "derive master", "Vault"):
            response = search.search(SearchRequest(query, top_k=10, include_graph=True))
            assert all(not r.path.startswith(("vault/", "README")) for r in response.results)
            assert all(
                e.node.path.startswith(("billing/", "http/", "docs/"))
                for r in response.results
                for e in r.graph
            )
        app_hits = search.search(SearchRequest("retry a failed charge", top_k=5)).results
        assert bool(app_hits) == may_read_app
        # Symbols and callers, exact and similar names.
        for name in ("rotate_master_key", "derive_master_key", "rotate_master", "Vault"):
            assert all(
                s.node.path.startswith(("billing/", "http/")) for s in search.symbols(name).all
            )
        assert search.callers("derive_master_key") == []
        assert bool(search.symbols("RetryPolicy").exact) == may_read_app
        assert bool(search.callers("parse_http_header")) == may_read_app
        # Asked directly for the other repository's rows, by id or by name.
        store = search.store
        chunks, nodes = _secret_ids(pg_dsn)
        assert chunks and nodes
        assert store.chunk_rows(chunks) == {}
        assert store.chunk_places(chunks) == []
        assert store.chunk_times(chunks) == {}
        assert store.node_rows(nodes) == {}
        assert store.chunks_for_nodes(nodes, ("code", "ast", "summary")) == {}
        assert store.child_spans(nodes) == {}
        assert all(store.edges_from(n) == [] and store.edges_to(n) == [] for n in nodes)
        assert store.current_chunks(chunks, SearchFilters(("code",))) == set()
        filters = SearchFilters(("code", "doc"))
        assert store.symbol_candidates("rotate_master_key", filters, 50) == []
        assert store.lexical_hits("code", ["master", "key"], filters, 50) == []
        line = "vault.key = derive_master_key(vault.seed)"
        assert store.phrase_hits("code", line, filters, 50) == []
        app_line = "header = parse_http_header('Host: example')"
        assert bool(store.phrase_hits("code", app_line, filters, 50)) == may_read_app
        assert store.path_hits("vault/keys.py", filters, 50) == []
        assert bool(store.path_hits("http/server.py", filters, 50)) == may_read_app
        assert store.lexical_hits("doc", ["vault"], filters, 50) == []
        assert store.meta("root") in (None, str(Path(two_repos.parent / "app")))


def test_the_role_view_reaches_neighbours_the_principal_does_not(
    pg_dsn: str, two_repos: Path
) -> None:
    _, nodes = _secret_ids(pg_dsn)
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        everything = PostgresSearchStore(conn, Reader())
        calls = [e for n in nodes for e in everything.edges_from(n) if e.kind == "calls"]
        assert calls  # rotate_master_key calls derive_master_key
        ana = PostgresSearchStore(conn, Reader("ana"))
        assert all(
            ana.edges_from(e.src_id) == [] and ana.edges_to(e.dst_id or 0) == [] for e in calls
        )


def test_a_role_that_may_only_read_searches(pg_dsn: str, shared: SharedIndexReport) -> None:
    role = f"reader_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN")
        conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
    try:
        reader_dsn = pg_dsn.replace("postgres:@", f"{role}:@", 1)
        request = SearchRequest("RetryPolicy", top_k=3)
        assert shared_paths(reader_dsn, request) == shared_paths(pg_dsn, request)
    finally:
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute(f"DROP OWNED BY {role}")
            conn.execute(f"DROP ROLE {role}")


def test_a_database_without_the_schema_is_not_searched(pg_dsn: str) -> None:
    with pytest.raises(ConfigError, match="schema version 0"):
        open_shared_search(pg_dsn)


def test_vectors_are_copied_and_searched(
    pg_dsn: str, app: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = index_into(pg_dsn, app, repo="acme/app@main", vectors=True)
    assert report.vectors is not None and report.vectors.failed is None
    assert report.shared.rows["vectors"] > 0
    with psycopg.connect(pg_dsn) as conn:
        row = conn.execute("SELECT embedding_model, dims FROM repos").fetchone()
        assert row is not None and row[0] and row[1] == 384
        # Each vector records its model; the repository lists them.
        models = [str(r[0]) for r in conn.execute("SELECT DISTINCT model FROM chunk_vectors")]
        assert models and all(models)
        assert row[0] == ",".join(sorted(models))
        (hnsw,) = conn.execute(
            "SELECT count(*) FROM pg_indexes WHERE indexname = 'chunk_vectors_hnsw_384'"
        ).fetchone() or (0,)
        assert hnsw == 1
    request = SearchRequest("how is a declined payment attempted again later", top_k=5)
    with open_shared_search(pg_dsn, embedder=embedder) as shared:
        got = shared.search(request)
        store = shared.store
        # The vector stream's scores are the exact cosines of the int8 query (as the
        # local index compares it) with the local index's vectors.
        embedded = embedder.embed_query(request.query)
        query = np.round(embedded * (127.0 / np.abs(embedded).max())).astype(np.int8)
        local = open_reader(app / ".codesift" / "index.db")
        try:
            rows = local.execute(
                "SELECT v.chunk_id, v.layer, v.embedding FROM chunk_vectors v"
                " JOIN embedded e ON e.chunk_id = v.chunk_id"
                " JOIN chunks c ON c.id = e.chunk_id AND c.text_hash = e.text_hash"
            ).fetchall()
        finally:
            local.close()
        q = query.astype(np.float64)
        exact = {}
        for cid, layer, blob in rows:
            v = np.frombuffer(blob, dtype=np.int8).astype(np.float64)
            if layer != "doc":
                exact[int(cid)] = float(q @ v / np.linalg.norm(q) / np.linalg.norm(v))
        best = sorted(exact.items(), key=lambda kv: -kv[1])[:5]
        hits = store.nearest_chunks(
            bytes(query.tobytes()), ["code", "summary"], 5, SearchFilters(("code", "summary"))
        )
        assert [repo_of(cid) for cid, _ in hits] == [repo_of(hits[0][0])] * len(hits)
        assert [(cid % ID_SPAN, round(score, 5)) for cid, score in hits] == [
            (cid, round(score, 5)) for cid, score in best
        ]
        # The same through the HNSW index (used when many vectors are in view).
        monkeypatch.setattr(pg_search, "EXACT_KNN_MAX", 0)
        assert (
            store.nearest_chunks(
                bytes(query.tobytes()), ["code", "summary"], 5, SearchFilters(("code", "summary"))
            )
            == hits
        )
    assert any(h.stream == "vector" for r in got.results for h in r.provenance)


def test_row_level_security_binds_roles_whatever_sql_they_send(
    pg_dsn: str, two_repos: Path
) -> None:
    suffix = uuid.uuid4().hex[:8]
    ana, eve = f"ana_{suffix}", f"eve_{suffix}"
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        for role in (ana, eve):
            conn.execute(f"CREATE ROLE {role} LOGIN")
            conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
        add_member(conn, "devs", ana)  # devs may read acme/app@main
        enable_row_security(conn)
        enable_row_security(conn)  # again: no error
    try:
        as_ana = pg_dsn.replace("postgres:@", f"{ana}:@", 1)
        as_eve = pg_dsn.replace("postgres:@", f"{eve}:@", 1)
        with psycopg.connect(as_ana) as conn:
            keys = [r[0] for r in conn.execute("SELECT key FROM repos ORDER BY key")]
            assert keys == ["acme/app@main"]
            (other,) = conn.execute(
                "SELECT count(*) FROM chunks WHERE text LIKE '%master%'"
            ).fetchone() or (0,)
            assert other == 0
        with open_shared_search(as_ana) as search:  # no principal: the role's own view
            assert search.repos() == ["acme/app@main"]
            assert search.search(SearchRequest("master encryption key", top_k=5)).results == []
            assert search.search(SearchRequest("retry a failed charge", top_k=5)).results
        with psycopg.connect(as_eve) as conn:
            assert conn.execute("SELECT count(*) FROM nodes").fetchone() == (0,)
        with open_shared_search(as_eve) as search:
            assert search.repos() == []
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            disable_row_security(conn)
        with psycopg.connect(as_eve) as conn:
            (nodes,) = conn.execute("SELECT count(*) FROM nodes").fetchone() or (0,)
            assert nodes > 0
    finally:
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            for role in (ana, eve):
                conn.execute(f"DROP OWNED BY {role}")
                conn.execute(f"DROP ROLE {role}")


def test_ids_the_local_index_reused_move_between_files(
    pg_dsn: str, make_repo: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The local index gives new definitions the ids above its largest one, so ids
    freed at the top come back in another file; written file by file (one per
    transaction here), the file that still holds them must go first."""
    functions = "".join(f"def z_{i}():\n    return {i}\n\n\n" for i in range(5))
    root: Path = make_repo({"a.py": "def a():\n    return 0\n", "z.py": functions})
    ws = Workspace.at(root, NO_VECTORS)

    def local_run() -> None:
        _, _, conn = reindex(ws, vectors=False, quiet=True)
        conn.close()

    local_run()
    mirror_local(pg_dsn, ws.db_path, "acme/ids")
    (root / "z.py").write_text("def z_0():\n    return 0\n")
    local_run()
    (root / "a.py").write_text(
        "def a():\n    return 0\n\n\n" + "".join(f"def b_{i}():\n    pass\n\n\n" for i in range(4))
    )
    local_run()
    monkeypatch.setattr(mirror, "FILES_PER_TRANSACTION", 1)
    summary = mirror_local(pg_dsn, ws.db_path, "acme/ids")
    assert summary.files_replaced == 2
    with open_shared_search(pg_dsn) as search:
        names = sorted(s.node.name for s in search.symbols("b_1").exact)
        assert names == ["b_1"]
        assert [s.node.name for s in search.symbols("z_3").exact] == []


def test_a_generated_file_is_marked_and_ranked_as_locally(pg_dsn: str, make_repo: Any) -> None:
    root: Path = make_repo(
        {
            "src/parser.c": (
                "/* A Bison parser, made by GNU Bison 3.8.2.  */\n\n"
                "/* Report a syntax error at the offending column. */\n"
                "static void yyerror_column(int column) { report_syntax_error(column); }\n\n"
                "/* Recovery: report the syntax error, skip to the next column. */\n"
                "static void yyrecover(int column) { report_syntax_error(column); }\n"
            ),
            "src/errors.c": (
                "/* Report a syntax error with a caret under its column. */\n"
                "void report_syntax_error(int column) { print_caret(column); }\n"
            ),
        },
        name="calc",
    )
    index_into(pg_dsn, root, repo="acme/calc@main", overrides=NO_VECTORS)
    with psycopg.connect(pg_dsn) as conn:
        flags = dict(conn.execute("SELECT path, generated FROM files").fetchall())
    assert flags == {"src/parser.c": True, "src/errors.c": False}
    request = SearchRequest("report a syntax error at its column", top_k=5)
    expected = local_paths(root, request)
    assert expected[0] == "src/errors.c"
    assert shared_paths(pg_dsn, request) == expected
