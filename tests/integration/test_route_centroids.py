"""Topic centroids of a real index's chunk vectors (codesift.store.route_centroids)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from codesift.engine import Engine, Workspace
from codesift.store.database import open_database
from codesift.store.route_centroids import REFRESH_SHARE, cached_centroids, vector_centroids
from codesift.store.vectors import delete_vectors, write_vectors
from conftest import MakeRepo
from routing_corpus import NO_VECTORS

FILES = {
    "README.md": "# Jobs\n\nRuns background jobs.\n",
    "jobs/run.py": "".join(f"def step_{i}(job):\n    return job + {i}\n\n\n" for i in range(8))
    + "def renew(job):\n    # renew the lease on the job with a heartbeat\n    return job\n",
}


def int8_row(direction: np.ndarray, noise: float, rng: np.random.Generator) -> bytes:
    vector = direction + noise * rng.standard_normal(direction.shape)
    vector = vector / np.abs(vector).max() * 127
    return np.round(vector).astype(np.int8).tobytes()


def chunk_ids(db_path: Path) -> list[int]:
    conn = open_database(db_path, readonly=True)
    try:
        return [int(r[0]) for r in conn.execute("SELECT id FROM chunks ORDER BY id")]
    finally:
        conn.close()


def test_centroids_find_the_topics_of_the_vectors_and_follow_their_changes(
    make_repo: MakeRepo, git_isolation: None
) -> None:
    ws = Workspace.at(make_repo(FILES, name="jobs"))
    with Engine(ws, quiet=True) as engine:
        engine.reindex(vectors=False)
    ids = chunk_ids(ws.db_path)
    assert len(ids) >= 8
    rng = np.random.default_rng(7)
    east, north, up = np.eye(384)[0], np.eye(384)[1], np.eye(384)[2]

    conn = open_database(ws.db_path)
    try:
        assert vector_centroids(conn) is None  # no vectors: no topics
        assert cached_centroids(ws.db_path, conn) is None
        half = len(ids) // 2
        rows = [
            (cid, "summary", int8_row(east if i < half else north, 0.05, rng), i)
            for i, cid in enumerate(ids)
        ]
        write_vectors(conn, rows, "test-model")
        two = vector_centroids(conn, k=2)
        assert two is not None and two.shape == (2, 384)
        assert np.allclose(np.linalg.norm(two, axis=1), 1.0, atol=1e-5)
        # one centroid per direction, each close to it
        assert sorted(int(np.argmax(c[:2])) for c in two) == [0, 1]
        assert float((two @ east).max()) > 0.95 and float((two @ north).max()) > 0.95
        assert np.array_equal(two, vector_centroids(conn, k=2))  # seeded: the same again

        first = cached_centroids(ws.db_path, conn)
        assert first is not None
        assert cached_centroids(ws.db_path, conn) is first  # kept while nothing changes
        # A few vectors written since (at most REFRESH_SHARE of them): still kept, as
        # during a fill that writes a batch every second.
        few = max(1, int(REFRESH_SHARE * len(ids)))
        write_vectors(conn, [(c, "summary", int8_row(up, 0.05, rng), 0) for c in ids[:few]], "m")
        assert cached_centroids(ws.db_path, conn) is first
        # Every vector rewritten toward a third direction: computed again.
        write_vectors(conn, [(cid, "summary", int8_row(up, 0.05, rng), 0) for cid in ids], "m")
        again = cached_centroids(ws.db_path, conn)
        assert again is not None and again is not first
        # (as many centroids as vectors here: each is one noisy vector)
        assert float((again @ up).min()) > 0.5 and float((first @ up).max()) < 0.3
        # A removed vector: computed again at once (no centroid of a vector gone).
        delete_vectors(conn, ids[:1])
        after_removal = cached_centroids(ws.db_path, conn)
        assert after_removal is not None and after_removal is not again
    finally:
        conn.close()


def test_route_orders_folders_the_words_tie_on_by_their_topics(
    make_repo: MakeRepo, git_isolation: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from codesift.embedding.static_model import load_table
    from codesift.engine.route_folders import route
    from codesift.store.vectors import chunk_text_hashes

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    question = "renew the lease on a job with a heartbeat"
    toward = load_table().embed([question])[0]
    folders = []
    for name, direction in (("alpha", -toward), ("beta", toward)):
        ws = Workspace.at(make_repo({**FILES, ".codesift.toml": NO_VECTORS}, name=name))
        with Engine(ws, quiet=True) as engine:
            engine.reindex(vectors=False)
        ids = chunk_ids(ws.db_path)
        conn = open_database(ws.db_path)
        try:
            hashes = chunk_text_hashes(conn, ids)
            rng = np.random.default_rng(3)
            rows = [(c, "summary", int8_row(direction, 0.01, rng), hashes[c]) for c in ids]
            write_vectors(conn, rows, "test-model")
        finally:
            conn.close()
        folders.append(ws)
    # The same files: the words tie (same confidence, same term counts, same probe).
    result = route(question, folders)
    assert [m.name for m in result.repositories] == ["beta", "alpha"]
    assert result.repositories[0].confidence == result.repositories[1].confidence
