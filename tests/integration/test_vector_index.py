"""Resident vectors (retrieval/vector_index.py): the in-memory copy of the vec0 table
finds what sqlite-vec finds and follows every write, on a real index file."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import apsw
import numpy as np
import pytest
from vector_workspace import FILES

from codesift.embedding import Embedder, fill_vectors
from codesift.embedding.vectors import quantize
from codesift.indexer import IndexSummary
from codesift.retrieval import Searcher, SearchRequest
from codesift.retrieval.streams import StreamFilters, resident_vector_stream, vector_stream
from codesift.retrieval.vector_index import PREFILTER_MIN, VectorIndex
from codesift.store.database import open_reader
from codesift.store.sqlite.search import SqliteSearchStore
from codesift.store.vector_stamps import next_vectors_stamp, vector_counters

pytestmark = pytest.mark.usefixtures("git_isolation")

MakeRepo = Callable[..., Path]
IndexWorkspace = Callable[..., tuple[apsw.Connection, IndexSummary]]


def _write_vectors(conn: apsw.Connection, vectors: dict[int, np.ndarray], layer: str) -> None:
    with conn:
        stamp = next_vectors_stamp(conn)
        for cid, vector in vectors.items():
            conn.execute("DELETE FROM chunk_vectors WHERE chunk_id = ?", (cid,))
            conn.execute(
                "INSERT INTO chunk_vectors (chunk_id, layer, embedding) VALUES (?, ?, vec_int8(?))",
                (cid, layer, quantize(vector[None, :])[0].tobytes()),
            )
            conn.execute(
                "INSERT OR REPLACE INTO embedded (chunk_id, text_hash, stamp) VALUES (?, 0, ?)",
                (cid, stamp),
            )


def _clustered(rng: np.random.Generator, n: int) -> np.ndarray:
    """Unit vectors around 40 centres, like embeddings of related code."""
    centres = rng.normal(size=(40, 384))
    vectors = centres[rng.integers(0, 40, n)] + 0.9 * rng.normal(size=(n, 384))
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def test_resident_search_matches_the_exact_knn(tmp_path: Path) -> None:
    from codesift.store.database import open_database

    conn = open_database(tmp_path / "index.db")
    rng = np.random.default_rng(11)
    n = 4 * PREFILTER_MIN  # enough that the sign-bit prefilter leaves most out
    vectors = _clustered(rng, n)
    _write_vectors(conn, {i + 1: v for i, v in enumerate(vectors[: n // 2])}, "summary")
    _write_vectors(conn, {i + 1: v for i, v in enumerate(vectors[n // 2 :], n // 2)}, "code")
    index = VectorIndex()
    index.load(conn)
    assert len(index) == n and index.nbytes > n * 384

    stored = quantize(vectors).astype(np.float32)
    unit = stored / np.linalg.norm(stored, axis=1, keepdims=True)
    recalls = []
    for q in range(30):
        query = vectors[q * 50] + 0.02 * rng.normal(size=384).astype(np.float32)  # |noise| ~0.4
        query /= np.linalg.norm(query)
        exact = np.argsort(-(unit @ query), kind="stable")[:10] + 1
        found = index.search(conn, query, 10, ("summary", "code"))
        assert found[0][0] == q * 50 + 1  # the perturbed vector's source comes first
        assert all(a[1] >= b[1] for a, b in itertools.pairwise(found))
        recalls.append(len({cid for cid, _ in found} & set(exact.tolist())) / 10)
    assert np.mean(recalls) >= 0.95

    # Layers filter: only code vectors (the second half) come back.
    code_only = index.search(conn, vectors[0], 50, ("code",))
    assert code_only and all(cid > n // 2 for cid, _ in code_only)
    # An id constraint (what a time filter becomes) is honoured.
    allowed = np.array([5, 6, 7, 3000], np.int64)
    assert {cid for cid, _ in index.search(conn, vectors[0], 10, ("summary", "code"), allowed)} == {
        5,
        6,
        7,
        3000,
    }


def test_resident_index_follows_writes_and_removals(tmp_path: Path) -> None:
    from codesift.store.database import open_database

    conn = open_database(tmp_path / "index.db")
    rng = np.random.default_rng(3)
    vectors = _clustered(rng, 200)
    _write_vectors(conn, {i + 1: v for i, v in enumerate(vectors[:100])}, "summary")
    reader = open_reader(tmp_path / "index.db")
    index = VectorIndex()
    assert index.search(reader, vectors[0], 1, ("summary",))[0][0] == 1

    # New vectors written by another connection are found by the next search.
    _write_vectors(conn, {150: vectors[150]}, "summary")
    assert index.search(reader, vectors[150], 1, ("summary",))[0][0] == 150
    # A re-embedded chunk: its new vector replaces the old one.
    _write_vectors(conn, {1: vectors[199]}, "summary")
    assert index.search(reader, vectors[199], 1, ("summary",))[0][0] == 1
    hits = dict(index.search(reader, vectors[0], 200, ("summary",)))
    assert hits.get(1, 0.0) < 0.9  # its old vector is gone
    assert len(index) == 101

    # Removals (as the writer and the stale-vector sweep record them) drop out.
    from codesift.store.vector_stamps import bump_vectors_removed

    before = vector_counters(conn)
    with conn:
        conn.execute("DELETE FROM chunk_vectors WHERE chunk_id IN (2, 3)")
        conn.execute("DELETE FROM embedded WHERE chunk_id IN (2, 3)")
        bump_vectors_removed(conn)
    assert vector_counters(conn)[1] == before[1] + 1
    found = {cid for cid, _ in index.search(reader, vectors[2], 200, ("summary",))}
    assert 2 not in found and 3 not in found and len(found) == 99

    # Another index file in this one's place (counters start again): a full reload.
    other = open_database(tmp_path / "other.db")
    _write_vectors(other, {7: vectors[7]}, "summary")
    assert [cid for cid, _ in index.search(other, vectors[7], 10, ("summary",))] == [7]
    assert len(index) == 1


EmbeddedRepo = tuple[Path, apsw.Connection]


@pytest.fixture
def embedded_repo(
    make_repo: MakeRepo, index_workspace: IndexWorkspace, embedder: Embedder
) -> EmbeddedRepo:
    """FILES in a git repository, indexed, with summary and doc vectors."""
    root = make_repo(FILES)
    conn, _ = index_workspace(root)
    fill_vectors(conn, embedder, layers=("summary", "doc"))
    return root, conn


def test_searcher_with_resident_vectors_answers_like_sqlite_vec(
    embedded_repo: EmbeddedRepo, index_workspace: IndexWorkspace, embedder: Embedder
) -> None:
    root, conn = embedded_repo
    request = SearchRequest("give a rejected credit card payment another go", top_k=3)
    plain = Searcher(conn, embedder=embedder).search(request)
    with Searcher(conn, embedder=embedder, vector_index=VectorIndex()) as resident:
        assert resident.load_vectors()
        answer = resident.search(request)

        def vector_ranks(response: object) -> list[tuple[str, int]]:
            return [
                (r.path, h.rank)
                for r in response.results  # type: ignore[attr-defined]
                for h in r.provenance
                if h.stream == "vector"
            ]

        assert vector_ranks(answer) == vector_ranks(plain) != []
        assert [r.path for r in answer.results] == [r.path for r in plain.results]

        # An edit followed by a fill reaches the resident copy without a reload.
        charges = root / "billing" / "charges.py"
        charges.write_text(
            charges.read_text().replace(
                "Try a declined credit card payment again with exponential backoff",
                "Open a TCP listener socket for incoming network connections",
            )
        )
        index_workspace(root)
        fill_vectors(conn, embedder, layers=("summary", "doc"))
        moved = resident.search(SearchRequest("accept incoming network connections", top_k=5))
        hits = {r.path for r in moved.results for h in r.provenance if h.stream == "vector"}
        assert "billing/charges.py" in hits


def test_a_definition_found_by_its_summary_is_shown_with_its_code(
    embedded_repo: EmbeddedRepo, embedder: Embedder
) -> None:
    _, conn = embedded_repo
    searcher = Searcher(conn, embedder=embedder)
    # No word of the query is in the code: only the summary's vector finds it.
    query = "ask the bank to process a refused purchase another time"
    found = searcher.search(SearchRequest(query, top_k=3))
    charges = next(r for r in found.results if r.path == "billing/charges.py")
    assert {h.stream for h in charges.provenance} == {"vector"}
    assert charges.layer == "code" and "def retry_failed_charge" in charges.snippet
    # Asked for summaries only, the summary is what comes back.
    summaries = searcher.search(SearchRequest(query, top_k=3, layers=("summary",)))
    assert summaries.results and {r.layer for r in summaries.results} == {"summary"}


def test_streams_agree_between_sqlite_vec_and_resident_copy(
    embedded_repo: EmbeddedRepo, embedder: Embedder
) -> None:
    _, conn = embedded_repo
    query = embedder.embed_query("declined card payment")
    filters = StreamFilters(("summary",), languages=("python",))
    by_sqlite = vector_stream(
        SqliteSearchStore(conn), quantize(query[None, :])[0].tobytes(), filters, 5
    )
    by_memory = resident_vector_stream(SqliteSearchStore(conn), VectorIndex(), query, filters, 5)
    assert [cid for cid, _ in by_memory] == [cid for cid, _ in by_sqlite] != []
    assert all(abs(a[1] - b[1]) < 0.02 for a, b in zip(by_memory, by_sqlite, strict=True))
