"""On-device embeddings and the vector stream: the real model (offline), a real
sqlite-vec table, re-embedding only what changed."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterator
from pathlib import Path

import apsw
import numpy as np
import pytest
from vector_workspace import FILES

from codesift.embedding import Embedder, fill_vectors, vector_coverage
from codesift.embedding.model import (
    BATCH_ATTENTION,
    BATCH_TOKENS,
    CLOSE_MATCH,
    FASTEMBED_NAME,
    token_batches,
)
from codesift.embedding.vectors import compact_vectors, quantize, vector_slots
from codesift.indexer import IndexSummary
from codesift.retrieval import Searcher, SearchRequest
from codesift.retrieval.fusion import close_match_weight
from codesift.store.database import open_database, scalar

pytestmark = pytest.mark.usefixtures("git_isolation")

MakeRepo = Callable[..., Path]
IndexWorkspace = Callable[..., tuple[apsw.Connection, IndexSummary]]


def test_embedder_runs_offline_and_gives_unit_vectors(
    embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    vectors = embedder.embed(
        ["retry a declined card payment", "try a failed charge again", "parse an XML file"]
    )
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)
    # Paraphrases are closer than unrelated text.
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2]) + 0.1
    query = embedder.embed_query("retry a declined card payment")
    assert query.shape == (384,)


def test_the_model_runs_in_a_session_whose_threads_sleep_between_runs(
    embedder: Embedder,
) -> None:
    import onnxruntime as ort

    embedder.embed_query("load the model")
    session = embedder._load().model.model
    assert isinstance(session, ort.InferenceSession)
    options = session.get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert options.get_session_config_entry("session.inter_op.allow_spinning") == "0"
    # A text embeds alike alone and padded in a batch with a longer one.
    alone = embedder.embed(["retry a declined card payment"])[0]
    padded = embedder.embed(
        ["retry a declined card payment", "parse the configuration file and return its settings"]
    )[0]
    assert float(alone @ padded) > 0.999


def test_batches_are_cut_so_their_padded_size_is_bounded() -> None:
    assert token_batches([], 32) == []
    assert token_batches([10] * 5, 32) == [(0, 5)]
    assert token_batches([10] * 5, 2) == [(0, 2), (2, 4), (4, 5)]
    # 8 texts of 256 tokens fit the token bound, but only 4 the attention bound.
    assert token_batches([256] * 10, 32) == [(0, 4), (4, 8), (8, 10)]
    lengths = [5, 12, 40, 64, 64, 90, 128, 128, 200, 256, 256, 256, 600, 20, 3]
    batches = token_batches(lengths, 32)
    assert batches[0][0] == 0 and batches[-1][1] == len(lengths)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(batches))
    for start, stop in batches:
        widest = max(lengths[start:stop])
        if stop - start > 1:
            assert (stop - start) * widest <= BATCH_TOKENS
            assert (stop - start) * widest * widest <= BATCH_ATTENTION
    assert (12, 13) in batches  # longer than any bound: a batch of its own


def test_vectors_equal_those_of_fastembeds_own_session(embedder: Embedder, tmp_path: Path) -> None:
    """The export's batch session (no constant folding, no memory pattern, batches
    cut by padded size), where the fused graph cannot be built, computes what
    fastembed's own session computes, in one batch of 32."""
    from fastembed import TextEmbedding

    embedder = Embedder(embedder.cache_dir, max_tokens=embedder.max_tokens, fused_batches=False)

    texts = [
        "retry a declined card payment",
        "def split_headings(document):\n    return document.split('#')",
        "Listen opens a TCP socket and accepts incoming network connections. " * 20,
        "x",
        "parse the configuration file and return its settings " * 6,
    ] * 8
    reference = TextEmbedding(
        FASTEMBED_NAME,
        cache_dir=str(tmp_path / "fastembed"),
        specific_model_path=str(embedder.model_dir()),
    )
    old = np.asarray(list(reference.embed(texts, batch_size=32)), dtype=np.float32)
    new = embedder.embed(texts)
    assert new.shape == old.shape == (len(texts), 384)
    # Cut into several batches of different widths by the padded-size bounds.
    assert len(token_batches(embedder.token_counts(texts), embedder.batch_size)) > 1
    cosine = (new * old).sum(axis=1)
    assert cosine.min() >= 0.9999, cosine.min()
    assert np.abs(new - old).max() < 1e-3


