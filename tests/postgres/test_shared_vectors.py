"""The servers' shared search with query vectors, over a real PostgreSQL: the
language server and the MCP server (real processes over stdio) answer a prose
question whose words appear nowhere in the answer, from a repository that only
the shared index holds, through its vector stream; the query vector is compared
with the vectors of the models of its vector space (the static model is fitted to
MiniLM's: each query meets both) and never with another model's (a repository
whose vectors such a model made contributes no vector hit); a query embedder that
cannot be made, or
vectors the database role may not read, leave the other streams answering."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg
import pytest

from codesift.config import SearchSettings
from codesift.embedding import Embedder
from codesift.embedding.vectors import quantize
from codesift.engine.postgres import index_into, open_shared_search
from codesift.engine.shared_overlay import SharedIndex
from codesift.errors import EmbeddingError
from codesift.retrieval.request import SearchRequest
from codesift.store.filters import SearchFilters
from codesift.store.postgres import search as pg_search

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lsp"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "mcp"))
from harness import LspSession, make_workspace
from mcp_harness import McpSession
from test_lsp_shared import BILLING, BILLING_KEY, VAULT, VAULT_KEY, WEB, WEB_KEY

pytestmark = pytest.mark.usefixtures("git_isolation")

# No word of it is in the vault's code or README (rotate_master_key: "Rotate the
# master encryption key of the vault"): only a vector finds it.
PROSE = "swap out the cryptographic secret on a schedule"
VECTOR_STREAMS = {"vector", "vector_doc"}
STATIC = {"embedding": {"model": "static"}}


def minilm(embedder: Embedder) -> dict[str, Any]:
    """Settings that make all-MiniLM-L6-v2 vectors in the foreground, with the
    session's model folder (built once per test run)."""
    return {
        "embedding": {
            "model": "minilm",
            "static_first": False,
            "cache_dir": str(embedder.cache_dir),
            "max_tokens": embedder.max_tokens,
        }
    }


@pytest.fixture
def vector_repos(pg_dsn: str, tmp_path: Path, embedder: Embedder) -> dict[str, Path]:
    """The vault's vectors made by the static model, the web's by MiniLM; the
    billing folder (opened by the servers) is not in the shared index."""
    roots = {
        BILLING_KEY: make_workspace(tmp_path / "billing", BILLING),
        VAULT_KEY: make_workspace(tmp_path / "vault", VAULT),
        WEB_KEY: make_workspace(tmp_path / "web", WEB),
    }
    for key, overrides in ((VAULT_KEY, STATIC), (WEB_KEY, minilm(embedder))):
        report = index_into(pg_dsn, roots[key], repo=key, vectors=True, overrides=overrides)
        assert report.vectors is not None and report.vectors.failed is None
        assert report.shared.rows["vectors"] > 0
    return roots


def int8(vector: npt.NDArray[np.float32]) -> bytes:
    """A query vector as the vector stream hands it to a store."""
    return bytes(quantize(vector[None, :])[0].tobytes())


def models_by_repo(dsn: str) -> dict[str, set[str]]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT r.key, v.model FROM chunk_vectors v JOIN repos r ON r.id = v.repo_id"
        ).fetchall()
    found: dict[str, set[str]] = {}
    for key, model in rows:
        found.setdefault(str(key), set()).add(str(model))
    return found


def repo_of_chunks(dsn: str, chunk_ids: list[int]) -> set[str]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT DISTINCT r.key FROM chunks c JOIN repos r ON r.id = c.repo_id"
            " WHERE c.id = ANY(%s)",
            [chunk_ids],
        ).fetchall()
    return {str(r[0]) for r in rows}