def test_quantize_keeps_direction() -> None:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(20, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    q = quantize(vectors).astype(np.float32)
    assert q.dtype == np.float32 and np.abs(q).max() == 127
    cosine = (q * vectors).sum(axis=1) / np.linalg.norm(q, axis=1)
    assert cosine.min() > 0.999


def test_vectors_fill_search_and_follow_edits(
    make_repo: MakeRepo, index_workspace: IndexWorkspace, embedder: Embedder
) -> None:
    root = make_repo(FILES)
    conn, _ = index_workspace(root)
    layers = ("summary", "doc")
    before = vector_coverage(conn, layers)
    assert before.embedded == 0 and before.embeddable > 0

    filled = fill_vectors(conn, embedder, layers=layers)
    after = vector_coverage(conn, layers)
    assert filled == before.embeddable
    assert after.embedded == after.embeddable and after.ratio == 1.0
    assert scalar(conn, "SELECT count(*) FROM chunk_vectors") == filled
    # Nothing left to do: a second fill embeds nothing.
    assert fill_vectors(conn, embedder, layers=layers) == 0

    searcher = Searcher(conn, embedder=embedder)
    response = searcher.search(
        SearchRequest("give a rejected credit card payment another go", top_k=3)
    )
    vector_hits = [
        (r.path, h.rank, h.score)
        for r in response.results
        for h in r.provenance
        if h.stream == "vector"
    ]
    assert vector_hits, response.results
    # No query word occurs in the function: the vector stream finds it.
    charges = next(r for r in response.results if r.path == "billing/charges.py")
    assert any(h.stream == "vector" and h.rank <= 2 for h in charges.provenance)
    # Found through its summary, shown with its code.
    assert charges.layer == "code" and "def retry_failed_charge" in charges.snippet
    assert all(-1.0 <= score <= 1.0 for _, _, score in vector_hits)  # 1 - cosine distance
    assert any(s.stream == "vector" and s.error is None for s in response.streams)
    # The vector streams' weight follows how close their best match is (MiniLM's
    # queries): reported per stream, between weight_vector and weight_vector_close.
    settings = searcher.settings
    weights = {s.stream: s.weight for s in response.streams}
    _, best_rank, best = min(vector_hits, key=lambda hit: hit[1])
    assert best_rank == 1
    expected = close_match_weight(
        best, CLOSE_MATCH["minilm"], settings.weight_vector, settings.weight_vector_close
    )
    assert weights["vector"] == pytest.approx(expected)
    assert weights["vector_doc"] == pytest.approx(expected * settings.weight_doc)
    assert weights["lexical"] == settings.weight_lexical
    assert settings.weight_vector <= expected <= settings.weight_vector_close
    # The static model's similarities are not calibrated: its queries keep one weight.
    assert embedder.close_match == CLOSE_MATCH["minilm"]
    assert Embedder(model="static").close_match is None

    # Filters apply to the vector stream too.
    go_only = searcher.search(
        SearchRequest("accept incoming network connections", top_k=5, languages=("go",))
    )
    assert go_only.results and {r.language for r in go_only.results} == {"go"}

    # Editing one file re-embeds only that file's changed chunks.
    charges = root / "billing" / "charges.py"
    charges.write_text(charges.read_text().replace("exponential backoff", "a fixed delay"))
    index_workspace(root)
    stale = vector_coverage(conn, layers)
    assert stale.embeddable - stale.embedded == 1  # the summary of retry_failed_charge
    assert fill_vectors(conn, embedder, layers=layers) == 1

    # Deleting a file removes its vectors.
    (root / "text" / "markdown.py").unlink()
    index_workspace(root)
    fill_vectors(conn, embedder, layers=layers)
    assert (
        scalar(conn, "SELECT count(*) FROM chunk_vectors") == vector_coverage(conn, layers).embedded
    )
    orphans = scalar(
        conn,
        "SELECT count(*) FROM embedded e LEFT JOIN chunks c ON c.id = e.chunk_id"
        " WHERE c.id IS NULL",
    )
    assert orphans == 0


def test_searcher_without_embedder_has_no_vector_stream(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    root = make_repo(FILES)
    conn, _ = index_workspace(root)
    response = Searcher(conn).search(SearchRequest("retry_failed_charge"))
    assert {s.stream for s in response.streams} == {
        "lexical",
        "lexical_doc",
        "symbol",
        "exact",
        "path",
    }
    # billing/ has no __init__.py, so the module path starts at `charges`.
    assert response.results[0].qualified_name == "charges.retry_failed_charge"


def test_the_vector_table_is_rewritten_without_the_slots_of_deleted_vectors(
    tmp_path: Path,
) -> None:
    conn = open_database(tmp_path / "index.db")
    rng = np.random.default_rng(7)
    vectors = {i: rng.integers(-127, 128, 384, dtype=np.int8).tobytes() for i in range(1, 4001)}
    with conn:
        conn.executemany(
            "INSERT INTO chunk_vectors (chunk_id, layer, embedding) VALUES (?, ?, vec_int8(?))",
            [(i, "summary" if i % 2 else "code", v) for i, v in vectors.items()],
        )
    assert vector_slots(conn) == (4000, 4096)
    assert not compact_vectors(conn)  # 96 unused slots: nothing to gain
    with conn:
        conn.executemany(
            "DELETE FROM chunk_vectors WHERE chunk_id = ?", [(i,) for i in range(1, 4001, 3)]
        )
    kept = {i: v for i, v in vectors.items() if i % 3 != 1}
    assert vector_slots(conn) == (len(kept), 4096)
    query = "SELECT chunk_id, distance FROM chunk_vectors WHERE embedding MATCH vec_int8(?)"
    query += " AND k = 50 AND layer IN ('code', 'summary')"
    probe = rng.integers(-127, 128, 384, dtype=np.int8).tobytes()
    before = conn.execute(query, (probe,)).fetchall()

    assert compact_vectors(conn)

    assert vector_slots(conn) == (len(kept), 3072)  # 2,667 vectors in 3 chunks of 1,024
    rows = conn.execute("SELECT chunk_id, layer, embedding FROM chunk_vectors").fetchall()
    assert {cid: bytes(emb) for cid, _, emb in rows} == kept
    assert all(layer == ("summary" if cid % 2 else "code") for cid, layer, _ in rows)
    assert conn.execute(query, (probe,)).fetchall() == before
    assert not compact_vectors(conn)
    conn.close()


class WriteGuard:
    """A batch guard that records its entries and whether an embedding ran inside
    it; it yields False (stop) from entry `stop_at` on."""

    def __init__(self, embedder: Embedder, stop_at: int | None = None) -> None:
        self.entries = 0
        self.inside = False
        self.embedded_inside = False
        self.stop_at = stop_at
        self._embed = embedder.embed

    def embed(self, texts: object) -> object:
        self.embedded_inside |= self.inside
        return self._embed(texts)  # type: ignore[arg-type]

    @contextlib.contextmanager
    def __call__(self) -> Iterator[bool]:
        self.entries += 1
        if self.stop_at is not None and self.entries >= self.stop_at:
            yield False
            return
        self.inside = True
        try:
            yield True
        finally:
            self.inside = False


def test_each_batch_is_written_inside_the_guard_and_a_false_guard_stops_the_fill(
    make_repo: MakeRepo,
    index_workspace: IndexWorkspace,
    embedder: Embedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = make_repo(FILES)
    conn, _ = index_workspace(root)
    layers = ("code", "summary", "doc")
    embeddable = vector_coverage(conn, layers).embeddable
    assert embeddable > 4

    # A guard that says stop on its third entry (the stale-vector sweep, the first
    # batch, then the second): one batch written, not the second.
    stopping = WriteGuard(embedder, stop_at=3)
    monkeypatch.setattr(embedder, "embed", stopping.embed)
    filled = fill_vectors(conn, embedder, layers=layers, batch_size=2, batch_guard=stopping)
    assert filled == 2 and stopping.entries == 3
    assert scalar(conn, "SELECT count(*) FROM chunk_vectors") == 2
    assert scalar(conn, "SELECT count(*) FROM embedded") == 2

    # Entered around every write only (the sweep, each batch, the compaction); the
    # rest is filled.
    guard = WriteGuard(embedder)
    monkeypatch.setattr(embedder, "embed", guard.embed)
    progress: list[tuple[int, int]] = []
    filled = fill_vectors(
        conn,
        embedder,
        layers=layers,
        batch_size=2,
        batch_guard=guard,
        progress=lambda done, total: progress.append((done, total)),
    )
    assert filled == embeddable - 2
    assert guard.entries - 2 == len(progress) == -(-filled // 2)
    assert not guard.embedded_inside
    assert vector_coverage(conn, layers).ratio == 1.0


def test_a_guard_that_says_stop_at_once_writes_nothing(
    make_repo: MakeRepo, index_workspace: IndexWorkspace, embedder: Embedder
) -> None:
    conn, _ = index_workspace(make_repo(FILES))
    stopped = WriteGuard(embedder, stop_at=1)
    assert fill_vectors(conn, embedder, batch_size=2, batch_guard=stopped) == 0
    assert stopped.entries == 1
    assert scalar(conn, "SELECT count(*) FROM embedded") == 0


def test_the_fill_reads_pending_chunks_a_page_at_a_time(
    make_repo: MakeRepo,
    index_workspace: IndexWorkspace,
    embedder: Embedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Pages of pending ids are read one after another (keyset by id), never all
    at once: with batch_size 1 a page holds 16 chunks."""
    from codesift.store.reader import chunk_rows

    files = {
        f"pkg/mod{i}.py": "".join(
            f"def function_{i}_{j}(value):\n    return value + {j}\n\n" for j in range(10)
        )
        for i in range(4)
    }
    root = make_repo(files)
    conn, _ = index_workspace(root)
    pages: list[int] = []

    def counting_rows(conn: apsw.Connection, ids: list[int]) -> object:
        pages.append(len(ids))
        return chunk_rows(conn, ids)

    monkeypatch.setattr("codesift.embedding.vectors.chunk_rows", counting_rows)
    embeddable = vector_coverage(conn, ("summary",)).embeddable
    assert embeddable == 40
    cache_size = scalar(conn, "PRAGMA cache_size")
    assert fill_vectors(conn, embedder, layers=("summary",), batch_size=1) == 40
    assert pages == [16, 16, 8]
    # The fill runs with a small page cache and gives the connection its own back.
    assert scalar(conn, "PRAGMA cache_size") == cache_size
    assert vector_coverage(conn, ("summary",)).ratio == 1.0
    # max_chunks caps the pages too.
    with conn:
        conn.execute("DELETE FROM embedded")
        conn.execute("DELETE FROM chunk_vectors")
    pages.clear()
    assert fill_vectors(conn, embedder, layers=("summary",), batch_size=1, max_chunks=20) == 20
    assert pages == [16, 4]


def test_routing_measures_a_minilm_query_against_minilm_vectors_only(
    make_repo: MakeRepo, index_workspace: IndexWorkspace, embedder: Embedder
) -> None:
    from codesift.store.route_centroids import NEIGHBOURS, neighbour_similarity

    query = embedder.embed_query("give a rejected credit card payment another go")
    minilm_root = make_repo(FILES, name="minilm")
    conn, _ = index_workspace(minilm_root)
    db_path = Path(conn.filename)
    assert neighbour_similarity(db_path, conn, query) is None  # no vectors yet
    fill_vectors(conn, embedder, layers=("summary", "doc"))
    near = neighbour_similarity(db_path, conn, query)
    assert near is not None and 0.3 < near <= 1.0
    # The mean of the NEIGHBOURS best cosines: below the best one alone.
    best = Searcher(conn, embedder=embedder).search(
        SearchRequest("give a rejected credit card payment another go")
    )
    top = max(h.score for r in best.results for h in r.provenance if h.stream == "vector")
    assert NEIGHBOURS > 1 and near <= top + 1e-3

    static_root = make_repo(FILES, name="static")
    static_conn, _ = index_workspace(static_root)
    fill_vectors(static_conn, Embedder(model="static"), layers=("summary", "doc"))
    assert neighbour_similarity(Path(static_conn.filename), static_conn, query) is None


def test_routing_takes_an_index_size_off_its_nearest_chunks(
    make_repo: MakeRepo, index_workspace: IndexWorkspace, embedder: Embedder
) -> None:
    import functools
    import math

    from codesift.engine.route import route_sources
    from codesift.retrieval.routing import (
        NEIGHBOUR_SIZE_PENALTY,
        SourceProfile,
        neighbour_semantic,
        route_terms,
        score_pool,
    )
    from codesift.store.route_centroids import (
        cached_centroids,
        neighbour_similarity,
        vectors_are_minilm,
    )
    from codesift.store.route_profile import IndexEvidence, chunk_total

    question = "give a rejected credit card payment another go"
    query = embedder.embed_query(question)
    # The same files, and in `large` forty more functions about something else.
    filler = "".join(
        f'def tint_{i}(pixel):\n    """Shift the hue of pixel by {i} degrees."""\n'
        f"    return pixel + {i}\n\n\n"
        for i in range(40)
    )
    evidence: dict[str, IndexEvidence] = {}
    profiles: list[SourceProfile] = []
    for name, files in (("small", FILES), ("large", {**FILES, "paint/hues.py": filler})):
        conn, _ = index_workspace(make_repo(files, name=name))
        fill_vectors(conn, embedder, layers=("summary", "doc"))
        db_path = Path(conn.filename)
        evidence[name] = IndexEvidence(
            conn,
            topics=functools.partial(cached_centroids, db_path, conn),
            neighbours=functools.partial(neighbour_similarity, db_path, conn),
            minilm=functools.partial(vectors_are_minilm, db_path, conn),
        )
        profiles.append(
            SourceProfile(name, "repository", (("name", name),), chunks=chunk_total(conn))
        )
    sizes = {p.name: p.chunks for p in profiles}
    assert sizes["large"] > sizes["small"] > 0
    # The large index holds every vector of the small one and more: its nearest
    # chunks are at least as close, whatever the question.
    near = {name: e.neighbours(query) for name, e in evidence.items()}
    assert near["small"] is not None and near["large"] is not None
    assert near["large"] >= near["small"] - 1e-6

    semantic = neighbour_semantic(query, evidence)
    assert semantic is not None and semantic.size_penalty == NEIGHBOUR_SIZE_PENALTY
    adjusted = semantic.adjusted(sizes)
    for name, size in sizes.items():
        expected = semantic.scores[name] - NEIGHBOUR_SIZE_PENALTY * math.log(size)
        assert adjusted[name] == pytest.approx(expected)
    # A route through the real indexes orders them with that evidence; the
    # confidence stays the formula's.
    routed = route_sources(question, profiles, evidence=evidence, query_embedder=embedder)
    terms = route_terms(question)
    expected_order = score_pool(
        terms, profiles, 3, keep_unmatched=False, evidence=evidence, semantic=semantic
    )
    assert [m.name for m in routed.repositories] == [m.name for m in expected_order]
    formula = score_pool(terms, profiles, 3, keep_unmatched=False, evidence=evidence)
    assert {m.name: m.confidence for m in routed.repositories} == {
        m.name: m.confidence for m in formula
    }