def test_query_vectors_meet_the_vectors_of_their_space_only(
    pg_dsn: str, vector_repos: dict[str, Path], embedder: Embedder
) -> None:
    static = Embedder(model="static")
    models = models_by_repo(pg_dsn)
    assert models[VAULT_KEY] == {static.model_id}
    assert models[WEB_KEY] and models[WEB_KEY] <= set(embedder.query_models)
    assert set(static.query_models) == set(embedder.query_models)
    layers = ("code", "summary", "doc")
    everything = SearchFilters(layers)

    def repos_hit(query_embedder: Embedder) -> set[str]:
        with open_shared_search(pg_dsn, embedder=query_embedder, parallel=False) as shared:
            # k above every vector in view: a kNN returns the k nearest however far,
            # so a vector of a model left out would be among them if compared.
            hits = shared.store.nearest_chunks(
                int8(query_embedder.embed_query(PROSE)), layers, 200, everything
            )
            return repo_of_chunks(pg_dsn, [cid for cid, _ in hits])

    # Static and MiniLM vectors answer both kinds of query, as the local tiers do.
    assert repos_hit(static) == {VAULT_KEY, WEB_KEY}
    assert repos_hit(embedder) == {VAULT_KEY, WEB_KEY}
    # The web's vectors as if another model (of another space) had made them.
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(
            "UPDATE chunk_vectors SET model = 'another-model-384'"
            " WHERE repo_id = (SELECT id FROM repos WHERE key = %s)",
            [WEB_KEY],
        )
    for query_embedder in (static, embedder):
        assert repos_hit(query_embedder) == {VAULT_KEY}
        with open_shared_search(pg_dsn, embedder=query_embedder, parallel=False) as shared:
            page = shared.search(SearchRequest(PROSE, top_k=20))
        assert all(
            not ({h.stream for h in r.provenance} & VECTOR_STREAMS)
            for r in page.results
            if r.path.startswith(WEB_KEY + "/")
        )
    # The store without a model compares every vector of that size.
    with open_shared_search(pg_dsn, parallel=False) as unfiltered:
        hits = unfiltered.store.nearest_chunks(
            int8(static.embed_query(PROSE)), layers, 200, everything
        )
        assert repo_of_chunks(pg_dsn, [cid for cid, _ in hits]) == {VAULT_KEY, WEB_KEY}


def test_feedback_runs_beside_the_vectors_when_the_lexical_best_stands_out(
    pg_dsn: str, vector_repos: dict[str, Path], embedder: Embedder
) -> None:
    """As locally: with query vectors (static or MiniLM's), a lexical best that
    stands out and at most `feedback_vectors_max_chunks` code chunks in view, the
    feedback stream runs beside the vector streams; over a larger index, or when the
    lexical best does not stand out enough, not."""
    # rotate_master_key holds most of its words, derive_master_key a few.
    question = "rotate the master encryption key of the vault from its seed bytes"

    def streams(query_embedder: Embedder, settings: SearchSettings | None = None) -> set[str]:
        with open_shared_search(
            pg_dsn, embedder=query_embedder, settings=settings, parallel=False
        ) as shared:
            page = shared.search(SearchRequest(question, top_k=10))
        assert {s.stream for s in page.streams if s.candidates} & VECTOR_STREAMS
        return {s.stream for s in page.streams}

    static = Embedder(model="static")
    assert "feedback" in streams(static)
    assert "feedback" in streams(embedder)
    none = replace(SearchSettings(), feedback_vectors_max_chunks=0)
    assert "feedback" not in streams(static, none)
    picky = replace(SearchSettings(), feedback_vectors_ratio=1000.0)
    assert "feedback" not in streams(embedder, picky)


def test_a_query_embedder_that_cannot_be_made_leaves_the_other_streams(
    pg_dsn: str, vector_repos: dict[str, Path]
) -> None:
    def broken() -> Embedder | None:
        raise EmbeddingError("the embedding model package is not installed")

    shared = SharedIndex(pg_dsn, embedder=broken)
    try:
        found = shared.search(SearchRequest("rotate_master_key", top_k=5))
    finally:
        shared.close()
    assert found.status.state == "ok"
    assert found.pages and found.keys[found.pages[0].folder] == VAULT_KEY
    assert {s.stream for s in found.streams} == {
        "lexical",
        "lexical_doc",
        "symbol",
        "exact",
        "path",
    }


def server_options(dsn: str) -> dict[str, Any]:
    return {
        "embeddings": True,
        "watch": False,
        **STATIC,
        "index": {"backend": "postgres", "dsn": dsn, "repo": BILLING_KEY},
    }


@pytest.fixture
def lsp_sessions(tmp_path: Path) -> Iterator[list[LspSession]]:
    started: list[LspSession] = []
    yield started
    for lsp in started:
        assert lsp.close() == 0, (tmp_path / "server.log").read_text()


def start_lsp(started: list[LspSession], folder: Path, dsn: str, log: Path) -> LspSession:
    lsp = LspSession([folder], server_options(dsn), log_file=log)
    started.append(lsp)
    lsp.start()
    lsp.wait_ready()
    return lsp


def shared_streams(reply: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["stream"]: s for s in reply["streams"] if s["source"] == "shared"}


def test_the_language_server_answers_prose_from_shared_vectors(
    pg_dsn: str, vector_repos: dict[str, Path], lsp_sessions: list[LspSession], tmp_path: Path
) -> None:
    lsp = start_lsp(lsp_sessions, vector_repos[BILLING_KEY], pg_dsn, tmp_path / "server.log")
    reply: dict[str, Any] = lsp.request("codesift/search", {"query": PROSE, "top_k": 20})
    assert reply["shared"]["state"] == "ok"
    assert sorted(reply["shared"]["repositories"]) == [VAULT_KEY, WEB_KEY]
    streams = shared_streams(reply)
    assert streams["vector"]["error"] is None and streams["vector"]["candidates"] > 0
    shared = [r for r in reply["results"] if r["source"] == "shared"]
    first = shared[0]
    assert first["repo"] == VAULT_KEY and first["path"] in ("vault/keys.py", "README.md")
    assert first["uri"] is None
    assert {p["stream"] for p in first["provenance"]} <= VECTOR_STREAMS
    assert any(r["qualified_name"].endswith("rotate_master_key") for r in shared)
    # Its words still find it.
    header = lsp.request("codesift/search", {"query": "parse_http_header"})
    assert header["results"][0]["repo"] == WEB_KEY


def test_the_language_server_reports_the_shared_streams_of_an_empty_page(
    pg_dsn: str, vector_repos: dict[str, Path], lsp_sessions: list[LspSession], tmp_path: Path
) -> None:
    lsp = start_lsp(lsp_sessions, vector_repos[BILLING_KEY], pg_dsn, tmp_path / "server.log")
    # Words in no repository, and a path filter no shared file passes: no shared result.
    reply: dict[str, Any] = lsp.request(
        "codesift/search", {"query": "zqxwv plorbt", "paths": ["nowhere/**"]}
    )
    assert reply["shared"]["state"] == "ok"
    assert not [r for r in reply["results"] if r["source"] == "shared"]
    streams = shared_streams(reply)
    assert {"lexical", "symbol"} <= set(streams)
    assert all(s["folder"] is None for s in streams.values())


@pytest.fixture
def role_without_vectors(pg_dsn: str, vector_repos: dict[str, Path]) -> Iterator[str]:
    """A login role that may read every table but the vectors; its DSN."""
    role = f"novec_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN")
        conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
        conn.execute(f"REVOKE SELECT ON chunk_vectors FROM {role}")
    try:
        yield pg_dsn.replace("postgres:@", f"{role}:@", 1)
    finally:
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute(f"DROP OWNED BY {role}")
            conn.execute(f"DROP ROLE {role}")


def test_vectors_that_fail_leave_the_shared_words_answering(
    vector_repos: dict[str, Path],
    role_without_vectors: str,
    lsp_sessions: list[LspSession],
    tmp_path: Path,
) -> None:
    lsp = start_lsp(
        lsp_sessions, vector_repos[BILLING_KEY], role_without_vectors, tmp_path / "server.log"
    )
    reply: dict[str, Any] = lsp.request("codesift/search", {"query": "rotate_master_key"})
    assert reply["shared"]["state"] == "ok"
    top = reply["results"][0]
    assert top["repo"] == VAULT_KEY and top["qualified_name"].endswith("rotate_master_key")
    error = shared_streams(reply)["vector"]["error"]
    assert "permission denied" in error and "\n" not in error and "Traceback" not in error
    # The next search reads the shared index as before (the failure was the stream's).
    again = lsp.request("codesift/search", {"query": "parse_http_header"})
    assert again["shared"]["state"] == "ok" and again["results"][0]["repo"] == WEB_KEY


@pytest.fixture
def mcp_sessions() -> Iterator[list[McpSession]]:
    started: list[McpSession] = []
    yield started
    for session in started:
        session.close()


def test_the_mcp_server_answers_prose_from_shared_vectors(
    pg_dsn: str, vector_repos: dict[str, Path], mcp_sessions: list[McpSession], tmp_path: Path
) -> None:
    root = vector_repos[BILLING_KEY]
    (root / ".codesift.toml").write_text(
        '[embedding]\nmodel = "static"\n\n'
        f'[index]\nbackend = "postgres"\ndsn = "{pg_dsn}"\nrepo = "{BILLING_KEY}"\n',
        encoding="utf-8",
    )
    mcp = McpSession(root, log_file=tmp_path / "mcp.log")
    mcp_sessions.append(mcp)
    mcp.start()
    data = mcp.data("search", {"query": PROSE, "top_k": 20})
    assert data["shared"]["state"] == "ok"
    streams = {s["stream"]: s for s in data["streams"] if s["source"] == "shared"}
    assert streams["vector"]["error"] is None and streams["vector"]["candidates"] > 0
    shared = [r for r in data["results"] if r["source"] == "shared"]
    assert shared[0]["repo"] == VAULT_KEY
    assert {p["stream"] for p in shared[0]["provenance"]} <= VECTOR_STREAMS
    hit = next(r for r in shared if r["qualified_name"].endswith("rotate_master_key"))
    assert hit["cite"].startswith(f"{VAULT_KEY}/vault/keys.py:")


def doc_indexes(dsn: str) -> list[str]:
    with psycopg.connect(dsn) as conn:
        return [
            str(r[0])
            for r in conn.execute(
                "SELECT indexname FROM pg_indexes WHERE indexname LIKE 'chunk_vectors_hnsw_%'"
                " ORDER BY indexname"
            )
        ]


def test_doc_sections_have_an_hnsw_index_of_their_own(
    pg_dsn: str, vector_repos: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert doc_indexes(pg_dsn) == ["chunk_vectors_hnsw_384", "chunk_vectors_hnsw_384_doc"]
    static = Embedder(model="static")
    query = int8(static.embed_query("what does the vault keep"))
    docs = SearchFilters(("doc",))
    with open_shared_search(pg_dsn, embedder=static, parallel=False) as shared:
        exact = shared.store.nearest_chunks(query, ["doc"], 10, docs)
        assert exact and VAULT_KEY in repo_of_chunks(pg_dsn, [cid for cid, _ in exact])
        monkeypatch.setattr(pg_search, "EXACT_KNN_MAX", 0)  # through the HNSW indexes
        walked = shared.store.nearest_chunks(query, ["doc"], 10, docs)
        assert [cid for cid, _ in walked] == [cid for cid, _ in exact]
    # A database made before the doc index gets it from the next run, even one
    # that writes nothing.
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("DROP INDEX chunk_vectors_hnsw_384_doc")
    again = index_into(pg_dsn, vector_repos[VAULT_KEY], repo=VAULT_KEY, overrides=STATIC)
    assert again.shared.rows_written == 0
    assert doc_indexes(pg_dsn) == ["chunk_vectors_hnsw_384", "chunk_vectors_hnsw_384_doc"]
